import LivePlayBuffering
import LivePlayCore
import LivePlayDecode
import Logging

/// The play-out side of the play loop: jitter buffer and latency controller (``PlaybackEngine``), the
/// ``DecodeStage`` and the ``Presenter``, advanced together once a turn.
///
/// The engine decides when each packet is decoded and whether playback waits, catches up or skips; this
/// stage carries that out, hands the presenter what was decoded, and at the end of the input plays out what
/// the decoders still hold. What it did is told to the ``SessionReporter``.
///
/// Four files: the turn here (the engine's actions, the begin gate, the end); what comes in (`PlayOutInput.swift`),
/// what goes out to the presenter and the reports (`PlayOutOutput.swift`), and the commands routed to it
/// (`PlayOutControl.swift`).
final class PlayOut {
    /// How playback ends once the transport is done and what it delivered has been played.
    enum Ending {
        case ended
        case failed(PlayEventCode, String, String?)
    }

    var engine: PlaybackEngine
    let presenter: Presenter
    let decoding: DecodeStage
    var captions: CaptionStage
    /// A session's first picture and a preloaded stream's poster, each a keyframe decoded on its own.
    let posters: PosterDecoder
    let reporter: SessionReporter
    /// What is said at debug level only (a device `auto` found, or did not).
    let logger: Logger
    /// Pause, resume, latency and presentation changes asked for from other tasks; pictures shown, for them.
    let control: PlaybackControl
    let decodes: Bool
    /// A seek shows the picture at its target, decoded from the keyframe before it
    /// (``LivePlayConfiguration/accurateSeek``).
    let accurateSeek: Bool
    private let limits: JitterBuffer.Limits
    /// Media on demand (a file, an HTTP response with a length): played from its start at 1.0×, paced by its
    /// timestamps, read only as far ahead as ``onDemandReadAhead``; never caught up or skipped.
    private(set) var onDemand = false
    /// The transport is done: no more input until the source is read again.
    var transportFinished = false
    /// Playback began (`PLAY_EVT_PLAY_BEGIN`) since the start or the last seek.
    private(set) var hasBegun = false
    /// `PLAY_EVT_PLAY_BEGIN` waits for the first picture (or sound, without video): never claimed for a stream
    /// that cannot be shown.
    var beginGate = BeginGate()
    /// The stream's header or metadata announced video: the first picture, not the first sound, is the first
    /// frame.
    var videoAnnounced = false
    var ending: Ending?
    /// The end being played out, after the engine ran dry.
    private var drain: EndDrain?
    /// The transport is done and every video packet has gone to the decoder: what it holds was drained.
    var videoDrained = false
    /// A frame was decoded on this connection.
    var sawFrame = false
    /// Preloading (``PreloadPool``) and the switch to this session.
    var standby: StandbyPlayOut
    /// What the session's control set that lasts (volume, mute, layout): the presenter follows it.
    var settings = PlaybackSettings() {
        didSet { present(settings) }
    }
    /// What this turn makes known to the control's owner: published at its end (``publish(ended:)``).
    var published = PublishedPlayback()
    /// `LIVEPLAY_EVT_AUDIO_VOLUME` once an interval: the peak of the sound handed to the sink since the last one.
    var volume = VolumeEvaluation()
    /// What the engine said to do this turn: one array kept for every turn, so a turn allocates none.
    private var actions: [PlaybackAction] = []

    init(
        configuration: LivePlayConfiguration, presenter: Presenter, control: PlaybackControl, reporter: SessionReporter,
        logger: Logger = Logger(label: "liveplay")
    ) {
        engine = PlaybackEngine(parameters: configuration.latency, limits: configuration.bufferLimits)
        decoding = DecodeStage(options: configuration.decoder)
        captions = CaptionStage(channel: configuration.captionChannel)
        // A poster is one keyframe, decoded at once: in software, whatever decodes the stream.
        var posterOptions = configuration.decoder
        posterOptions.hardware = .off
        posters = PosterDecoder(options: posterOptions)
        decodes = configuration.decodes
        accurateSeek = configuration.accurateSeek && configuration.decodes
        limits = configuration.bufferLimits
        self.presenter = presenter
        presenter.normalisesLoudness(to: configuration.loudness, logger: logger)
        self.control = control
        self.reporter = reporter
        self.logger = logger
        // A preloading pool's control outlives a session that fails: the next one is told it is on standby too.
        standby = StandbyPlayOut(budget: control.standbyBudget)
    }

    /// How far ahead of the position media on demand is read.
    static var onDemandReadAhead: Duration { .seconds(10) }

    /// Whether the play loop takes more from the transport now: live media as it comes (the engine sheds what
    /// is too old), media on demand only as far ahead as the read-ahead.
    var hasRoom: Bool {
        if let room = standby.hasRoom(engine.buffer) { return room }
        // What a time-shifted stream's pause leaves unread stays in the ring, not the jitter buffer.
        if readsFromRing, engine.isPaused { return false }
        guard onDemand else { return true }
        let buffer = engine.buffer
        return buffer.duration < Self.onDemandReadAhead && buffer.count < buffer.limits.packets / 2
            && buffer.byteCount < buffer.limits.bytes / 2
    }

    /// Media of the current connection has reached the engine.
    var connectionMedia = false
    /// Pictures dropped while playing; the GOPs a preloading session let go as newer ones came are not counted.
    var droppedFrames: Int {
        engine.buffer.droppedVideoFrames - standby.droppedWhilePreloading + presenter.droppedVideoFrames
    }

    /// The input is a time-shift ring (``LiveSession/playTimeShifted(_:_:)``): it waits there while paused.
    var readsFromRing = false
    /// The latency parameters a time-shifted stream returns to at its live edge (``playBehindLive()``).
    private var liveParameters: LatencyParameters?

    /// A time-shifted stream plays behind its live edge: at 1.0×, paced like media on demand, never caught up.
    func playBehindLive() {
        if !onDemand { liveParameters = engine.parameters }
        playOnDemand()
    }

    /// A time-shifted stream is back at its live edge: the latency mode applies again.
    func playLive() {
        onDemand = false
        if let liveParameters { engine.parameters = liveParameters }
        reporter.count { $0.ratesFollowPlayback = false }
    }

    func playOnDemand() {
        onDemand = true
        engine.parameters = .onDemand
        reporter.count { $0.ratesFollowPlayback = true }
    }

    // MARK: Seeks

    /// Starts over for a seek: nothing buffered, decoded or begun.
    func restart() {
        let expectsVideo = engine.expectsVideo || videoAnnounced
        engine = PlaybackEngine(parameters: engine.parameters, limits: limits)
        engine.expectsVideo = expectsVideo
        presenter.reset()
        decoding.reset()
        captions.reset()
        hasBegun = false
        beginGate.restart()
        readAgain()
    }

    /// The source is read again: its end is no longer reached.
    func readAgain() {
        transportFinished = false
        ending = nil
        engine.inputEnded = false
        drain = nil
        videoDrained = false
    }

    // MARK: Each turn

    /// Advances the engine to `now`, carries out what it decides, and presents what is due; returns how
    /// playback ends once the last pictures have been played out.
    func advance(at now: Duration) -> Ending? {
        if standby.isPreloading {
            // Nothing is played while preloading: a transport that is done ends it at once.
            if transportFinished { return ending ?? .ended }
            keepNewestGroup()
            return nil
        }
        // Switched to with the poster ready: it goes to the sink before this turn decodes anything.
        if standby.pendingSwitch != nil, presenter.framesShown == 0, let position = engine.position {
            presented(presenter.showFirstPicture(at: position))
        }
        let master = presenter.audioClock()
        engine.advance(to: now, following: master, into: &actions)
        // Emptied after the turn too: the payloads decoded, given back, are not still held here when reused.
        defer { actions.removeAll(keepingCapacity: true) }
        var began = false
        for action in actions {
            switch action {
            case .decode(let packet):
                // A session stopped during the turn (`--frames N` reached at the first picture, a front end's
                // stop) decodes no more of it: the loop ends at the next turn, and the burst the turn released
                // would be decoded for nothing (about 7 ms of a GOP cache's burst at 720p).
                if Task.isCancelled { continue }
                reporter.count { $0.played(packet) }
                if !sawFrame, presenter.framesShown == 0 { showAtOnce(packet) }
                take(decoding.decode(packet))
            case .loading(let buffered):
                if transportFinished {
                    startDrain(at: now)
                    break
                }
                reporter.report(Reports.loading(buffered: buffered, target: engine.target))
            case .begin(let buffered, let stalled):
                began = true
                guard hasBegun || beginGate.allows(decodes: decodes, framesShown: presenter.framesShown) else {
                    beginGate.hold(buffered: buffered, at: now)
                    break
                }
                reporter.began(first: !hasBegun, buffered: buffered, stalled: stalled, engine: engine, at: now)
                hasBegun = true
            case .skipped(let removed, let dropped):
                reporter.count { $0.caughtUp() }
                Reports.skipped(removed: removed, dropped: dropped).forEach(reporter.report)
            case .catchUpStarted(let excess):
                reporter.count { $0.caughtUp() }
                reporter.report(Reports.catchUpStarted(excess: excess, rate: engine.rate))
            case .catchUpEnded(let removed):
                reporter.report(Reports.catchUpEnded(removed: removed, latency: engine.bufferLatency))
            case .arrivalGap(let gap, let tolerated):
                // Media on demand is read only as fast as it is needed: a pause in reading with the read-ahead
                // full says nothing. A read that really stalls runs the buffer dry and is told as loading.
                guard !transportFinished, !onDemand else { break }
                reporter.report(Reports.arrivalGap(gap, tolerated: tolerated, buffered: engine.bufferLatency))
            case .rateChanged:
                break
            }
        }
        // The clock starts once the pictures this turn released at the start are decoded (without a sound device
        // to follow): none of them is late when presented.
        if began, master == nil { engine.clockStarts(at: reporter.time.elapsed) }
        if transportFinished, !videoDrained, !engine.buffer.holdsVideo {
            // The last pictures a B-frame decoder holds back come out now, to be shown at their times while
            // the rest of the sound plays.
            videoDrained = true
            take(decoding.flushVideo())
        }
        if let level = volume.level(at: now) { reporter.report(Reports.audioVolume(peak: level)) }
        if let drain {
            presented(presenter.present(at: drain.position(at: now), rate: 1))
            if drain.isOver(at: now, queuedPictures: presenter.queuedVideoFrames) { return ending ?? .ended }
        } else {
            present()
        }
        releaseHeldBegin(at: now)
        return nil
    }

    /// How long from `now` until this stage has something to do without new input: a picture or a block of sound
    /// falling due, the sound's level to report. `nil` when only input (or the loop's longest wait) moves it:
    /// loading, paused, preloading, a probe that decodes nothing.
    func timeToNextDue(at now: Duration) -> Duration? {
        if let drain { return presenter.timeToNextDue(at: drain.position(at: now), rate: 1) }
        guard !standby.isPreloading, engine.state == .playing, !engine.isPaused, let position = engine.position else {
            return nil
        }
        // Packets need no turn of their own: each turn releases the look-ahead's worth (150 ms) for decoding, and
        // the pictures of the turns before fall due well inside it.
        let next = presenter.timeToNextDue(at: position, rate: engine.rate)
        guard let level = volume.timeToNext(at: now) else { return next }
        return min(next ?? level, level)
    }

    /// Why a stream the engine plays is not playing yet (``NetStatus/reason``).
    var notPlayingReason: String? { beginGate.reason }

    /// `PLAY_EVT_PLAY_BEGIN` once the first picture or sound is out, or a warning that names why not.
    private func releaseHeldBegin(at now: Duration) {
        let step = beginGate.step(
            at: now, enginePlaying: engine.state == .playing, decodes: decodes, framesShown: presenter.framesShown)
        switch step {
        case .none:
            break
        case .begin(let buffered):
            reporter.began(first: true, buffered: buffered, stalled: nil, engine: engine, at: now)
            hasBegun = true
        case .warn(let video):
            let decoderOpen = video ? decoding.decodesVideo : decoding.decodesAudio
            reporter.report(Reports.nothingToPresent(video: video, hasDecoder: decoderOpen))
        }
    }

    /// Once the transport is done and the engine has released everything: playback ends when no picture is
    /// left to show.
    func endIfRanDry(at now: Duration) -> Ending? {
        guard drain == nil, transportFinished, engine.buffer.isEmpty,
            engine.state != .playing || engine.bufferLatency == .zero
        else { return nil }
        startDrain(at: now)
        return presenter.queuedVideoFrames == 0 ? ending ?? .ended : nil
    }

    /// The transport is done and the engine has released everything: drain the decoders and play out.
    private func startDrain(at now: Duration) {
        guard drain == nil else { return }
        if !videoDrained { take(decoding.flushVideo()) }
        videoDrained = true
        take(decoding.flushAudio())
        drain = EndDrain(since: now, from: engine.position ?? engine.buffer.liveEdge ?? MediaTimestamp(milliseconds: 0))
    }
}
