import Foundation
public import LivePlayBuffering

/// Changes a playing session from any task or thread; the play loop applies the change on its next turn
/// (within one tick) and reports it as `LIVEPLAY_EVT_LATENCY_CHANGED` (9004).
public final class PlaybackControl: @unchecked Sendable {
    private let lock = NSLock()
    private var pendingLatency: LatencyParameters?
    private var pendingPause: Bool?

    public init() {}

    /// Switches to one of the TXLivePlayer modes while playing.
    public func setMode(_ mode: LatencyMode) {
        setLatency(.preset(mode))
    }

    /// Replaces the latency parameters (`cacheTime`, `minAutoAdjustCacheTime`, … ) while playing.
    public func setLatency(_ parameters: LatencyParameters) {
        lock.withLock { pendingLatency = parameters }
    }

    /// Holds playback (TXLivePlayer's `pause`); the stream keeps arriving within the buffer's limits.
    public func pause() {
        lock.withLock { pendingPause = true }
    }

    /// Resumes at the newest media (live `resume`), reported as `LIVEPLAY_EVT_RESUMED` then `PLAY_BEGIN`.
    public func resume() {
        lock.withLock { pendingPause = false }
    }

    /// `true` to pause, `false` to resume, `nil` when neither was asked for since the last call.
    func takePauseRequest() -> Bool? {
        lock.withLock {
            defer { pendingPause = nil }
            return pendingPause
        }
    }

    /// The change asked for since the last call, if any.
    func takeLatency() -> LatencyParameters? {
        lock.withLock {
            defer { pendingLatency = nil }
            return pendingLatency
        }
    }
}

extension LatencyMode {
    /// The mode whose preset `parameters` are, or `nil` for a custom set.
    public init?(matching parameters: LatencyParameters) {
        guard let mode = Self.allCases.first(where: { LatencyParameters.preset($0) == parameters }) else { return nil }
        self = mode
    }
}
