import LivePlayBuffering
import LivePlayCore
import LivePlayDecode
import LivePlayTransport

/// The session's time: how long since it started, on its injected monotonic clock.
struct SessionTime: Sendable {
    private let read: @Sendable () -> Duration
    private var origin = Duration.zero

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let base = clock.now
        read = { base.duration(to: clock.now) }
        origin = read()
    }

    /// Counts from now.
    mutating func restart() { origin = read() }

    var elapsed: Duration { read() - origin }
}

/// Tells the listener what the stages did: stamps each ``Report`` with the session's time, keeps the
/// statistics and startup milestones the reports carry, and builds the once-a-second net status and
/// progress and the summary at the end (the words are ``Reports``').
final class SessionReporter {
    var emit: (PlayEvent) -> Void = { _ in }
    var emitStatus: (NetStatus) -> Void = { _ in }
    var emitState: (PlaybackState) -> Void = { _ in }
    /// What the playback was last told to be.
    var playbackState = PlaybackState()
    /// The reconnects so far, by reason (``PlaybackState/reconnects``).
    private(set) var reconnects: [TransportErrorCode: Int] = [:]
    var time: SessionTime
    private(set) var statistics = PlaybackStatistics()
    private(set) var startup = StartupTimeline()
    /// Connections tried so far (`PLAY_EVT_PLAY_BEGIN`'s `connection`).
    var connectionCount = 0
    var serverAddress = ""
    private var cpu = CPUUsage()
    private var nextStatus = Duration.seconds(1)
    private var lastProgress: Duration?
    private var lastResolution: (width: Int, height: Int)?

    init(time: SessionTime) {
        self.time = time
    }

    func report(_ report: Report) {
        self.report(report.code, report.message, report.parameters)
    }

    func report(_ code: PlayEventCode, _ message: String, _ parameters: [String: PlayEventValue] = [:]) {
        emit(PlayEvent(code, message, elapsedMilliseconds: time.elapsed.milliseconds, parameters: parameters))
    }

    /// Playback cannot go on: the error event, and the outcome it gives.
    func fail(_ code: PlayEventCode, _ message: String) -> PlaybackOutcome {
        report(code, message)
        return .failed(code)
    }

    /// How playback ended, reported once what was delivered has been played.
    /// - Parameter onDemandPosition: where media on demand ended, in seconds from its start.
    func ended(_ ending: PlayOut.Ending, onDemandPosition: Double?) -> PlaybackOutcome {
        switch ending {
        case .failed(let code, let message, let detail):
            report(code, message, detail.map { ["detail": .string($0)] } ?? [:])
            return .failed(code)
        case .ended:
            report(Reports.playedToTheEnd(onDemandPosition: onDemandPosition))
            return .ended
        }
    }

    /// Records a startup milestone the first time it happens, at the session's time now.
    func reached(_ milestone: WritableKeyPath<StartupTimeline, Duration?>) {
        startup.record(milestone, time.elapsed)
    }

    /// A reconnect after `error`: counted, and told (2103).
    func reconnecting(attempt: Int, of retryCount: Int, after error: TransportError) {
        statistics.reconnected()
        reconnects[error.code, default: 0] += 1
        report(Reports.retrying(attempt: attempt, of: retryCount, after: error))
    }

    func count(_ update: (inout PlaybackStatistics) -> Void) {
        update(&statistics)
    }

    /// `PLAY_EVT_PLAY_BEGIN` (and `PLAY_WARNING_VIDEO_PLAY_LAG` after a stall worth telling).
    func began(first: Bool, buffered: Duration, stalled: Duration?, engine: PlaybackEngine, at now: Duration) {
        let threshold = engine.parameters.videoBlockThreshold
        if let stalled {
            statistics.stalled(for: stalled, threshold: threshold)
            if stalled > threshold { report(Reports.stalled(for: stalled)) }
        }
        // An audio-only stream is first heard now.
        if first { startup.record(\.firstShown, now) }
        report(
            Reports.began(
                first: first, connection: connectionCount, buffered: buffered, target: engine.target, startup: startup))
    }

    /// A picture reached the video sink.
    func shown(_ frame: VideoFrame) {
        statistics.shown(video: frame.pts)
        if lastResolution?.width != frame.width || lastResolution?.height != frame.height {
            lastResolution = (frame.width, frame.height)
            report(Reports.resolution(width: frame.width, height: frame.height))
        }
        reached(\.firstShown)
    }

    /// What playback is doing: the net status's `state` and ``PlaybackState/phase``. Playing means presenting: an
    /// engine that plays with nothing to show is still loading.
    static func phase(of playOut: PlayOut, connecting: Bool) -> PlaybackState.Phase {
        let engine = playOut.engine
        if engine.isPaused { return .paused }
        if connecting || !playOut.hasBegun && engine.state == .waitingForKeyframe { return .connecting }
        return engine.state == .playing && playOut.hasBegun ? .playing : .loading
    }

    /// `state`, when it is not what was told last.
    func tell(_ state: PlaybackState) {
        guard state != playbackState else { return }
        playbackState = state
        emitState(state)
    }

    /// The net status once a whole second of the session clock has passed; rates cover the second since the
    /// previous one. Returns whether it was due.
    /// - Parameter onDemand: media on demand: its position and length, seconds.
    /// The source playing, secrets redacted, once playback moved to another (``Reports/sourceChanged(to:url:after:)``).
    var source: String?

    func statusIfDue(
        at now: Duration, connecting: Bool, playOut: PlayOut, intake: MediaIntake, decodes: Bool,
        endToEndLatency: @autoclosure () -> Int64?, onDemand: @autoclosure () -> (position: Double, length: Double)?
    ) -> Bool {
        guard now >= nextStatus else { return false }
        // Stay on whole seconds of the session clock; a tick that came very late skips, never bunches.
        repeat { nextStatus += .seconds(1) } while nextStatus <= now
        let engine = playOut.engine
        let interval = statistics.takeInterval(at: now)
        let (processCPU, machineCPU) = cpu.sample()
        let phase = Self.phase(of: playOut, connecting: connecting)
        let playing = engine.state == .playing && playOut.hasBegun
        // A file's buffer is its read-ahead, not a latency: the summary carries no latency figures for it.
        if playing, !playOut.onDemand { statistics.sample(latency: engine.bufferLatency) }
        var status = Reports.netStatus(
                at: now, state: phase.rawValue, cpu: (processCPU, machineCPU), interval: interval, engine: engine,
                statistics: statistics, presenter: playOut.presenter, decodes: decodes,
                stream: (intake.videoConfiguration, intake.audioConfiguration, lastResolution, serverAddress),
                endToEndLatency: endToEndLatency())
        status.reason = playing || engine.isPaused ? nil : playOut.notPlayingReason
        let tracks = intake.description.tracks
        if !tracks.isEmpty { status.tracks = tracks.map(\.summary).joined(separator: "; ") }
        status.source = source
        if let media = onDemand() {
            status.positionMilliseconds = Int64((media.position * 1000).rounded())
            status.durationMilliseconds = Int64((media.length * 1000).rounded())
        }
        emitStatus(status)
        return true
    }

    /// `PLAY_EVT_PLAY_PROGRESS` once a second while playing.
    /// - Parameter position: seconds; from the start of the media on demand.
    func progressIfDue(
        at now: Duration, playOut: PlayOut, position: @autoclosure () -> Double,
        endToEndLatency: @autoclosure () -> Int64?, mediaDuration: Double?,
        timeShift: (behind: Double, atLiveEdge: Bool)? = nil
    ) {
        let engine = playOut.engine
        guard engine.state == .playing, playOut.hasBegun, engine.position != nil else { return }
        guard let last = lastProgress else {
            lastProgress = now
            return
        }
        guard now - last >= .seconds(1) else { return }
        lastProgress = now
        report(
            Reports.progress(
                position: position(), engine: engine, framesShown: playOut.presenter.framesShown,
                droppedFrames: playOut.droppedFrames, endToEndLatency: endToEndLatency(), mediaDuration: mediaDuration,
                timeShift: timeShift))
    }

    /// When the next net status or progress event is due, on the session clock.
    var nextReport: Duration {
        lastProgress.map { min(nextStatus, $0 + .seconds(1)) } ?? nextStatus
    }

    /// Progress counts its second afresh (after a seek).
    func restartProgress() { lastProgress = nil }

    /// `LIVEPLAY_EVT_SESSION_SUMMARY`: how the whole session went, once, when it stops.
    func summary(_ outcome: PlaybackOutcome, droppedFrames: Int, onDemand: Bool) {
        report(
            Reports.summary(
                outcome, duration: time.elapsed, statistics: statistics, droppedFrames: droppedFrames,
                firstShown: startup.firstShown, onDemand: onDemand))
    }

    /// What the transport said, as milestones and events.
    func transport(_ event: TransportEvent) {
        switch event {
        case .resolved:
            reached(\.resolved)
        case .handshakeDone:
            reached(\.handshakeDone)
        case .connected(let serverAddress):
            self.serverAddress = serverAddress
            reached(\.connected)
            report(Reports.connected(to: serverAddress))
        case .streamBegin:
            reached(\.streamBegan)
            report(Reports.streamBegan)
        case .onDemand, .remoteFile, .bytes, .tags, .serverStatus, .moveRequested, .enhancedConnectRefused:
            break
        }
    }
}
