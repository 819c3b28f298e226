import Foundation
public import LivePlayBuffering
import LivePlayCore
public import LivePlayDecode
import LivePlayTransport
public import Logging

/// What a ``LivePlayer`` tells its listener: the events (`onPlayEvent`) and the once-per-second status
/// (`onNetStatus`). Called serially on the player's delivery queue (a serial dispatch queue, no thread of
/// its own), never on the play loop: a slow or blocking listener delays only its own deliveries, and if it
/// falls so far behind that the delivery queue fills, the updates dropped are counted and reported
/// (`LIVEPLAY_EVT_LISTENER_OVERFLOW`).
public protocol LivePlayListener: AnyObject, Sendable {
    func onPlayEvent(_ event: PlayEvent)
    func onNetStatus(_ status: NetStatus)
}

extension LivePlayListener {
    public func onPlayEvent(_ event: PlayEvent) {}
    public func onNetStatus(_ status: NetStatus) {}
}

/// One thing a player reports, for the `async` face.
public enum PlayerUpdate: Sendable {
    case event(PlayEvent)
    case netStatus(NetStatus)
}

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
/// For Swift concurrency, ``run(url:)`` plays in the calling task (cancel it to stop) and ``updates()``
/// streams what the listener gets. `startPlay` is `run` on a task the player owns: the one task it keeps,
/// ended by `stopPlay`.
///
/// `@unchecked Sendable`: every mutable field is read and written under `lock`.
public final class LivePlayer: @unchecked Sendable {
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

    private let lock = NSLock()
    private var storedConfiguration: LivePlayConfiguration
    private var storedListener: (any LivePlayListener)?
    private var playing: Task<PlaybackOutcome, Never>?
    private var control: PlaybackControl?
    private var streams: [UUID: AsyncStream<PlayerUpdate>.Continuation] = [:]
    private let logger: Logger
    private var videoSink: (any VideoSink)?
    private var audioSink: (any AudioSink)?
    private let arrivalTap: (any ArrivalTap)?
    /// What a front end set while playing or before, kept for the next playback too.
    private var volume = 100
    private var muted = false
    private var volumeEvaluation: Duration?
    private var renderMode = RenderMode.fillEdge
    private var rotation = RenderRotation.rotation0
    private var lastPicture: VideoFrame?
    /// The running playback's way to the sinks, closed the moment the player switches to another stream.
    private var gate: SinkGate?
    /// A `switchStream` waiting for its rendition.
    private var switching: Task<Void, Never>?

    /// - Parameters:
    ///   - videoSink, audioSink: where decoded pictures and sound go (none: monitoring only). They are called
    ///     on the play loop (the session's own thread, `liveplay-play`) and must return quickly; they are used
    ///     by one playback at a time.
    ///   - arrivalTap: receives every read of the transport as the play loop takes it (``ArrivalTraceFile``
    ///     records an arrival trace); on the play loop too.
    public init(
        configuration: LivePlayConfiguration = LivePlayConfiguration(), videoSink: (any VideoSink)? = nil,
        audioSink: (any AudioSink)? = nil, arrivalTap: (any ArrivalTap)? = nil, logger: Logger = Logger(label: "liveplay")
    ) {
        storedConfiguration = configuration
        self.videoSink = videoSink
        self.audioSink = audioSink
        self.arrivalTap = arrivalTap
        self.logger = logger
    }

    /// Receives events and net status; set it before `startPlay`. Held strongly until replaced.
    public var listener: (any LivePlayListener)? {
        get { lock.withLock { storedListener } }
        set { lock.withLock { storedListener = newValue } }
    }

    /// TXLivePlayConfig's fields. Set before playing; while playing, its latency parameters take effect at once
    /// (the rest at the next `startPlay`).
    public var configuration: LivePlayConfiguration {
        get { lock.withLock { storedConfiguration } }
        set {
            let control = lock.withLock {
                storedConfiguration = newValue
                return self.control
            }
            control?.setLatency(newValue.latency)
        }
    }

    /// Switches to a latency mode's preset, also while playing.
    public func setMode(_ mode: LatencyMode) {
        configuration.latency = .preset(mode)
    }

    /// Whether a playback started by ``startPlay(_:type:)`` is running.
    public var isPlaying: Bool { lock.withLock { playing != nil } }

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
        let previous = lock.withLock { playing }
        previous?.cancel()
        let task = Task { [self] in
            _ = await previous?.value
            return await playback(url: url, switchedAt: nil)
        }
        lock.withLock { playing = task }
    }

    /// Stops playing and waits until the play loop has ended (the session summary has been delivered).
    public func stopPlay() async {
        let task = lock.withLock {
            defer { playing = nil }
            switching?.cancel()
            return playing
        }
        task?.cancel()
        _ = await task?.value
    }

    /// Holds the picture; the stream keeps arriving within the buffer's limits.
    public func pause() {
        lock.withLock { control }?.pause()
    }

    /// Goes to the live edge now, dropping the buffer to its newest keyframe (reported by
    /// `LIVEPLAY_EVT_CATCH_UP_SKIP`); only while a live stream plays.
    public func goToLiveEdge() {
        lock.withLock { control }?.goToLiveEdge()
    }

    /// Resumes at the newest media, as TXLivePlayer does for live streams; media on demand resumes where it
    /// paused.
    public func resume() {
        lock.withLock { control }?.resume()
    }

    /// Moves media on demand to `position` from its start (TXLivePlayer's `seek`): playback goes on from the
    /// keyframe at or before it. Before playing, sets where the next playback starts. A live stream ignores it.
    public func seek(to position: Duration) {
        let control = lock.withLock {
            if self.control == nil { storedConfiguration.startPosition = position }
            return self.control
        }
        control?.seek(to: position)
    }

    /// Replaces where pictures go, also while playing: the next picture goes to `sink` (`nil`: nowhere).
    public func setVideoSink(_ sink: (any VideoSink)?) {
        let gate = lock.withLock {
            videoSink = sink
            self.gate?.setVideo(sink)
            return self.gate
        }
        if let gate { lock.withLock { control }?.setVideoSink(gate.video) }
    }

    /// Replaces where sound goes, also while playing.
    public func setAudioSink(_ sink: (any AudioSink)?) {
        let gate = lock.withLock {
            audioSink = sink
            self.gate?.setAudio(sink)
            return self.gate
        }
        if let gate { lock.withLock { control }?.setAudioSink(gate.audio) }
    }

    /// TXLivePlayer's `setVolume`: 0…100, applied to the sound with a short ramp (no click).
    public func setVolume(_ volume: Int) {
        change({ $0.volume = min(100, max(0, volume)) }, then: { $0.setVolume(volume) })
    }

    /// TXLivePlayer's `enableAudioVolumeEvaluation`: every `interval` (at least 100 ms), the level of the sound
    /// played as `LIVEPLAY_EVT_AUDIO_VOLUME` (9011) with `volume` 0…100; nil turns it off.
    public func enableAudioVolumeEvaluation(_ interval: Duration?) {
        change({ $0.volumeEvaluation = interval }, then: { $0.enableAudioVolumeEvaluation(interval) })
    }

    /// TXLivePlayer's `setMute`: silences the sound and keeps the volume for when it is unmuted.
    public func setMute(_ muted: Bool) {
        change({ $0.muted = muted }, then: { $0.setMute(muted) })
    }

    /// TXLivePlayer's `setRenderMode`: carried to the video sink in every ``FrameTiming``.
    public func setRenderMode(_ mode: RenderMode) {
        change({ $0.renderMode = mode }, then: { $0.setRenderMode(mode) })
    }

    /// TXLivePlayer's `setRenderRotation`: carried to the video sink in every ``FrameTiming``.
    public func setRenderRotation(_ rotation: RenderRotation) {
        change({ $0.rotation = rotation }, then: { $0.setRenderRotation(rotation) })
    }

    /// Keeps a front end's setting for later playbacks and hands it to the one running, if any.
    private func change(_ keep: (LivePlayer) -> Void, then apply: (PlaybackControl) -> Void) {
        let control = lock.withLock {
            keep(self)
            return self.control
        }
        if let control { apply(control) }
    }

    /// TXLivePlayer's `snapshot`: the picture shown last (sharing the decoder's buffer, no copy), or `nil`
    /// before the first. ``SnapshotSink`` writes one as a PNG.
    public func snapshot() -> VideoFrame? {
        lock.withLock { control?.lastPicture ?? lastPicture }
    }

    /// A stream of what the listener gets, from now until the player is released or the consumer stops.
    /// It keeps the newest 256 updates: a consumer that falls behind loses the oldest, never stalls playback.
    public func updates() -> AsyncStream<PlayerUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: PlayerUpdate.self, bufferingPolicy: .bufferingNewest(256))
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.lock.withLock { _ = self.streams.removeValue(forKey: id) }
        }
        lock.withLock { streams[id] = continuation }
        return stream
    }

    /// Plays `url` until the stream ends, an error stops it, or the calling task is cancelled; through
    /// ``switch(to:from:)`` and ``switchStream(to:)``, until the stream switched to ends.
    public func run(url: String) async -> PlaybackOutcome {
        // A URL no session can start: a session says why (its events and summary), as for any failure.
        guard (try? Self.check(url)) != nil else { return await playback(url: url, switchedAt: nil) }
        try? startPlay(url)
        return await withTaskCancellationHandler {
            while let task = lock.withLock({ playing }) {
                let outcome = await task.value
                // A switch replaced the playback: wait for the one playing now.
                if Task.isCancelled || lock.withLock({ playing }) == task { return outcome }
            }
            return .stopped
        } onCancel: {
            lock.withLock { playing }?.cancel()
        }
    }

    /// One playback of `url`, to its end.
    private func playback(url: String, switchedAt: ContinuousClock.Instant?) async -> PlaybackOutcome {
        let control = PlaybackControl()
        let (configuration, gate) = lock.withLock { (storedConfiguration, attach(control)) }
        if let switchedAt { control.switchedTo(at: switchedAt, preloaded: false) }
        let delivery = UpdateDelivery { [weak self] update in self?.deliver(update) }
        let session = LiveSession(
            url: url, configuration: configuration, clock: ContinuousClock(), logger: logger, videoSink: gate.video,
            audioSink: gate.audio, control: control, arrivalTap: arrivalTap)
        let outcome = await session.run(
            onEvent: { delivery.post(.event($0)) }, onStatus: { delivery.post(.netStatus($0)) })
        delivery.finish()
        detach(control)
        return outcome
    }

    /// Switches to `url` (TUIPlayerShortVideo's swipe): the playback running stops showing at once, and when `pool`
    /// has `url` preloaded its poster reaches the sink on its session's next turn (within a tick) and playback
    /// goes on from there; otherwise `url` starts cold. The first picture is reported as `LIVEPLAY_EVT_SWITCHED`
    /// (9012) with the time since this call. The stream taken leaves the pool.
    ///
    /// - Throws: ``LivePlayError`` for a URL that cannot be played.
    public func `switch`(to url: String, from pool: PreloadPool? = nil) throws(LivePlayError) {
        let requestedAt = ContinuousClock.now
        try Self.check(url)
        let preloaded = pool?.take(url)
        // Nothing of the old stream reaches the sinks after this, and what a sound device still holds of it fades
        // out rather than playing on under the new stream's first picture.
        let (gate, audioSink) = lock.withLock { (self.gate, self.audioSink) }
        gate?.close()
        audioSink?.fadeOutUnplayed()
        play(url, preloaded: preloaded, switchedAt: requestedAt, rendition: false)
    }

    /// Stops the playback running and plays `preloaded` (or `url` cold) in its place.
    private func play(
        _ url: String, preloaded: PreloadPool.Entry?, switchedAt: ContinuousClock.Instant, rendition: Bool
    ) {
        let previous = lock.withLock { playing }
        previous?.cancel()
        let task = Task { [self] in
            guard let preloaded else {
                _ = await previous?.value
                return await playback(url: url, switchedAt: switchedAt)
            }
            return await adopt(preloaded, switchedAt: switchedAt, rendition: rendition)
        }
        lock.withLock { playing = task }
    }

    private static func check(_ url: String) throws(LivePlayError) {
        do {
            _ = try StreamURL.kind(of: url)
        } catch {
            throw LivePlayError(.unsupportedURL, error.message)
        }
    }

    /// How long ``switchStream(to:)`` waits for the other rendition to connect and show a keyframe it shares with
    /// the stream playing, before it gives up (`PLAY_ERR_STREAM_SWITCH_FAIL`).
    public static let streamSwitchWait = Duration.seconds(5)
    /// How far apart two renditions' live edges may be and still count as stamped alike (TXLivePlayer's
    /// `switchStream` requires PTS-aligned streams): their newest media is at most this far apart.
    public static let alignmentTolerance = Duration.seconds(1)

    /// TXLivePlayer's `switchStream`: moves playback to another rendition of the same content (another bitrate,
    /// another CDN), whose timestamps are the same as the one playing (PTS-aligned), without a gap or a repeated
    /// picture. The other rendition is preloaded alongside; the switch happens at its first keyframe that the
    /// playback has not reached yet: the stream playing is shown up to that instant, the other from its keyframe
    /// there. Success is `PLAY_EVT_STREAM_SWITCH_SUCC` (2015) with `switch_ms` and the keyframe's `pts_ms`. A
    /// rendition that cannot be reached, or whose timestamps are not within ``alignmentTolerance`` of the one
    /// playing, or that shows no keyframe ahead of the playback within ``streamSwitchWait``, is
    /// `PLAY_ERR_STREAM_SWITCH_FAIL` (−2307) with the `reason`; the stream playing goes on.
    public func switchStream(to url: String) throws(LivePlayError) {
        try Self.check(url)
        let requestedAt = ContinuousClock.now
        let task = Task { [self] in await switchRendition(to: url, requestedAt: requestedAt) }
        lock.withLock {
            switching?.cancel()
            switching = task
        }
    }

    private func switchRendition(to url: String, requestedAt: ContinuousClock.Instant) async {
        guard let (playing, gate) = lock.withLock({ control.flatMap { control in gate.map { (control, $0) } } }) else {
            return failSwitch("nothing is playing", requestedAt: requestedAt)
        }
        let (configuration, logger) = lock.withLock { (storedConfiguration, self.logger) }
        // The rendition preloads in a pool of its own, which the cut below keeps until the playback reaches it (a
        // playback that stops first lets go of the cut, and of the pool with its stream).
        let pool = PreloadPool(configuration: configuration, logger: logger)
        pool.preload(url)
        var reason = "\(Redaction.url(url)) did not connect"
        while !Task.isCancelled, ContinuousClock.now < requestedAt + Self.streamSwitchWait {
            try? await Task.sleep(for: .milliseconds(5))
            guard let candidate = pool.entry(url), candidate.isReady, let edge = candidate.control.liveEdge,
                let playingEdge = playing.liveEdge, let shown = playing.lastPicture?.pts
            else { continue }
            let apart = Duration.milliseconds(abs(edge.milliseconds - playingEdge.milliseconds))
            guard apart <= Self.alignmentTolerance else {
                reason = "the timestamps do not align: its newest media is \(apart.milliseconds) ms from this stream's"
                continue
            }
            reason = "no keyframe ahead of the playback"
            let (keyframes, poster) = candidate.control.standbyKeyframes
            // Far enough ahead that the playback does not pass it before the cut is set.
            guard let start = keyframes.first(where: { $0 > shown + .milliseconds(100) }) else { continue }
            candidate.control.standbyStart = start
            guard poster == start else { continue }
            gate.cut(at: start) { [self] in
                guard let taken = pool.take(url) else { return }
                play(url, preloaded: taken, switchedAt: requestedAt, rendition: true)
            }
            return
        }
        await pool.removeAll()
        if !Task.isCancelled { failSwitch(reason, requestedAt: requestedAt) }
    }

    /// `PLAY_ERR_STREAM_SWITCH_FAIL` to the listener: the stream playing goes on.
    private func failSwitch(_ reason: String, requestedAt: ContinuousClock.Instant) {
        let waited = (ContinuousClock.now - requestedAt).milliseconds
        deliver(
            .event(
                PlayEvent(
                    .streamSwitchFailed, "switchStream failed: \(reason)", elapsedMilliseconds: waited,
                    parameters: ["reason": .string(reason), "waited_ms": .int(waited)])))
    }

    /// Plays a preloaded stream's running session as this player's: its updates to this player's listener, this
    /// player's sinks and settings on it, then preloading ends.
    private func adopt(
        _ preloaded: PreloadPool.Entry, switchedAt: ContinuousClock.Instant, rendition: Bool
    ) async -> PlaybackOutcome {
        let control = preloaded.control
        let gate = lock.withLock { attach(control) }
        control.setVideoSink(gate.video)
        control.setAudioSink(gate.audio)
        let delivery = UpdateDelivery { [weak self] update in self?.deliver(update) }
        preloaded.route.redirect(to: { delivery.post($0) })
        control.switchedTo(at: switchedAt, preloaded: preloaded.isReady, rendition: rendition)
        let outcome = await withTaskCancellationHandler {
            await preloaded.task?.value ?? .stopped
        } onCancel: {
            preloaded.task?.cancel()
        }
        delivery.finish()
        detach(control)
        return outcome
    }

    /// Makes `control` the running playback's, with this player's settings; under `lock`. Returns the gate to the
    /// sinks it plays to.
    private func attach(_ control: PlaybackControl) -> SinkGate {
        self.control = control
        control.setVolume(volume)
        control.setMute(muted)
        control.enableAudioVolumeEvaluation(volumeEvaluation)
        control.setRenderMode(renderMode)
        control.setRenderRotation(rotation)
        let gate = SinkGate(video: videoSink, audio: audioSink)
        self.gate = gate
        return gate
    }

    private func detach(_ control: PlaybackControl) {
        lock.withLock {
            if self.control === control {
                self.control = nil
                lastPicture = control.lastPicture
            }
        }
    }

    private func deliver(_ update: PlayerUpdate) {
        let (listener, streams) = lock.withLock { (storedListener, Array(self.streams.values)) }
        for stream in streams { stream.yield(update) }
        switch update {
        case .event(let event): listener?.onPlayEvent(event)
        case .netStatus(let status): listener?.onNetStatus(status)
        }
    }

    deinit {
        playing?.cancel()
        switching?.cancel()
        for stream in streams.values { stream.finish() }
    }
}

/// Hands updates from the play loop to the listener through a bounded queue, so the loop never waits for
/// a listener. Deliveries run one at a time on a serial dispatch queue (no thread of its own: hundreds of
/// players share the system's pool). When the queue is full, net status is dropped first, then the oldest
/// events, and the count is reported in a `LIVEPLAY_EVT_LISTENER_OVERFLOW` event once the listener catches up.
///
/// `@unchecked Sendable`: the queue and its counters are read and written under `lock`; callbacks run on one serial
/// queue.
final class UpdateDelivery: @unchecked Sendable {
    static let capacity = 512

    private let lock = NSLock()
    private var queue: [PlayerUpdate] = []
    private var dropped = 0
    private var draining = false
    private let finished = DispatchGroup()
    private let dispatch = DispatchQueue(label: "liveplay.listener")
    private let deliver: @Sendable (PlayerUpdate) -> Void

    init(deliver: @escaping @Sendable (PlayerUpdate) -> Void) {
        self.deliver = deliver
    }

    /// Never blocks.
    func post(_ update: PlayerUpdate) {
        let start: Bool = lock.withLock {
            if queue.count >= Self.capacity {
                let victim = queue.firstIndex { if case .netStatus = $0 { true } else { false } } ?? 0
                queue.remove(at: victim)
                dropped += 1
            }
            queue.append(update)
            guard !draining else { return false }
            draining = true
            finished.enter()
            return true
        }
        if start { dispatch.async { [self] in drain() } }
    }

    /// Returns when everything posted so far has been delivered.
    func finish() {
        finished.wait()
    }

    private func drain() {
        while true {
            let batch: [PlayerUpdate]? = lock.withLock {
                guard !queue.isEmpty else {
                    draining = false
                    return nil
                }
                var batch = queue
                queue.removeAll(keepingCapacity: true)
                if dropped > 0 {
                    let overflow = PlayEvent(
                        .listenerOverflow, "the listener fell behind; \(dropped) updates were dropped",
                        elapsedMilliseconds: batch.first.map(Self.elapsed) ?? 0,
                        parameters: ["dropped_updates": .int(Int64(dropped))])
                    batch.insert(.event(overflow), at: 0)
                    dropped = 0
                }
                return batch
            }
            guard let batch else { break }
            for update in batch { deliver(update) }
        }
        finished.leave()
    }

    private static func elapsed(_ update: PlayerUpdate) -> Int64 {
        switch update {
        case .event(let event): event.elapsedMilliseconds
        case .netStatus(let status): status.elapsedMilliseconds
        }
    }
}
