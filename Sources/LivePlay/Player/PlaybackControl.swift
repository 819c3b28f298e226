import Foundation
public import LivePlayCore
import LivePlayTransport
import Synchronization
public import LivePlayBuffering
public import LivePlayDecode

/// Changes a playing session from any task or thread: each call is one ``PlaybackCommand`` put in the session's
/// mailbox, which wakes the play loop (its turns follow the media, up to 100 ms apart: too late for a pause); the loop
/// empties it at the start of that turn and routes each command, in order, to the stage that carries it out
/// (``LiveSession/route(_:to:)``), reporting what it did (a latency change as `LIVEPLAY_EVT_LATENCY_CHANGED`, 9004).
///
/// What the loop makes known the other way (the live edge, what a preloading session holds, the last picture) is in
/// ``published``, written only by the loop.
public final class PlaybackControl: Sendable {
    private struct Mailbox {
        var commands: [PlaybackCommand] = []
        /// Wakes the play loop from its wait for the transport or the next thing due.
        var waker: (@Sendable () -> Void)?
        /// The budget the owner gave a preloading session last (nil once switched to): the owner's record.
        var standby: PreloadBudget?
    }

    /// What the play loop published last, and who follows it.
    private struct Publication {
        var value = PublishedPlayback()
        var followers: [UInt64: AsyncStream<PublishedPlayback>.Continuation] = [:]
        var nextFollower: UInt64 = 0
    }

    private let mailbox: Mutex<Mailbox>
    private let publication = Mutex(Publication())

    public init() {
        mailbox = Mutex(Mailbox())
    }

    /// A session made to preload (``PreloadPool``): it connects, keeps its newest GOP within `budget` and a poster
    /// picture, and presents nothing until ``switchedTo(at:preloaded:rendition:)``.
    init(standby budget: PreloadBudget) {
        mailbox = Mutex(Mailbox(commands: [.standbyBudget(budget)], standby: budget))
    }

    /// Puts `command` in the mailbox and wakes the loop: it takes it now, not when its media next falls due.
    private func send(_ command: PlaybackCommand) {
        let waker = mailbox.withLock {
            $0.commands.append(command)
            return $0.waker
        }
        waker?()
    }

    /// Everything sent since the last call, in order: the play loop's, once a turn. A turn with no command
    /// allocates nothing (emptying an array that was handed out would copy its storage).
    func takeCommands() -> [PlaybackCommand] {
        mailbox.withLock { mailbox in
            guard !mailbox.commands.isEmpty else { return [] }
            defer { mailbox.commands = [] }
            return mailbox.commands
        }
    }

    /// How the play loop is woken, while it runs.
    func wakes(with waker: (@Sendable () -> Void)?) {
        mailbox.withLock { $0.waker = waker }
    }

    /// Switches to one of the TXLivePlayer modes while playing.
    public func setMode(_ mode: LatencyMode) {
        setLatency(.preset(mode))
    }

    /// Replaces the latency parameters (`cacheTime`, `minAutoAdjustCacheTime`, … ) while playing.
    public func setLatency(_ parameters: LatencyParameters) {
        send(.latency(parameters))
    }

    /// Plays another track of a multitrack stream (Enhanced RTMP v2; nil: the default, the lowest id): video from
    /// that track's next keyframe, sound from its next packet, with no reconnect. `LIVEPLAY_EVT_TRACKS_CHANGED`
    /// (9016) says when it happened.
    public func selectTrack(_ kind: MediaKind, _ track: UInt8?) {
        send(.track(TrackSelection(kind: kind, track: track)))
    }

    /// Holds playback (TXLivePlayer's `pause`); the stream keeps arriving within the buffer's limits.
    public func pause() {
        send(.pause(true))
    }

    /// Resumes at the newest media (live `resume`), reported as `LIVEPLAY_EVT_RESUMED` then `PLAY_BEGIN`.
    public func resume() {
        send(.pause(false))
    }

    /// Goes to the live edge now: the buffer is dropped to its newest keyframe (`LIVEPLAY_EVT_CATCH_UP_SKIP`,
    /// 9003, with `PLAY_WARNING_VIDEO_DISCONTINUITY`). A stream on demand, or one paused or loading, ignores it.
    public func goToLiveEdge() {
        send(.goToLiveEdge)
    }

    /// Starts recording what arrives, as it arrived (TXLivePlayer's `startRecord`): a recording already running
    /// is finished first. Reported as `LIVEPLAY_EVT_RECORD_BEGIN` / `_PROGRESS` / `_COMPLETE` (9013–9015) and,
    /// when it has to stop early, `LIVEPLAY_WARNING_RECORD_FAILED` (9102); playback is never held up by it.
    public func startRecording(_ options: RecordingOptions) {
        send(.recording(.start(options)))
    }

    /// Finishes the recording (TXLivePlayer's `stopRecord`): its file is closed and reported complete.
    public func stopRecording() {
        send(.recording(.stop))
    }

    /// Moves media on demand to `position` (from the start of the media), or a time-shifted live stream to
    /// `position` from the start of its window (``LivePlayConfiguration/timeShift``): the picture there is shown,
    /// decoded from the keyframe at or before it (`LIVEPLAY_EVT_SEEK`, 9009). A live stream without time-shift
    /// ignores it.
    public func seek(to position: Duration) {
        send(.seek(max(.zero, position)))
    }

    /// Moves `delta` (negative: back), as ``seek(to:)`` does, from where playback is when the play loop takes it,
    /// or from the target of a seek still under way: two quick seeks by -10 s go 20 s back, in a file and in a
    /// time-shift window alike, as mpv's relative seeks do.
    public func seek(by delta: Duration) {
        send(.seekBy(delta))
    }

    /// Back to the live edge of a time-shifted stream (TXLivePlayer's `resumeLive`), at the latency mode's target;
    /// the same as ``goToLiveEdge()``.
    public func resumeLive() {
        send(.goToLiveEdge)
    }

    /// Replaces where pictures go while playing (`nil`: nowhere); the next picture goes to the new sink.
    public func setVideoSink(_ sink: (any VideoSink)?) {
        send(.videoSink(HeldSink(sink)))
    }

    /// Replaces where sound goes while playing (`nil`: nowhere).
    public func setAudioSink(_ sink: (any AudioSink)?) {
        send(.audioSink(HeldSink(sink)))
    }

    /// TXLivePlayer's `enableAudioVolumeEvaluation`: every `interval` (at least 100 ms; nil stops it) the level
    /// of the sound played is reported as `LIVEPLAY_EVT_AUDIO_VOLUME` (9011), `volume` 0…100.
    public func enableAudioVolumeEvaluation(_ interval: Duration?) {
        send(.volumeEvaluation(interval.map { max($0, .milliseconds(100)) }))
    }

    /// TXLivePlayer's `setVolume`: 0…100 (clamped), applied with a 10 ms ramp.
    public func setVolume(_ volume: Int) {
        send(.volume(min(100, max(0, volume))))
    }

    /// TXLivePlayer's `setMute`: silence without forgetting the volume.
    public func setMute(_ muted: Bool) {
        send(.mute(muted))
    }

    /// A player's settings, all at once (``LivePlayer`` gives each playback its own).
    func apply(_ settings: PlaybackSettings) {
        send(.settings(settings))
    }

    /// TXLivePlayer's `setRenderMode` / `setRenderRotation`: carried to sinks in each ``FrameTiming``.
    public func setRenderMode(_ mode: RenderMode) {
        send(.renderMode(mode))
    }

    public func setRenderRotation(_ rotation: RenderRotation) {
        send(.rotation(rotation))
    }

    /// While preloading: what the session may hold and read (the pool changes it as streams come and go); nil
    /// once a player switched to it.
    var standbyBudget: PreloadBudget? {
        get { mailbox.withLock { $0.standby } }
        set {
            mailbox.withLock {
                guard $0.standby != nil else { return }
                $0.standby = newValue
                $0.commands.append(.standbyBudget(newValue))
            }
        }
    }

    /// A rendition switch (``LivePlayer/switchStream(to:)``) asks a preloading session to start at the keyframe
    /// shown at this presentation time.
    func startStandby(at keyframe: MediaTimestamp) {
        send(.standbyStart(keyframe))
    }

    /// A player switched to this session at `instant` on its stopwatch `time`: preloading ends, and the first picture
    /// that reaches the sink after it is reported (`LIVEPLAY_EVT_SWITCHED`) with the time since.
    func switchedTo(at instant: Duration, on time: Stopwatch, preloaded: Bool, rendition: Bool = false) {
        mailbox.withLock { $0.standby = nil }
        // The poster is waiting: the loop shows it on the turn this wakes.
        send(.switched(SwitchRequest(at: instant, time: time, preloaded: preloaded, rendition: rendition)))
    }

    /// The last picture shown, shared with libavcodec's buffers (no copy): TXLivePlayer's `snapshot`.
    public var lastPicture: VideoFrame? { published.lastPicture }

    /// What the play loop published at the end of its last turn.
    var published: PublishedPlayback { publication.withLock { $0.value } }

    /// What the play loop publishes at the end of each turn from now on, the newest only: an update stream for a
    /// switcher that decides on what two sessions publish, rather than polling them.
    func publications() -> AsyncStream<PublishedPlayback> {
        let (stream, continuation) = AsyncStream.makeStream(of: PublishedPlayback.self, bufferingPolicy: .bufferingNewest(1))
        let id = publication.withLock { publication in
            defer { publication.nextFollower &+= 1 }
            publication.followers[publication.nextFollower] = continuation
            return publication.nextFollower
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.publication.withLock { $0.followers.removeValue(forKey: id) }
        }
        return stream
    }

    /// The play loop, at the end of a turn (and when the session ends: `ended`, which finishes the streams).
    func publish(_ value: PublishedPlayback, ended: Bool = false) {
        let followers = publication.withLock { publication in
            publication.value = value
            defer { if ended { publication.followers.removeAll() } }
            return Array(publication.followers.values)
        }
        for follower in followers {
            follower.yield(value)
            if ended { follower.finish() }
        }
    }
}
