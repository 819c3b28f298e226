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
/// is down. The play loop moves what arrives through its stages: ``PacketAdmission`` (which packets are
/// played), the ``PlaybackEngine`` (jitter buffer and latency controller), the ``DecodeStage`` and the
/// ``Presenter`` that hands frames to the sinks at their time, advancing them every tick with the injected
/// clock; ``Reports`` says what happened. ``control`` changes the
/// latency parameters while playing. All of it runs on a thread of the session's own (``PlaybackThread``),
/// not on the cooperative pool.
public final class LiveSession<C: Clock> where C.Duration == Duration {
    public let url: String
    public let configuration: LivePlayConfiguration
    /// Changes this session while it plays, from any task.
    public let control: PlaybackControl
    /// What the stream has shown of itself so far: header, metadata, codec configurations, packet counts.
    public private(set) var description = StreamDescription()
    private let clock: C
    /// Milliseconds since 1970: the wall clock end-to-end latency is measured on.
    private let wallClock: @Sendable () -> Double
    private let logger: Logger
    private let source: (any ByteSource)?
    private var start: C.Instant
    private var emit: (PlayEvent) -> Void = { _ in }
    private var emitStatus: (NetStatus) -> Void = { _ in }

    // Across connections.
    private var engine: PlaybackEngine
    private var startup = StartupTimeline()
    private var transportFinished = false
    private var lastProgress: Duration?
    private var clockStamp: (wallClockMs: Double, streamMs: Int64)?
    private var timelineOffset: Int64 = 0
    private var stitcher = TimelineStitcher()
    private let decoding: DecodeStage
    private let presenter: Presenter
    /// The thread this session runs on, while it runs.
    private var thread: PlaybackThread?
    private var lastResolution: (width: Int, height: Int)?
    private var mediaLostAt: C.Instant?
    private var connectionCount = 0
    private var statistics = PlaybackStatistics()
    private var cpu = CPUUsage()
    private var nextStatus = Duration.seconds(1)
    private var serverAddress = ""
    /// The newest configurations received (what arriving packets use); decoders follow them in stream order.
    private var videoConfiguration: VideoCodecConfiguration?
    private var audioConfiguration: AudioCodecConfiguration?
    private var hasBegun = false
    /// Media on demand (a file, an HTTP response with a length): played from its start at 1.0×, paced by
    /// its timestamps, read only as far ahead as ``onDemandReadAhead``; never caught up or skipped.
    private var onDemand = false
    /// The media's length, from `onMetaData`'s duration (media on demand).
    private var mediaDuration: Double?
    /// A connection got as far as TCP: afterwards a failure is a *lost* connection, before it a failed connect.
    private var everConnected = false
    /// The transport is done: how playback ends once what is buffered and decoded has been played.
    private var ending: Ending?
    /// Where the last pictures are being played out from, after the engine ran dry at the end.
    private var drain: (since: Duration, from: MediaTimestamp)?
    /// Which received packets are played, and where the source is read from (resumes, seeks).
    private var admission = PacketAdmission()
    private var demuxWarnings = WarningThrottle()
    /// The source is being read from a keyframe's offset: the sequence headers it skipped are known already.
    private var readsMidFile = false
    /// The transport is done and every video packet has gone to the decoder: what it holds was drained.
    private var videoDrained = false

    // Per connection.
    private var sawKeyframe = false
    private var sawFrame = false
    private var sawMedia = false
    /// The server began the stream (RTMP) or sent its first bytes (HTTP): past the handshake.
    private var streaming = false
    /// The header or metadata announced video: playback begins with the first picture, not the first sound.
    private var expectsVideo = false

    /// - Parameters:
    ///   - videoSink: receives each decoded picture at its presentation time.
    ///   - audioSink: receives decoded sound, time-stretched to the playback rate; a real-time one is the
    ///     master clock.
    ///   - control: a handle made beforehand, for a caller that needs it before the session exists.
    ///   - wallClock: milliseconds since 1970, for end-to-end latency against the server's wall-clock stamps;
    ///     the system's by default (a test passes a virtual one, as it passes `clock`).
    ///   - source: a source of FLV bytes of the caller's own (a custom transport) instead of the one `url` names
    ///     (by its scheme: HTTP-FLV, RTMP or a file); `url` then only names the stream in logs.
    public init(
        url: String, configuration: LivePlayConfiguration, clock: C, logger: Logger,
        videoSink: (any VideoSink)? = nil, audioSink: (any AudioSink)? = nil, control: PlaybackControl = PlaybackControl(),
        source: (any ByteSource)? = nil,
        wallClock: (@Sendable () -> Double)? = nil
    ) {
        self.wallClock = wallClock ?? { Date().timeIntervalSince1970 * 1000 }
        self.control = control
        self.presenter = Presenter(videoSink: videoSink, audioSink: audioSink)
        self.decoding = DecodeStage(options: configuration.decoder)
        self.url = url
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.source = source
        self.start = clock.now
        self.engine = PlaybackEngine(parameters: configuration.latency, limits: configuration.bufferLimits)
        if let start = configuration.startPosition { control.seek(to: start) }
    }

    /// Plays until the stream ends, an error stops it, or the task is cancelled; then reports the session
    /// summary (`LIVEPLAY_EVT_SESSION_SUMMARY`).
    ///
    /// - Parameters:
    ///   - onEvent: every event, on the play loop: return quickly (``LivePlayer`` delivers off the loop).
    ///   - onStatus: the net status, once per second of the session clock.
    public func run(
        onEvent: @escaping (PlayEvent) -> Void, onStatus: @escaping (NetStatus) -> Void = { _ in }
    ) async -> PlaybackOutcome {
        emit = onEvent
        emitStatus = onStatus
        start = clock.now
        let thread = PlaybackThread(name: "liveplay-play")
        self.thread = thread
        defer {
            self.thread = nil
            thread.stop()
        }
        return await withTaskExecutorPreference(thread) {
            let outcome = await connectAndPlay()
            reportSummary(outcome)
            return outcome
        }
    }

    private func connectAndPlay() async -> PlaybackOutcome {
        if let source { return await play(source) }
        do {
            return try await ConnectionSupervisor.withSource(
                for: url, options: configuration.transport, logger: logger, sleep: sleep
            ) { source in
                await play(source)
            }
        } catch where error.code == .invalidURL {
            return fail(.fileNotFound, "\(Redaction.url(url)) cannot be played: \(error.message)")
        } catch {
            return fail(.networkDisconnected, "HTTP client: \(error.detail ?? error.message)")
        }
    }

    private var elapsed: Duration { start.duration(to: clock.now) }

    private func report(_ code: PlayEventCode, _ message: String, _ parameters: [String: PlayEventValue] = [:]) {
        let milliseconds = Int64(elapsed / .milliseconds(1))
        emit(PlayEvent(code, message, elapsedMilliseconds: milliseconds, parameters: parameters))
    }

    private func report(_ report: Report) {
        self.report(report.code, report.message, report.parameters)
    }

    private func fail(_ code: PlayEventCode, _ message: String) -> PlaybackOutcome {
        report(code, message)
        return .failed(code)
    }

    // MARK: - Play loop

    /// How the play loop stopped: with the session's outcome, or to read the source again from its start
    /// (a seek back in media on demand).
    private enum LoopExit {
        case finished(PlaybackOutcome)
        case readAgain
        /// Read again from this byte offset (a keyframe the file's index points to).
        case readFrom(Int64)
    }

    private func play(_ source: any ByteSource) async -> PlaybackOutcome {
        let policy = ReconnectPolicy(
            retryCount: configuration.connectRetryCount, retryInterval: configuration.connectRetryInterval)
        let goodput = GoodputLimits(
            minimum: configuration.transport.minimumGoodput, window: configuration.transport.goodputWindow,
            warnBelow: configuration.lagThreshold, measuredOver: configuration.lagWindow)
        let (clock, start) = (clock, start)
        let supervisor = ConnectionSupervisor(
            source: source, policy: policy, goodput: goodput, now: { start.duration(to: clock.now) }, sleep: sleep)
        admission.seeksByOffset = supervisor.seeksByOffset
        var offset: Int64?
        while true {
            let handoff = TransportHandoff<SupervisorEvent>(capacity: 64)
            let readFrom = offset
            readsMidFile = offset != nil
            let exit = await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await supervisor.run(from: readFrom, deliver: handoff.send)
                }
                let exit = await playLoop(handoff)
                handoff.close()
                group.cancelAll()
                return exit
            }
            switch exit {
            case .finished(let outcome): return outcome
            case .readAgain: offset = nil
            case .readFrom(let position): offset = position
            }
        }
    }

    private func playLoop(_ handoff: TransportHandoff<SupervisorEvent>) async -> LoopExit {
        let (sleep, tickInterval) = (sleep, configuration.tickInterval)
        while true {
            if Task.isCancelled { return .finished(.stopped) }
            if let exit = applySeek() { return exit }
            // Live media is taken as it comes (the engine sheds what is too old); media on demand only as
            // far ahead as the read-ahead, so the transport waits (TCP backpressure, or a file not read on).
            while hasRoom, admission.jumpTo == nil, let update = handoff.takeFirst() {
                if let outcome = apply(update) { return .finished(outcome) }
            }
            if let offset = admission.takeJump() {
                // `--start` past the first keyframes: read on from the keyframe the index points to.
                return readAgain(from: offset)
            }
            if let outcome = tick() { return .finished(outcome) }
            if hasRoom {
                await handoff.wait { try? await sleep(tickInterval) }
            } else {
                try? await sleep(tickInterval)
            }
        }
    }

    /// How far ahead of the position media on demand is read.
    static var onDemandReadAhead: Duration { .seconds(10) }

    /// Whether the play loop takes more from the transport now.
    private var hasRoom: Bool {
        guard onDemand else { return true }
        let buffer = engine.buffer
        return buffer.duration < Self.onDemandReadAhead && buffer.count < buffer.limits.packets / 2
            && buffer.byteCount < buffer.limits.bytes / 2
    }

    /// Waits on the session's clock. The real clock's waits are timed by the session's thread rather than
    /// by a libdispatch timer and a hop through the cooperative pool, a hundred times a second.
    private var sleep: @Sendable (Duration) async throws -> Void {
        if let thread, C.self == ContinuousClock.self {
            return { [thread] duration in try await thread.sleep(until: .now + duration) }
        }
        return { [clock] duration in try await clock.sleep(for: duration) }
    }

    private func apply(_ update: SupervisorEvent) -> PlaybackOutcome? {
        switch update {
        case .attempt:
            connectionCount += 1
            beginConnection()
        case .event(let event):
            handle(event)
        case .media(let byteCount, let elements):
            statistics.received(bytes: byteCount)
            startup.record(\.firstByte, elapsed)
            streaming = true
            elements.forEach(handle)
        case .slowLink(let goodput):
            report(Reports.slowLink(receiving: goodput))
        case .unplayable(let message):
            return fail(.unplayable, message)
        case .lost(let error, let action):
            if mediaLostAt == nil { mediaLostAt = clock.now }
            // What the decoder holds back (B-frames' reorder delay) is drained once the connection's last
            // video packet has gone in, so those pictures are shown, not lost with the connection. Media on
            // demand resumes where it broke off: its decoder simply goes on.
            if !onDemand { decoding.connectionLost(after: admission.newestVideo) }
            if let outcome = connectionLost(error) { return outcome }
            switch action {
            case .retry(let attempt, _):
                statistics.reconnected()
                report(Reports.retrying(attempt: attempt, of: configuration.connectRetryCount, after: error))
            case .giveUp(let attempts):
                let message = Reports.gaveUpMessage(after: attempts, everConnected: everConnected, error)
                // What arrived before the loss is played out first, then the error is reported.
                finish(.failed(.networkDisconnected, message, error.detail))
            }
        case .finished:
            finish(.ended)
        }
        return nil
    }

    /// How playback ends once the transport is done and what it delivered has been played.
    private enum Ending {
        case ended
        case failed(PlayEventCode, String, String?)
    }

    private func finish(_ how: Ending) {
        transportFinished = true
        engine.inputEnded = true
        if ending == nil { ending = how }
    }

    /// Advances the engine to now, carries out what it decides, and presents what is due.
    private func tick() -> PlaybackOutcome? {
        let now = elapsed
        applyControl()
        let master = presenter.audioClock(rate: engine.rate)
        for action in engine.advance(to: now, following: master) {
            switch action {
            case .decode(let packet):
                decode(packet)
            case .loading(let buffered):
                if transportFinished {
                    startDrain(at: now)
                    break
                }
                report(Reports.loading(buffered: buffered, target: engine.target))
            case .begin(let buffered, let stalled):
                begin(buffered: buffered, stalled: stalled, at: now)
            case .skipped(let removed, let dropped):
                statistics.caughtUp()
                Reports.skipped(removed: removed, dropped: dropped).forEach(report)
            case .catchUpStarted(let excess):
                statistics.caughtUp()
                report(Reports.catchUpStarted(excess: excess, rate: engine.rate))
            case .catchUpEnded(let removed):
                report(Reports.catchUpEnded(removed: removed, latency: engine.bufferLatency))
            case .arrivalGap(let gap, let tolerated):
                guard !transportFinished else { break }
                report(Reports.arrivalGap(gap, tolerated: tolerated, buffered: engine.bufferLatency))
            case .rateChanged:
                break
            }
        }
        if transportFinished, !videoDrained, !engine.buffer.holdsVideo {
            // The last pictures a B-frame decoder holds back come out now, to be shown at their times while
            // the rest of the sound plays.
            videoDrained = true
            flushVideo()
        }
        if let drain {
            // The engine ran dry at the end: the last pictures (reordered past the last decode time) and
            // sound are shown at their times, then playback ends.
            let position = drain.from + (now - drain.since).milliseconds
            if let frame = presenter.present(at: position, rate: 1) { shown(frame) }
            if presenter.queuedVideoFrames == 0 || now - drain.since > .seconds(2) { return endOfStream() }
        } else {
            present()
        }
        if now >= nextStatus {
            emitStatus(status(at: now))
            // Stay on whole seconds of the session clock; a tick that came very late skips, never bunches.
            repeat { nextStatus += .seconds(1) } while nextStatus <= now
        }
        if drain == nil, transportFinished, engine.buffer.isEmpty,
            engine.state != .playing || engine.bufferLatency == .zero
        {
            startDrain(at: now)
            if presenter.queuedVideoFrames == 0 { return endOfStream() }
        }
        reportProgress(at: now)
        return nil
    }

    /// The transport is done and the engine has released everything: drain the decoders and play out.
    private func startDrain(at now: Duration) {
        guard drain == nil else { return }
        if !videoDrained { flushVideo() }
        videoDrained = true
        take(decoding.flushAudio())
        drain = (now, engine.position ?? engine.buffer.liveEdge ?? MediaTimestamp(milliseconds: 0))
    }

    /// What ``control`` asked for: pause, resume, a latency change; applied now and reported.
    private func applyControl() {
        let presentation = control.takePresentation()
        presenter.volume = presentation.gain
        presenter.renderMode = presentation.renderMode
        presenter.rotation = presentation.rotation
        if let change = presentation.videoSink { presenter.videoSink = change.sink }
        if let change = presentation.audioSink { presenter.audioSink = change.sink }
        switch control.takePauseRequest() {
        case true? where !engine.isPaused:
            engine.pause()
            report(Reports.paused(at: engine.position))
        case false? where engine.isPaused && onDemand:
            _ = engine.resume(jumpsToNewest: false)
            report(Reports.resumedWherePaused(at: engine.position))
        case false? where engine.isPaused:
            for action in engine.resume() {
                if case .skipped(let removed, let dropped) = action {
                    report(Reports.skippedToNewest(removed: removed, dropped: dropped))
                }
            }
            report(Reports.resumedAtLiveEdge(latency: engine.bufferLatency))
        default:
            break
        }
        // Media on demand plays at 1.0× from its start: the live latency modes do not apply.
        guard let latency = control.takeLatency(), latency != engine.parameters, !onDemand else { return }
        let previous = engine.parameters
        engine.parameters = latency
        report(Reports.latencyChanged(from: previous, to: latency, target: engine.target, current: engine.bufferLatency))
    }

    /// Hands the sinks what is due; the first picture is shown as soon as it is decoded.
    private func present() {
        guard let position = engine.position else { return }
        let picture =
            engine.state == .playing
            ? presenter.present(at: position, rate: engine.rate) : presenter.showFirstPicture(at: position)
        if let audio = presenter.takeLastPlayedAudio() { statistics.played(audio: audio) }
        guard let picture else { return }
        shown(picture)
    }

    private func shown(_ frame: VideoFrame) {
        control.recordShown(frame)
        statistics.shown(video: frame.pts)
        if lastResolution?.width != frame.width || lastResolution?.height != frame.height {
            lastResolution = (frame.width, frame.height)
            report(Reports.resolution(width: frame.width, height: frame.height))
        }
        startup.record(\.firstShown, elapsed)
    }

    /// The net status now; rates cover the second since the previous one.
    private func status(at now: Duration) -> NetStatus {
        let interval = statistics.takeInterval(at: now)
        let (processCPU, machineCPU) = cpu.sample()
        let state: String
        if engine.isPaused {
            state = "paused"
        } else if mediaLostAt != nil || !hasBegun && engine.state == .waitingForKeyframe {
            state = "connecting"
        } else {
            state = engine.state == .playing ? "playing" : "loading"
        }
        if engine.state == .playing { statistics.sample(latency: engine.bufferLatency) }
        return Reports.netStatus(
            at: now, state: state, cpu: (processCPU, machineCPU), interval: interval, engine: engine,
            statistics: statistics, presenter: presenter, decodes: configuration.decodes,
            stream: (videoConfiguration, audioConfiguration, lastResolution, serverAddress),
            endToEndLatency: engine.position.flatMap(endToEndLatency))
    }

    /// `LIVEPLAY_EVT_SESSION_SUMMARY`: how the whole session went, once, when it stops.
    private func reportSummary(_ outcome: PlaybackOutcome) {
        report(
            Reports.summary(
                outcome, duration: elapsed, statistics: statistics,
                droppedFrames: engine.buffer.droppedVideoFrames + presenter.droppedVideoFrames,
                firstShown: startup.firstShown))
    }

    private func endOfStream() -> PlaybackOutcome {
        if drain == nil { flushDecoders() }
        switch ending {
        case .failed(let code, let message, let detail)?:
            report(code, message, detail.map { ["detail": .string($0)] } ?? [:])
            return .failed(code)
        case .ended?, nil:
            report(Reports.playedToTheEnd(onDemandPosition: onDemand ? progressSeconds : nil))
            return .ended
        }
    }

    private func begin(buffered: Duration, stalled: Duration?, at now: Duration) {
        let threshold = engine.parameters.videoBlockThreshold
        if let stalled {
            statistics.stalled(for: stalled, threshold: threshold)
            if stalled > threshold { report(Reports.stalled(for: stalled)) }
        }
        let first = !hasBegun
        hasBegun = true
        // An audio-only stream is first heard now.
        if first { startup.record(\.firstShown, now) }
        report(
            Reports.began(
                first: first, connection: connectionCount, buffered: buffered, target: engine.target, startup: startup))
    }

    /// `PLAY_EVT_PLAY_PROGRESS` once a second while playing: position, buffer, latencies.
    private func reportProgress(at now: Duration) {
        guard engine.state == .playing, let position = engine.position else { return }
        guard let last = lastProgress else {
            lastProgress = now
            return
        }
        guard now - last >= .seconds(1) else { return }
        lastProgress = now
        report(
            Reports.progress(
                position: onDemand ? progressSeconds : Double(position.milliseconds) / 1000, engine: engine,
                framesShown: presenter.framesShown,
                droppedFrames: engine.buffer.droppedVideoFrames + presenter.droppedVideoFrames,
                endToEndLatency: endToEndLatency(position), mediaDuration: onDemand ? mediaDuration ?? 0 : nil))
    }

    /// "Shown N ms after the server sent it", from the lab's `onLivePlayClock` stamps (docs/wall-clock-tags.md).
    public func endToEndLatency(_ position: MediaTimestamp) -> Int64? {
        guard let stamp = clockStamp else { return nil }
        let sentAt = stamp.wallClockMs + Double(position.milliseconds - stamp.streamMs)
        return Int64((wallClock() - sentAt).rounded())
    }

    /// Reports why a connection failed; returns an outcome when the failure is final (no retry helps).
    private func connectionLost(_ error: TransportError) -> PlaybackOutcome? {
        let (lost, isFinal) = Reports.lost(error, streaming: streaming)
        guard !isFinal else { return fail(lost.code, lost.message) }
        report(lost)
        return nil
    }

    private func beginConnection() {
        transportFinished = false
        videoDrained = false
        sawKeyframe = false
        sawFrame = false
        sawMedia = false
        streaming = false
        expectsVideo = false
        if onDemand, mediaLostAt != nil {
            // A file's own timestamps: the new connection reads it again, and what was had is skipped.
            stitcher = TimelineStitcher()
            admission.resumeAfterLoss()
        } else if let lostAt = mediaLostAt {
            stitcher.beginConnection(outage: lostAt.duration(to: clock.now))
        }
    }

    private func handle(_ event: TransportEvent) {
        switch event {
        case .resolved(let addresses):
            startup.record(\.resolved, elapsed)
            logger.debug("resolved", metadata: ["addresses": "\(addresses)"])
        case .handshakeDone:
            startup.record(\.handshakeDone, elapsed)
        case .onDemand(let length):
            guard !onDemand else { return }
            onDemand = true
            engine.parameters = .onDemand
            logger.debug("media on demand", metadata: ["bytes": "\(length)"])
        case .connected(let serverAddress):
            everConnected = true
            self.serverAddress = serverAddress
            startup.record(\.connected, elapsed)
            report(Reports.connected(to: serverAddress))
        case .streamBegin:
            startup.record(\.streamBegan, elapsed)
            streaming = true
            report(Reports.streamBegan)
        case .bytes, .tags:
            // The supervisor frames media into FLV elements (``SupervisorEvent/media(byteCount:_:)``).
            break
        }
    }

    // MARK: - Media

    private func handle(_ element: FLVElement) {
        description.record(element)
        switch element {
        case .packet(var packet):
            let original = packet
            let mapped = stitcher.map(dts: packet.dts, pts: packet.pts)
            packet.dts = mapped.dts
            packet.pts = mapped.pts
            if let jump = mapped.jump { report(Reports.timestampsJumped(by: jump)) }
            if let gap = mapped.gap, gap > .milliseconds(100) { report(Reports.mediaResumed(after: gap)) }
            if !sawMedia {
                sawMedia = true
                mediaLostAt = nil
            }
            decoding.received(packet)
            statistics.received(packet)
            timelineOffset = mapped.dts.milliseconds - original.dts.milliseconds
            if packet.kind == .audio { startup.record(\.firstAudio, elapsed) }
            if configuration.enableMessage, packet.kind == .video, let video = videoConfiguration {
                Reports.seiMessages(in: packet, video).forEach(report)
            }
            if packet.kind == .video, packet.isKeyframe, !sawKeyframe {
                sawKeyframe = true
                startup.record(\.firstKeyframe, elapsed)
                report(Reports.firstKeyframe(packet))
            }
            switch admission.admit(packet, onDemand: onDemand) {
            case .passOver:
                break
            case .seekIgnored(let packet):
                report(Reports.seekIgnoredOnLive)
                receive(packet)
            case .admit(let packets, let seekDone):
                if let seekDone, let first = packets.first {
                    report(Reports.seekDone(at: first.dts, target: seekDone.target))
                }
                packets.forEach(receive)
            }
        case .videoConfiguration(let video):
            videoConfiguration = video
            engine.expectsVideo = true
            if configuration.decodes { take(decoding.received(video)) }
        case .audioConfiguration(let audio):
            audioConfiguration = audio
            if configuration.decodes { take(decoding.received(audio)) }
        case .metadata(let metadata):
            if let duration = metadata.duration, duration.isFinite, duration > 0 { mediaDuration = duration }
            admission.received(metadata)
            expectsVideo = expectsVideo || metadata.videoCodecID != nil
            // Metadata is trusted to mean it; the FLV header's video flag is often set on audio-only streams.
            if metadata.videoCodecID != nil { engine.expectsVideo = true }
            if configuration.enableMetaData { report(Reports.metadata(metadata)) }
        case .dataMessage(let message):
            if let stamp = WallClockStamp(message) {
                clockStamp = (Double(stamp.wallClockMs), Int64(stamp.streamMs) + timelineOffset)
                return
            }
            if configuration.enableMessage { report(Reports.scriptMessage(message)) }
        case .warning(let warning) where readsMidFile && warning.code == .missingConfiguration:
            break
        case .warning(let warning):
            logger.warning("FLV: \(warning)")
            if let summary = demuxWarnings.record(warning.code.rawValue, at: elapsed) {
                report(Reports.malformedData(warning, count: summary.count, suppressed: summary.suppressed))
            }
        case .header(let header):
            expectsVideo = expectsVideo || header.hasVideo
        case .endOfSequence:
            break
        }
    }

    /// Hands a packet to the jitter buffer.
    private func receive(_ packet: EncodedPacket) {
        for action in engine.receive(packet, at: elapsed) {
            if case .skipped(let removed, let dropped) = action {
                report(Reports.shedAtLimit(removed: removed, dropped: dropped))
            }
        }
    }

    // MARK: - Media on demand

    /// Position from the start of the media, in seconds (`EVT_PLAY_PROGRESS`).
    private var progressSeconds: Double {
        guard let position = engine.position else { return 0 }
        return Double(max(0, position.milliseconds - timelineOffset)) / 1000
    }

    /// Carries out a seek asked for through ``control``; returns how to read on when the source must be
    /// read again: from its start (the target is before what has arrived), or from the keyframe a file's
    /// index points to (far ahead or back).
    private func applySeek() -> LoopExit? {
        guard let target = control.takeSeek() else { return nil }
        guard onDemand || !everConnected else {
            logger.debug("seek ignored: live stream")
            return nil
        }
        let media = MediaTimestamp(milliseconds: target.milliseconds + timelineOffset)
        let parameters = engine.parameters
        engine = PlaybackEngine(parameters: parameters, limits: configuration.bufferLimits)
        engine.expectsVideo = videoConfiguration != nil || expectsVideo
        presenter.reset()
        decoding.reset()
        drain = nil
        ending = nil
        videoDrained = false
        transportFinished = false
        hasBegun = false
        lastProgress = nil
        report(Reports.seekStarted(to: target))
        switch admission.seek(to: media) {
        case .offset(let position)?: return readAgain(from: position)
        case .start?: return readAgain(from: nil)
        case nil: return nil
        }
    }

    /// Forgets where reading had got to, for a new read from `offset` (`nil`: the start).
    private func readAgain(from offset: Int64?) -> LoopExit {
        transportFinished = false
        ending = nil
        engine.inputEnded = false
        drain = nil
        videoDrained = false
        admission.readAgain()
        stitcher = TimelineStitcher()
        return offset.map { .readFrom($0) } ?? .readAgain
    }

    private func decode(_ packet: EncodedPacket) {
        take(decoding.decode(packet, poster: !sawFrame && presenter.framesShown == 0))
    }

    /// Carries out what the decode stage did: pictures and sound to the presenter, problems reported.
    private func take(_ outputs: [DecodeStage.Output]) {
        for output in outputs {
            switch output {
            case .video(let frame):
                firstFrame()
                presenter.enqueue(frame)
            case .poster(let frame):
                firstFrame()
                presenter.enqueue(frame, isPoster: true)
            case .audio(let frame):
                if !decoding.decodesVideo, !expectsVideo { firstFrame() }
                presenter.enqueue(frame)
            case .started, .videoDecoderFailedToOpen, .audioDecoderFailedToOpen, .failed:
                if let report = Reports.decoding(output) { self.report(report) }
            }
        }
    }

    private func firstFrame() {
        guard !sawFrame else { return }
        sawFrame = true
        startup.record(\.firstDecoded, elapsed)
    }

    private func flushVideo() {
        take(decoding.flushVideo())
    }

    private func flushDecoders() {
        take(decoding.flushVideo() + decoding.flushAudio())
    }
}
