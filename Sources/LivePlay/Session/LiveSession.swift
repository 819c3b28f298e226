import Foundation
import LivePlayBuffering
import LivePlayCore
import LivePlayDecode
import LivePlayFLV
public import LivePlayTransport
public import Logging

/// Plays one live URL: connect, demux, buffer, pace, decode, reconnect, and report every stage as a
/// ``PlayEvent``.
///
/// One structured ``run(onEvent:)``; cancelling the calling task stops it. The transport's
/// ``ConnectionSupervisor`` (connects, retries, frames bytes into FLV elements, judges goodput, hands them over
/// with backpressure) runs as a child task, so the play loop keeps playing buffered media while a connection
/// is down. Each turn of the loop moves what arrived through the stages: ``MediaIntake`` (one timeline across
/// connections, which packets are played), ``PlayOut`` (jitter buffer and latency controller, decoders,
/// presenter), and the ``SessionReporter`` says what happened. ``control`` pauses, seeks and changes the
/// latency while playing. All of it runs on a thread of the session's own (``PlaybackThread``), or one it shares
/// with other sessions (``LivePlayConfiguration/threads``), not on the cooperative pool.
public final class LiveSession<C: SessionClock> {
    public let url: String
    public let configuration: LivePlayConfiguration
    /// Changes this session while it plays, from any task.
    public let control: PlaybackControl
    /// What the stream has shown of itself so far: header, metadata, codec configurations, packet counts.
    public var description: StreamDescription { intake.description }
    private let clock: C
    /// Milliseconds since 1970: the wall clock end-to-end latency is measured on.
    let wallClock: @Sendable () -> Double
    let logger: Logger
    let source: (any ByteSource)?
    /// What the session reads from, in order: its URL (or a manifest's rendition) and their backups.
    var sourceURLs: [String] = []
    let reporter: SessionReporter
    var intake: MediaIntake
    let playOut: PlayOut
    /// The thread this session runs on, while it runs.
    private var thread: PlaybackThread?
    /// When the last connection was lost, while no media has arrived since.
    var mediaLostAt: Duration?
    /// A connection got as far as TCP: afterwards a failure is a *lost* connection, before it a failed connect.
    var everConnected = false
    /// The server began the stream (RTMP) or sent its first bytes (HTTP) on this connection.
    var streaming = false
    /// Turns of the play loop so far (an arrival trace says which turn took each read).
    var turns = 0
    /// The tracks a multitrack stream plays: the configuration's, then the last asked for (kept for a read again).
    var tracks: (video: UInt8?, audio: UInt8?)
    /// Recordings and the arrival trace: what sees the packets taken, as they are taken.
    let taps: PacketTaps
    /// What the intake made of the element being taken: one array for every element, so taking one allocates none.
    var steps: [MediaIntake.Step] = []
    /// The ring a time-shifted live stream plays through (``LivePlayConfiguration/timeShift``), while it plays.
    var timeShift: TimeShiftSource?
    /// Where the last seek goes (from the media's or the window's start), while it is under way.
    var seekTarget: Duration?

    /// - Parameters:
    ///   - videoSink: receives each decoded picture at its presentation time.
    ///   - audioSink: receives decoded sound, time-stretched to the playback rate; a real-time one is the
    ///     master clock.
    ///   - control: a handle made beforehand, for a caller that needs it before the session exists.
    ///   - source: a source of FLV bytes of the caller's own (a custom transport) instead of the one `url` names
    ///     (by its scheme: HTTP-FLV, RTMP or a file); `url` then only names the stream in logs.
    ///   - wallClock: milliseconds since 1970, for end-to-end latency against the server's wall-clock stamps;
    ///     the system's by default (a test passes a virtual one, as it passes `clock`).
    ///   - arrivalTap: receives every read as the play loop takes it (an arrival trace, docs/arrival-trace.md).
    public init(
        url: String, configuration: LivePlayConfiguration, clock: C, logger: Logger,
        videoSink: (any VideoSink)? = nil, audioSink: (any AudioSink)? = nil, control: PlaybackControl = PlaybackControl(),
        source: (any ByteSource)? = nil,
        wallClock: (@Sendable () -> Double)? = nil, arrivalTap: (any ArrivalTap)? = nil
    ) {
        self.url = url
        self.configuration = configuration
        tracks = (configuration.videoTrack, configuration.audioTrack)
        self.control = control
        self.clock = clock
        self.wallClock = wallClock ?? { Date().timeIntervalSince1970 * 1000 }
        self.logger = logger
        self.source = source
        taps = PacketTaps(arrivalTap: arrivalTap)
        reporter = SessionReporter(time: SessionTime(clock))
        intake = MediaIntake(
            enableMessage: configuration.enableMessage, enableMetaData: configuration.enableMetaData,
            seiPayloadTypes: configuration.seiPayloadTypes, showsCaptions: configuration.captionChannel != nil,
            logger: logger)
        playOut = PlayOut(
            configuration: configuration, presenter: Presenter(videoSink: videoSink, audioSink: audioSink),
            control: control, reporter: reporter, logger: logger)
        if let start = configuration.startPosition { control.send(.seek(to: start)) }
        if let recording = configuration.recording { control.send(.startRecording(recording)) }
    }

    /// Plays until the stream ends, an error stops it, or the task is cancelled; then reports the session
    /// summary (`LIVEPLAY_EVT_SESSION_SUMMARY`).
    ///
    /// - Parameters:
    ///   - onEvent: every event, on the play loop: return quickly (``LivePlayer`` delivers off the loop).
    ///   - onStatus: the net status, once per second of the session clock.
    ///   - onState: what the playback is (``PlaybackState``), when it changes.
    public func run(
        onEvent: @escaping (PlayEvent) -> Void, onStatus: @escaping (NetStatus) -> Void = { _ in },
        onState: @escaping (PlaybackState) -> Void = { _ in }
    ) async -> PlaybackOutcome {
        reporter.emit = onEvent
        reporter.emitStatus = onStatus
        reporter.emitState = onState
        reporter.time.restart()
        let group = configuration.threads
        let thread = group?.take() ?? PlaybackThreads.take()
        self.thread = thread
        defer {
            self.thread = nil
            if group == nil { PlaybackThreads.giveBack(thread) }
        }
        return await withTaskExecutorPreference(thread) {
            let outcome = await connectAndPlay()
            playOut.picturesEnded()
            finishTaps(after: outcome)
            playOut.publish(ended: true)
            reporter.summary(outcome, droppedFrames: playOut.droppedFrames, onDemand: playOut.onDemand)
            return outcome
        }
    }

    var elapsed: Duration { reporter.time.elapsed }

    // MARK: - Play loop

    /// Where the next read of the source starts: its start, or a byte offset (a keyframe a file's index
    /// points to, for a seek in media on demand).
    enum LoopExit {
        case finished(PlaybackOutcome)
        case readFrom(Int64?)
    }

    /// Reads the source through the transport's supervisor (a child task, so buffered media keeps playing
    /// while a connection is down) until playback ends; again from elsewhere after a seek.
    func play(_ sources: [any ByteSource]) async -> PlaybackOutcome {
        let supervisor = ConnectionSupervisor(
            source: sources[0], backups: Array(sources.dropFirst()), probeInterval: configuration.backupProbeInterval,
            policy: ReconnectPolicy(
                retryCount: configuration.connectRetryCount, retryInterval: configuration.connectRetryInterval),
            goodput: GoodputLimits(
                minimum: configuration.transport.minimumGoodput, window: configuration.transport.goodputWindow,
                warnBelow: configuration.lagThreshold, measuredOver: configuration.lagWindow),
            now: { [time = reporter.time] in time.elapsed }, sleep: sleep, payloads: playOut.decoding.payloads)
        intake.admission.seeksByOffset = supervisor.seeksByOffset
        var offset: Int64?
        while true {
            let handoff = TransportHandoff<SupervisorEvent>(capacity: 64)
            control.wakes { [weak handoff] in handoff?.wake() }
            defer { control.wakes(with: nil) }
            intake.readsMidFile = offset != nil
            let exit = await withTaskGroup(of: Void.self) { [offset] group in
                group.addTask { [tracks] in
                    await supervisor.run(
                        from: offset, tracks: tracks, deliver: handoff.send, trackRequests: handoff.takeTrackRequests)
                }
                let exit = await playLoop(handoff)
                handoff.close()
                group.cancelAll()
                return exit
            }
            switch exit {
            case .finished(let outcome): return outcome
            case .readFrom(let position): offset = position
            }
        }
    }

    /// One turn: control, what the transport delivered, the play-out stage, the reports that are due; then
    /// wait for the transport, a command, or the next thing due (``turnWait``).
    private func playLoop(_ handoff: TransportHandoff<SupervisorEvent>) async -> LoopExit {
        // On a clock with a time of its own the wait ends sooner where the clock knows input falls due.
        let sleep: @Sendable (Duration) async throws -> Void = { [clock] in
            try await clock.sleepForTurn(until: clock.now.advanced(by: $0))
        }
        let timer = realTimeThread
        while true {
            if Task.isCancelled { return .finished(.stopped) }
            turns += 1
            if let exit = route(control.takeCommands(), to: handoff) { return exit }
            while playOut.hasRoom, intake.admission.jumpTo == nil, let update = handoff.takeFirst() {
                if let outcome = apply(update) { return .finished(outcome) }
            }
            // `--start` past the first keyframes: read on from the keyframe the index points to.
            if let offset = intake.admission.takeJump() { return readAgain(from: offset) }
            let now = elapsed
            applyTaps(at: now)
            if let ending = playOut.advance(at: now) { return finished(ending) }
            playOut.publish()
            let statusTold = reportStatusIfDue(at: now)
            if let ending = playOut.endIfRanDry(at: now) { return finished(ending) }
            reportProgressIfDue(at: now)
            reportState(movesTimeline: statusTold)
            let wait = turnWait
            if playOut.hasRoom, let timer {
                await handoff.wait(until: .now + wait, timer: timer)
            } else if playOut.hasRoom {
                await handoff.wait { try? await sleep(wait) }
            } else {
                try? await sleep(wait)
            }
        }
    }

    /// How long the loop waits for input before its next turn: until the next picture, block of sound or report
    /// falls due, and at most ``LivePlayConfiguration/tickInterval``. Playback turns on its media's schedule, not a
    /// fixed tick (a 30 fps stream about 30 times a second, plus its reads).
    private var turnWait: Duration {
        let now = elapsed
        var due = min(now + configuration.tickInterval, reporter.nextReport)
        if let media = playOut.timeToNextDue(at: now) { due = min(due, now + media) }
        return max(.milliseconds(1), due - now)
    }

    /// Waits on the session's clock: timed by the session's thread when the clock runs in real time
    /// (``SessionClock``), slept on otherwise.
    var sleep: @Sendable (Duration) async throws -> Void {
        { [clock, thread] duration in
            let deadline = clock.now.advanced(by: duration)
            if let thread, let real = clock.realInstant(deadline) {
                try await thread.sleep(until: real)
            } else {
                try await clock.sleep(until: deadline, tolerance: nil)
            }
        }
    }

    /// The session's thread while it runs, when its clock runs in real time: it times ticks and transport deadlines.
    var realTimeThread: PlaybackThread? {
        clock.realInstant(clock.now) == nil ? nil : thread
    }
}
