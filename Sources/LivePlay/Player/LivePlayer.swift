import Foundation
import Synchronization
import LivePlayBuffering
import LivePlayCore
public import LivePlayDecode
import LivePlayTransport
public import Logging

/// The player a front end embeds, shaped after TXLivePlayer: `startPlay` / `stopPlay` / `pause` / `resume`,
/// a configuration with TXLivePlayConfig's fields and the `auto` / `speed` / `smooth` presets (changeable
/// while playing), and a listener for events and net status.
///
/// ```swift
/// let player = LivePlayer(configuration: LivePlayConfiguration(latency: .preset(.speed)))
/// player.listener = myListener
/// try player.startPlay("http://127.0.0.1:8080/live.flv")
/// …
/// await player.stopPlay()
/// ```
///
/// For Swift concurrency, ``run(url:)`` plays until the calling task is cancelled and ``updates()`` streams what the
/// listener gets. Every playback is a child of the player's run (``OwnedTasks``), which `startPlay` hands it to.
///
/// Switching streams (``switch(to:from:)``, ``switchStream(to:)``) is in LivePlayerSwitching.swift.
public final class LivePlayer: Sendable {
    /// The URL types of TXLivePlayer's `startPlay(url, type)` that liveplay plays.
    public enum URLType: Sendable, Hashable {
        /// `PLAY_TYPE_LIVE_RTMP` (0).
        case rtmp
        /// `PLAY_TYPE_LIVE_FLV` (1).
        case flv
        /// `PLAY_TYPE_VOD_FLV` (3): an FLV file over HTTP(S), played from its start, with seeking.
        case vodFLV
        /// `PLAY_TYPE_LOCAL_VIDEO` (6): a local FLV file (a path or a `file://` URL).
        case localVideo
    }

    /// Everything that changes, read and written under the player's one `Mutex`.
    struct State {
        var configuration: LivePlayConfiguration
        var listener: (any LivePlayListener)?
        var playing: OwnedTask<PlaybackOutcome>?
        var control: PlaybackControl?
        var streams: [UUID: AsyncStream<PlayerUpdate>.Continuation] = [:]
        var videoSink: HeldSink<any VideoSink>
        var audioSink: HeldSink<any AudioSink>
        /// What a front end set while playing or before, kept for the next playback too.
        var settings = PlaybackSettings()
        var lastPicture: VideoFrame?
        /// What the playback running (or the last) made known of itself last.
        var playbackState = PlaybackState()
        /// The running playback's way to the sinks, closed the moment the player switches to another stream.
        var gate: SinkGate?
        /// A `switchStream` waiting for its rendition.
        var switching: OwnedTask<Void>?
        /// A LAS manifest's renditions, while the playback started from one runs.
        var renditions: RenditionPlayback?
    }

    let state: Mutex<State>
    /// The player's run: its playbacks and a `switchStream`'s wait are children of it.
    let tasks = OwnedTasks()
    let logger: Logger
    private let arrivalTap: (any ArrivalTap)?
    /// The clock playbacks run on: the real one, or a test's virtual one.
    let clock: any SessionClock
    /// The player's own reading of ``clock``: when a switch was asked for, how long it took.
    let time: Stopwatch

    /// - Parameters:
    ///   - videoSink, audioSink: where decoded pictures and sound go (none: monitoring only). They are called
    ///     on the play loop (the session's own thread, `liveplay-play`) and must return quickly; they are used
    ///     by one playback at a time.
    ///   - arrivalTap: receives every read of the transport as the play loop takes it (``ArrivalTraceFile``
    ///     records an arrival trace); on the play loop too.
    ///   - clock: what playbacks pace, tick and time out by: the real clock, or a virtual one a test steps (a
    ///     file then plays in a moment, with the same figures every run).
    public init(
        configuration: LivePlayConfiguration = LivePlayConfiguration(), videoSink: (any VideoSink)? = nil,
        audioSink: (any AudioSink)? = nil, arrivalTap: (any ArrivalTap)? = nil, clock: any SessionClock = ContinuousClock(),
        logger: Logger = Logger(label: "liveplay")
    ) {
        state = Mutex(
            State(configuration: configuration, videoSink: HeldSink(videoSink), audioSink: HeldSink(audioSink)))
        self.arrivalTap = arrivalTap
        self.clock = clock
        time = clock.stopwatch()
        self.logger = logger
    }

    /// Receives events and net status; set it before `startPlay`. Held strongly until replaced.
    public var listener: (any LivePlayListener)? {
        get { state.withLock { $0.listener } }
        set { state.withLock { $0.listener = newValue } }
    }

    /// TXLivePlayConfig's fields. Set before playing; while playing, its latency parameters take effect at once
    /// (the rest at the next `startPlay`).
    public var configuration: LivePlayConfiguration {
        get { state.withLock { $0.configuration } }
        set {
            let control = state.withLock {
                $0.configuration = newValue
                return $0.control
            }
            control?.send(.latency(newValue.latency))
        }
    }

    /// Delivers SEI messages of `payloadType` (or stops delivering them) from the next `startPlay` on, as
    /// TXLivePlayer V2's `enableReceiveSeiMessage`: ``LivePlayConfiguration/seiPayloadTypes``.
    public func enableReceiveSeiMessage(_ enable: Bool, payloadType: Int) {
        state.withLock {
            if enable {
                $0.configuration.seiPayloadTypes.insert(payloadType)
            } else {
                $0.configuration.seiPayloadTypes.remove(payloadType)
            }
        }
    }

    /// What the playback running (or the last one) is, as its play loop last made it known: paused, volume and
    /// layout, tracks, the timeline. Also delivered to ``LivePlayListener/onStateChange(_:)`` when it changes.
    public var playbackState: PlaybackState { state.withLock { $0.playbackState } }

    /// Whether a playback started by ``startPlay(_:type:)`` is running.
    public var isPlaying: Bool { state.withLock { $0.playing != nil } }

    /// Starts playing `url` in the background; events and status go to the listener and to ``updates()``.
    /// Stops a playback already running first.
    ///
    /// - Parameter type: checked against the URL when given; otherwise inferred from the scheme.
    /// - Throws: ``LivePlayError`` for a URL that is not HTTP(S)-FLV or RTMP(S), or that does not match `type`.
    public func startPlay(_ url: String, type: URLType? = nil) throws(LivePlayError) {
        let kind: StreamURL.Kind
        do {
            kind = try StreamURL.kind(of: url)
        } catch {
            throw LivePlayError(.unsupportedURL, error.message)
        }
        let expected: StreamURL.Kind? = type.map {
            switch $0 {
            case .rtmp: .rtmp
            case .flv, .vodFLV: .httpFLV
            case .localVideo: .file
            }
        }
        guard expected == nil || expected == kind else {
            throw LivePlayError(.unsupportedURL, "\(Redaction.url(url)) is not a \(type.map { "\($0)" } ?? "") URL")
        }
        let previous = state.withLock { $0.playing }
        previous?.cancel()
        let task = tasks.start { [self] in
            _ = await previous?.value
            return await playback(url: url, switchedAt: nil)
        }
        state.withLock {
            $0.playing = task
            $0.renditions = nil
        }
    }

    /// Stops playing and waits until the play loop has ended (the session summary has been delivered).
    public func stopPlay() async {
        let task = state.withLock { state in
            defer { state.playing = nil }
            state.switching?.cancel()
            return state.playing
        }
        task?.cancel()
        _ = await task?.value
    }

    /// TXLivePlayer's `snapshot`: the picture shown last (sharing the decoder's buffer, no copy), or `nil`
    /// before the first. ``SnapshotSink`` writes one as a PNG.
    public func snapshot() -> VideoFrame? {
        state.withLock { $0.control?.lastPicture ?? $0.lastPicture }
    }

    /// A stream of what the listener gets, from now until the player is released or the consumer stops.
    /// It keeps the newest 256 updates: a consumer that falls behind loses the oldest, never stalls playback.
    public func updates() -> AsyncStream<PlayerUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: PlayerUpdate.self, bufferingPolicy: .bufferingNewest(256))
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.state.withLock { $0.streams.removeValue(forKey: id) }
        }
        state.withLock { $0.streams[id] = continuation }
        return stream
    }

    /// Plays `url` until the stream ends, an error stops it, or the calling task is cancelled; through
    /// ``switch(to:from:)`` and ``switchStream(to:)``, until the stream switched to ends.
    public func run(url: String) async -> PlaybackOutcome {
        // A URL no session can start: a session says why (its events and summary), as for any failure.
        guard (try? Self.check(url)) != nil else { return await playback(url: url, switchedAt: nil) }
        try? startPlay(url)
        return await followPlaying()
    }

    /// Waits for the playback running to end, following the switches that replace it; cancelling stops it.
    func followPlaying() async -> PlaybackOutcome {
        await withTaskCancellationHandler {
            while let task = state.withLock({ $0.playing }) {
                let outcome = await task.value
                // A switch replaced the playback: wait for the one playing now.
                if Task.isCancelled || state.withLock({ $0.playing }) === task { return outcome }
            }
            return .stopped
        } onCancel: {
            state.withLock { $0.playing }?.cancel()
        }
    }

    /// One playback of `url`, to its end.
    func playback(url: String, switchedAt: Duration?) async -> PlaybackOutcome {
        let control = PlaybackControl()
        let (stored, gate) = state.withLock { ($0.configuration, Self.attach(control, to: &$0)) }
        let configuration = switchedAt == nil ? Self.resuming(url, stored) : stored
        if let switchedAt { control.switchedTo(at: switchedAt, on: time, preloaded: false) }
        let clock = self.clock
        let outcome = await delivering(configuration) { delivery in
            return await runSession(
                on: clock, url: url, configuration: configuration, logger: logger, videoSink: gate.video,
                audioSink: gate.audio, control: control, arrivalTap: arrivalTap,
                onEvent: { delivery.post(.event($0)) }, onStatus: { delivery.post(.netStatus($0)) },
                onState: { delivery.post(.state($0)) })
        }
        detach(control)
        keepPosition(of: url, after: outcome, in: configuration.resume)
        return outcome
    }

    /// Runs `body` with a delivery to this player's listener, on a thread taken for it (the group's, when the
    /// configuration has one), and returns once everything it posted has been delivered.
    func delivering(
        _ configuration: LivePlayConfiguration, _ body: (UpdateDelivery) async -> PlaybackOutcome
    ) async -> PlaybackOutcome {
        let group = configuration.threads
        let thread = group?.take() ?? PlaybackThreads.take()
        let delivery = UpdateDelivery(on: thread) { [weak self] update in self?.deliver(update) }
        let outcome = await body(delivery)
        await delivery.finish()
        if group == nil { PlaybackThreads.giveBack(thread) }
        return outcome
    }

    /// Makes `control` the running playback's, with this player's settings. Returns the gate to the sinks it plays
    /// to.
    static func attach(_ control: PlaybackControl, to state: inout State) -> SinkGate {
        state.control = control
        control.apply(state.settings)
        state.playbackState = PlaybackState(state.settings)
        let gate = SinkGate(video: state.videoSink, audio: state.audioSink)
        state.gate = gate
        return gate
    }

    func detach(_ control: PlaybackControl) {
        state.withLock {
            if $0.control === control {
                $0.control = nil
                $0.lastPicture = control.lastPicture
            }
        }
    }

    func deliver(_ update: PlayerUpdate) {
        var update = update
        let (listener, streams, switchTo) = state.withLock {
            let switchTo = Self.followRenditions(&update, in: &$0, at: time.elapsed())
            if case .state(let playback) = update { $0.playbackState = playback }
            return ($0.listener, Array($0.streams.values), switchTo)
        }
        if let switchTo { try? switchStream(to: switchTo) }
        for stream in streams { stream.yield(update) }
        switch update {
        case .event(let event): listener?.onPlayEvent(event)
        case .netStatus(let status): listener?.onNetStatus(status)
        case .state(let playback): listener?.onStateChange(playback)
        }
    }

    deinit {
        state.withLock {
            $0.playing?.cancel()
            $0.switching?.cancel()
            for stream in $0.streams.values { stream.finish() }
        }
    }
}
