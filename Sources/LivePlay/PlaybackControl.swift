import Foundation
public import LivePlayBuffering
public import LivePlayDecode

/// Changes a playing session from any task or thread; the play loop applies the change on its next turn
/// (within one tick) and reports it as `LIVEPLAY_EVT_LATENCY_CHANGED` (9004).
///
/// `@unchecked Sendable`: every pending request and setting is read and written under `lock`.
public final class PlaybackControl: @unchecked Sendable {
    private let lock = NSLock()
    private var pendingLatency: LatencyParameters?
    private var pendingPause: Bool?
    private var pendingSeek: Duration?
    private var pendingLiveEdge = false
    private var pendingRecording: [RecordingRequest] = []
    private var pendingVideoSink: SinkChange<any VideoSink>?
    private var pendingAudioSink: SinkChange<any AudioSink>?
    private var storedVolume = 100
    private var storedMute = false
    private var storedVolumeEvaluation: Duration?
    private var storedRenderMode = RenderMode.fillEdge
    private var storedRotation = RenderRotation.rotation0
    private var storedLastPicture: VideoFrame?
    private var standby: PreloadBudget?
    private var pendingSwitch: SwitchRequest?
    private var storedStandbyBytes = 0
    private var storedStandbyStart: MediaTimestamp?
    private var storedStandbyKeyframes: [MediaTimestamp] = []
    private var storedPosterPTS: MediaTimestamp?
    private var storedLiveEdge: MediaTimestamp?
    /// Wakes the play loop from its wait for the transport or the next tick.
    private var waker: (@Sendable () -> Void)?

    public init() {}

    /// A session made to preload (``PreloadPool``): it connects, keeps its newest GOP within `budget` and a poster
    /// picture, and presents nothing until ``switchedTo(at:preloaded:)``.
    init(standby budget: PreloadBudget) {
        standby = budget
    }

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

    /// Goes to the live edge now: the buffer is dropped to its newest keyframe (`LIVEPLAY_EVT_CATCH_UP_SKIP`,
    /// 9003, with `PLAY_WARNING_VIDEO_DISCONTINUITY`). A stream on demand, or one paused or loading, ignores it.
    public func goToLiveEdge() {
        lock.withLock { pendingLiveEdge = true }
    }

    func takeLiveEdgeRequest() -> Bool {
        lock.withLock {
            defer { pendingLiveEdge = false }
            return pendingLiveEdge
        }
    }

    /// Starts recording what arrives, as it arrived (TXLivePlayer's `startRecord`): a recording already running
    /// is finished first. Reported as `LIVEPLAY_EVT_RECORD_BEGIN` / `_PROGRESS` / `_COMPLETE` (9013–9015) and,
    /// when it has to stop early, `LIVEPLAY_WARNING_RECORD_FAILED` (9102); playback is never held up by it.
    public func startRecording(_ options: RecordingOptions) {
        lock.withLock { pendingRecording.append(.start(options)) }
    }

    /// Finishes the recording (TXLivePlayer's `stopRecord`): its file is closed and reported complete.
    public func stopRecording() {
        lock.withLock { pendingRecording.append(.stop) }
    }

    func takeRecordingRequests() -> [RecordingRequest] {
        lock.withLock {
            defer { pendingRecording.removeAll() }
            return pendingRecording
        }
    }

    /// Moves media on demand to `position` (from the start of the media): playback goes on from the keyframe
    /// at or before it (`LIVEPLAY_EVT_SEEK`, 9009). A live stream ignores it.
    public func seek(to position: Duration) {
        lock.withLock { pendingSeek = max(.zero, position) }
    }

    /// Replaces where pictures go while playing (`nil`: nowhere); the next picture goes to the new sink.
    public func setVideoSink(_ sink: (any VideoSink)?) {
        lock.withLock { pendingVideoSink = SinkChange(sink: sink) }
    }

    /// Replaces where sound goes while playing (`nil`: nowhere).
    public func setAudioSink(_ sink: (any AudioSink)?) {
        lock.withLock { pendingAudioSink = SinkChange(sink: sink) }
    }

    /// TXLivePlayer's `enableAudioVolumeEvaluation`: every `interval` (at least 100 ms; nil stops it) the level
    /// of the sound played is reported as `LIVEPLAY_EVT_AUDIO_VOLUME` (9011), `volume` 0…100.
    public func enableAudioVolumeEvaluation(_ interval: Duration?) {
        lock.withLock { storedVolumeEvaluation = interval.map { max($0, .milliseconds(100)) } }
    }

    /// TXLivePlayer's `setVolume`: 0…100 (clamped), applied with a 10 ms ramp.
    public func setVolume(_ volume: Int) {
        lock.withLock { storedVolume = min(100, max(0, volume)) }
    }

    /// TXLivePlayer's `setMute`: silence without forgetting the volume.
    public func setMute(_ muted: Bool) {
        lock.withLock { storedMute = muted }
    }

    /// TXLivePlayer's `setRenderMode` / `setRenderRotation`: carried to sinks in each ``FrameTiming``.
    public func setRenderMode(_ mode: RenderMode) {
        lock.withLock { storedRenderMode = mode }
    }

    public func setRenderRotation(_ rotation: RenderRotation) {
        lock.withLock { storedRotation = rotation }
    }

    /// While preloading: what the session may hold and read (the pool changes it as streams come and go).
    var standbyBudget: PreloadBudget? {
        get { lock.withLock { standby } }
        set { lock.withLock { standby = newValue } }
    }

    /// A player switched to this session at `instant`: preloading ends, and the first picture that reaches the
    /// sink after it is reported (`LIVEPLAY_EVT_SWITCHED`) with the time since.
    func switchedTo(at instant: ContinuousClock.Instant, preloaded: Bool, rendition: Bool = false) {
        let wake = lock.withLock {
            standby = nil
            pendingSwitch = SwitchRequest(at: instant, preloaded: preloaded, rendition: rendition)
            return waker
        }
        // The poster is waiting: the loop shows it now rather than at its next tick.
        wake?()
    }

    /// What a preloading session holds in its buffer, in bytes, as of its last turn.
    var standbyBufferedBytes: Int {
        get { lock.withLock { storedStandbyBytes } }
        set { lock.withLock { storedStandbyBytes = newValue } }
    }

    /// A rendition switch (``LivePlayer/switchStream(to:)``) asks a preloading session to start at the keyframe
    /// shown at this presentation time.
    var standbyStart: MediaTimestamp? {
        get { lock.withLock { storedStandbyStart } }
        set { lock.withLock { storedStandbyStart = newValue } }
    }

    /// What a preloading session holds, as of its last turn: its keyframes' presentation times and its poster's.
    var standbyKeyframes: (keyframes: [MediaTimestamp], poster: MediaTimestamp?) {
        lock.withLock { (storedStandbyKeyframes, storedPosterPTS) }
    }

    func recordStandby(keyframes: [MediaTimestamp], poster: MediaTimestamp?) {
        lock.withLock {
            storedStandbyKeyframes = keyframes
            storedPosterPTS = poster
        }
    }

    /// The newest media the session has received (its live edge, decode time), as of its last turn.
    var liveEdge: MediaTimestamp? {
        get { lock.withLock { storedLiveEdge } }
        set { lock.withLock { storedLiveEdge = newValue } }
    }

    /// How the play loop is woken, while it runs.
    func wakes(with waker: (@Sendable () -> Void)?) {
        lock.withLock { self.waker = waker }
    }

    func takeSwitch() -> SwitchRequest? {
        lock.withLock {
            defer { pendingSwitch = nil }
            return pendingSwitch
        }
    }

    /// The last picture shown, shared with libavcodec's buffers (no copy): TXLivePlayer's `snapshot`.
    public var lastPicture: VideoFrame? { lock.withLock { storedLastPicture } }

    func recordShown(_ picture: VideoFrame) {
        lock.withLock { storedLastPicture = picture }
    }

    /// What the presenter should apply now: gain, render mode, rotation, and any sink replacements.
    func takePresentation() -> Presentation {
        lock.withLock {
            defer {
                pendingVideoSink = nil
                pendingAudioSink = nil
            }
            return Presentation(
                gain: storedMute ? 0 : Float(storedVolume) / 100, renderMode: storedRenderMode,
                rotation: storedRotation, videoSink: pendingVideoSink, audioSink: pendingAudioSink,
                volumeEvaluation: storedVolumeEvaluation)
        }
    }

    /// The seek asked for since the last call, if any.
    func takeSeek() -> Duration? {
        lock.withLock {
            defer { pendingSeek = nil }
            return pendingSeek
        }
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

/// A player's switch to a session: when it was asked for, and whether the session was preloaded.
struct SwitchRequest {
    var at: ContinuousClock.Instant
    var preloaded: Bool
    /// A switch between renditions of the same content (`switchStream`): reported as
    /// `PLAY_EVT_STREAM_SWITCH_SUCC` (2015).
    var rendition = false
}

/// A sink replacement asked for (its `sink` may be `nil`: none).
struct SinkChange<Sink> {
    var sink: Sink?
}

/// What ``PlaybackControl`` asks of the presenter on a turn of the play loop.
struct Presentation {
    var gain: Float
    var renderMode: RenderMode
    var rotation: RenderRotation
    var videoSink: SinkChange<any VideoSink>?
    var audioSink: SinkChange<any AudioSink>?
    var volumeEvaluation: Duration?
}

/// A recording asked for through ``PlaybackControl``.
enum RecordingRequest {
    case start(RecordingOptions)
    case stop
}
