public import LivePlayCore

/// What the play loop must do after a turn of the engine.
public enum PlaybackAction: Sendable, Hashable {
    /// Hand this packet to its decoder now (its decode time is within the look-ahead).
    case decode(EncodedPacket)
    /// The buffer ran dry: `PLAY_EVT_PLAY_LOADING`.
    case loading(buffered: Duration)
    /// Playback (re)started: `PLAY_EVT_PLAY_BEGIN`; `stalled` is how long it had stopped (nil at start).
    case begin(buffered: Duration, stalled: Duration?)
    /// The playback rate changed (audio is time-stretched to it).
    case rateChanged(Double)
    /// Latency was removed by skipping whole GOPs before decoding.
    case skipped(removed: Duration, droppedVideoFrames: Int)
    /// A faster rate started removing `excess` of latency.
    case catchUpStarted(excess: Duration)
    /// The rate is back to 1.0 after removing `removed`.
    case catchUpEnded(removed: Duration)
    /// No media has arrived for `gap`, more than the mode tolerates (`tolerated`): once per gap.
    case arrivalGap(gap: Duration, tolerated: Duration)
}

/// The player's heart as a value type: the jitter buffer, the latency controller of the three modes,
/// and the playback position, advanced by the play loop with the time it reads (STYLE.md rules 2–3).
///
/// Position is the media time being presented; it advances at ``rate`` while playing. Packets are
/// released for decoding when their decode time is within ``lookAhead`` of the position. When the
/// position reaches the live edge the buffer has run dry: loading, until ``resumeLevel`` is buffered.
/// While playing, excess latency over the target is removed by a proportional rate increase (up to
/// `maximumRate`) or, beyond `skipExcess`, by skipping to a keyframe.
public struct PlaybackEngine: Sendable {
    public enum State: Sendable, Hashable {
        case waitingForKeyframe
        case loading
        case playing
    }

    public var parameters: LatencyParameters {
        didSet { target = clampTarget(target) }
    }
    public var lookAhead: Duration = .milliseconds(150)
    public private(set) var buffer: JitterBuffer
    public private(set) var state = State.waitingForKeyframe
    /// Media time being presented, at full resolution (rates move it by fractions of a millisecond).
    private var playhead: Duration?
    /// Media time being presented.
    public private(set) var position: MediaTimestamp? {
        get { playhead.map { MediaTimestamp(milliseconds: $0.milliseconds) } }
        set { playhead = newValue.map { .milliseconds($0.milliseconds) } }
    }
    public private(set) var rate = 1.0
    /// Paused by the user: the position holds, nothing is released, media keeps arriving into the buffer.
    public private(set) var isPaused = false
    /// The stream announced video (metadata, a sequence header): playback waits for the first keyframe
    /// instead of starting on audio, until `videoWaitLimit` of audio is buffered (then it starts without).
    public var expectsVideo = false
    public var videoWaitLimit = Duration.seconds(5)
    /// No more media will arrive (the file or the stream ended): what is buffered plays without waiting for
    /// the resume level.
    public var inputEnded = false
    /// The latency the controller steers to (fixed `cacheTime`, or adaptive within [min, max]).
    public private(set) var target: Duration
    private var lastAdvance: Duration?
    private var stalledSince: Duration?
    private var hasStarted = false
    /// What must be buffered to start the first time, when less than the resume level: a stream switched to while
    /// another played (another rendition of it) goes on with what it holds rather than filling the target first.
    public var startLevel: Duration?
    private var catchUpExcess: Duration?
    private var jitter = ArrivalJitter()
    private var backlog = ArrivalBacklog()
    /// When resuming began to wait for an outage's backlog to land.
    private var holdingSince: Duration?
    /// What the stall under way added to the target (auto; zero when it will add nothing), until playback begins
    /// again.
    private var stallRaise: Duration?
    /// Any video arrived (keyframe or not): then playback waits for a keyframe, never starts on audio.
    private var sawVideo = false
    private var lastArrival: Duration?
    private var reportedGap = false
    /// An exact seek's target: playback starts here, not at the keyframe before it (``startAt(_:)``).
    private var startFloor: MediaTimestamp?

    public init(parameters: LatencyParameters, limits: JitterBuffer.Limits = JitterBuffer.Limits()) {
        self.parameters = parameters
        self.buffer = JitterBuffer(limits: limits)
        self.target = parameters.autoAdjustCacheTime ? parameters.minAutoAdjustCacheTime : parameters.cacheTime
    }

    /// Live edge minus position: how far behind the newest media playback is.
    public var bufferLatency: Duration {
        guard let playhead, let edge = buffer.liveEdge else { return .zero }
        return max(.zero, .milliseconds(edge.milliseconds) - playhead)
    }

    /// What must be buffered to start or resume playing.
    public var resumeLevel: Duration {
        parameters.autoAdjustCacheTime ? target : parameters.cacheTime
    }

    /// Measured arrival jitter (spread of arrival lateness over the recent window).
    public var arrivalJitter: Duration { jitter.spread }

    /// The longest a resume waits for an outage's backlog to land.
    public static let backlogWaitLimit = Duration.seconds(1)
    /// The latency within which the rate stays 1.0 (and a landing backlog is not waited for): `rateDeadBand`,
    /// or a quarter of the target when that is smaller, so a 0.2 s target is held to 0.25 s, not 0.3 s.
    public var deadBand: Duration { min(parameters.rateDeadBand, target / 4) }
    /// Catching up at the maximum rate for this long is quick; an excess beyond what it removes in this time is
    /// skipped when the picture is frozen anyway (at a resume).
    public static let quickCatchUp = Duration.seconds(3)

    /// How long ago the media at the position was made: now minus the position minus the on-time transit
    /// (``ArrivalBacklog``). Playing at 1.0× keeps it constant however late the media arrives; a stall adds to it.
    public func endToEndLatency(at now: Duration) -> Duration? {
        guard let playhead, let onTime = backlog.onTimeTransit else { return nil }
        return now - playhead - onTime
    }

    /// Latency once the media still landing has arrived: ``bufferLatency`` plus, while media arrives faster
    /// than real time, what the source has made that has not arrived yet.
    public func projectedLatency(at now: Duration) -> Duration {
        guard backlog.isBursting(at: now) else { return bufferLatency }
        return bufferLatency + backlog.pending(edge: buffer.liveEdge, at: now)
    }

    /// A packet arrived at `now`.
    public mutating func receive(_ packet: EncodedPacket, at now: Duration) -> [PlaybackAction] {
        jitter.record(media: packet.dts, at: now)
        backlog.record(media: packet.dts, at: now)
        lastArrival = now
        reportedGap = false
        if packet.kind == .video { sawVideo = true }
        if state == .waitingForKeyframe {
            // Start at a keyframe: anything before it cannot be decoded.
            guard packet.kind == .audio || packet.isKeyframe else { return [] }
            if packet.kind == .video || buffer.isEmpty {
                if packet.kind == .video {
                    while let first = buffer.first, first.dts < packet.dts { _ = buffer.removeFirst() }
                }
                let start = buffer.first.map { min($0.dts, packet.dts) } ?? packet.dts
                position = startFloor.map { max(start, $0) } ?? start
            }
            if packet.kind == .video { state = .loading }
        }
        let dropped = buffer.droppedVideoFrames
        buffer.append(packet)
        if buffer.droppedVideoFrames > dropped, let oldest = buffer.oldest, let position, oldest > position {
            // The buffer hit a hard limit and shed its oldest GOP: the position moves with it.
            self.position = oldest
            return [.skipped(removed: oldest - position, droppedVideoFrames: buffer.droppedVideoFrames - dropped)]
        }
        return []
    }

    /// Starts playback at `target` rather than at the keyframe at or before it (an exact seek): what lies
    /// between is released at once, to be decoded for the pictures that follow and not shown (``Presenter``).
    /// Call before the first packet.
    public mutating func startAt(_ target: MediaTimestamp) {
        startFloor = target
    }

    /// How long media may stop arriving before it is reported (`PLAY_WARNING_RECV_DATA_LAG`): half the
    /// target cache, at least `videoBlockThreshold`. A shorter gap is the jitter the cache is there to absorb.
    public var toleratedArrivalGap: Duration {
        max(parameters.videoBlockThreshold, resumeLevel / 2)
    }

    /// Advances playback to `now` and returns what to do.
    ///
    /// - Parameter master: where a real-time audio sink has got to, when one is the master clock; while
    ///   playing, the position follows it instead of advancing by the elapsed time.
    public mutating func advance(to now: Duration, following master: MediaTimestamp? = nil) -> [PlaybackAction] {
        var actions: [PlaybackAction] = []
        advance(to: now, following: master, into: &actions)
        return actions
    }

    /// ``advance(to:following:)``, appending what to do to `actions`: a play loop that keeps one array for it
    /// allocates nothing on its turns.
    public mutating func advance(
        to now: Duration, following master: MediaTimestamp? = nil, into actions: inout [PlaybackAction]
    ) {
        let elapsed = lastAdvance.map { now - $0 } ?? .zero
        lastAdvance = now
        adaptTarget(elapsed: elapsed)
        if let lastArrival, !reportedGap, now - lastArrival > toleratedArrivalGap {
            reportedGap = true
            actions.append(.arrivalGap(gap: now - lastArrival, tolerated: toleratedArrivalGap))
        }
        guard !isPaused else { return }
        switch state {
        case .waitingForKeyframe:
            // An audio-only stream starts once audio is buffered to the resume level; one that announced video
            // waits for its first keyframe (a server without a GOP cache sends audio until then), within limits.
            let audioNeeded = expectsVideo ? max(resumeLevel, videoWaitLimit) : resumeLevel
            if !sawVideo, buffer.duration >= audioNeeded || inputEnded, position != nil {
                state = .loading
            }
        case .loading:
            skipGap()
            raiseTargetIfStuttering(at: now)
            let level = hasStarted ? resumeLevel : min(resumeLevel, startLevel ?? resumeLevel)
            let loaded = bufferLatency >= level || buffer.duration >= level
            if loaded, hasStarted, !inputEnded, isBacklogLanding(at: now) {
                // An outage's backlog is arriving at link speed: resuming now would see only part of it.
            } else if loaded || (inputEnded && !buffer.isEmpty) {
                holdingSince = nil
                stallRaise = nil
                if hasStarted, parameters.autoAdjustCacheTime { resumeAtTarget(into: &actions) }
                state = .playing
                let stalled = stalledSince.map { now - $0 }
                stalledSince = nil
                actions.append(.begin(buffered: bufferLatency, stalled: hasStarted ? stalled : nil))
                hasStarted = true
            }
        case .playing:
            if let master {
                playhead = .milliseconds(master.milliseconds)
            } else {
                playhead = playhead.map { $0 + elapsed * rate }
            }
            if let position, let edge = buffer.liveEdge, position > edge {
                // Ran dry: hold at the edge and load.
                self.position = edge
                state = .loading
                stalledSince = now - Duration.seconds(((position - edge).seconds) / rate)
                setRate(1.0, into: &actions)
                actions.append(.loading(buffered: .zero))
            } else {
                skipGap()
                control(at: now, into: &actions)
            }
        }
        release(into: &actions)
    }

    /// Auto: a stall that lasts `videoBlockThreshold` (a stutter, `PLAY_WARNING_VIDEO_PLAY_LAG`) raises the target
    /// by `rebufferIncrement`, and so what this stall waits for. A shorter one (the buffer ran dry for a few
    /// milliseconds as the media came in) is no evidence the link needs more cache.
    private mutating func raiseTargetIfStuttering(at now: Duration) {
        guard parameters.autoAdjustCacheTime, hasStarted, stallRaise == nil, let stalledSince,
            now - stalledSince >= parameters.videoBlockThreshold
        else { return }
        let raised = clampTarget(target + parameters.rebufferIncrement)
        stallRaise = raised - target
        target = raised
    }

    /// Media of a new connection arrived. A stall under way was the connection's loss, not the network's jitter:
    /// auto takes back what the stall added to its target, or will not add it (a reset and a reconnect to a GOP
    /// cache say nothing about how much cache the link needs).
    public mutating func connectionRestarted() {
        guard state == .loading, hasStarted else { return }
        if let raised = stallRaise { target = clampTarget(target - raised) }
        // Nothing more to add for this stall.
        stallRaise = .zero
    }

    /// Playback began (``PlaybackAction/begin(buffered:stalled:)``) in a turn that then decoded what it released, at
    /// once: the look-ahead's worth, 150 ms of pictures, which at 1080p60 takes about as long to decode. The clock
    /// starts when that is done, at `now`, not at the turn's start: otherwise the next turn finds the position
    /// already past the first of those pictures and drops them as late (6 of a 1080p60 stream's first 9).
    public mutating func clockStarts(at now: Duration) {
        guard state == .playing, let lastAdvance, now > lastAdvance else { return }
        self.lastAdvance = now
    }

    /// Holds playback where it is (TXLivePlayer's `pause`); the buffer keeps filling within its limits.
    public mutating func pause() {
        isPaused = true
        catchUpExcess = nil
        rate = 1.0
    }

    /// Resumes a live stream at the newest media that still leaves the cache buffered (TXLivePlayer's live
    /// `resume` jumps to the newest data): whole GOPs are skipped, then playback begins once loaded.
    /// Media on demand (`jumpsToNewest` false) resumes where it paused.
    public mutating func resume(jumpsToNewest: Bool = true) -> [PlaybackAction] {
        guard isPaused else { return [] }
        isPaused = false
        guard jumpsToNewest else {
            lastAdvance = nil
            return []
        }
        var actions: [PlaybackAction] = []
        let before = buffer.droppedVideoFrames
        let removed = buffer.skip(keeping: resumeLevel)
        if removed > .zero, let oldest = buffer.oldest {
            position = oldest
            actions.append(.skipped(removed: removed, droppedVideoFrames: buffer.droppedVideoFrames - before))
        }
        if state == .playing { state = .loading }
        stalledSince = nil
        return actions
    }

    /// Goes to the live edge now (a viewer's “go live”): the buffer is dropped to its newest keyframe, whole
    /// GOPs before decoding, and playback goes on from there. Only while playing a live stream.
    public mutating func jumpToLiveEdge() -> [PlaybackAction] {
        guard !isPaused, state == .playing, let from = position else { return [] }
        let before = buffer.droppedVideoFrames
        guard buffer.skip(keeping: .zero) > .zero, let oldest = buffer.oldest, oldest > from else { return [] }
        position = oldest
        return [.skipped(removed: oldest - from, droppedVideoFrames: buffer.droppedVideoFrames - before)]
    }

    /// Preloading: nothing plays, and only the newest GOPs are kept: from the newest video keyframe that still
    /// leaves what loading waits for (the resume level), with the sound of their time; older media is dropped as
    /// newer arrives. Playback, once asked for, starts from that keyframe at once, at the target latency.
    /// Returns the keyframe the buffer starts at, if it holds one.
    ///
    /// - Parameter start: the decode time of a keyframe held to start at instead (a switch between renditions,
    ///   at the keyframe both streams share).
    public mutating func keepNewestGroup(from start: MediaTimestamp? = nil) -> EncodedPacket? {
        guard state != .playing, !hasStarted else { return nil }
        if let start, let edge = buffer.liveEdge, start <= edge {
            _ = buffer.skip(keeping: edge - start)
        } else {
            _ = buffer.skip(keeping: resumeLevel)
        }
        guard let keyframe = buffer.firstVideo, keyframe.isKeyframe else { return nil }
        position = buffer.oldest.map { min($0, keyframe.dts) } ?? keyframe.dts
        return keyframe
    }

    /// Media missing between the position and the oldest packet (a reconnect's gap, already reported
    /// as a discontinuity) is not waited through: the position moves to the oldest packet.
    private mutating func skipGap() {
        // Released packets leave the buffer up to the look-ahead, so a normal "gap" is that plus a frame.
        guard hasStarted, let oldest = buffer.oldest, let position,
            oldest > position + lookAhead + .milliseconds(250)
        else { return }
        self.position = oldest - lookAhead
    }


    /// After a stall, resuming waits (at most ``backlogWaitLimit``) while an outage's backlog is landing (media
    /// arriving faster than real time, more of it still to come), so the skip that follows decides on all of it
    /// while the picture is frozen anyway, instead of playing on and skipping visibly a moment later. A link
    /// slower than the stream is not waited for: what it brings late would only be skipped.
    private mutating func isBacklogLanding(at now: Duration) -> Bool {
        guard parameters.autoAdjustCacheTime, backlog.isBursting(at: now),
            backlog.pending(edge: buffer.liveEdge, at: now) > deadBand / 2
        else { return false }
        let since = holdingSince ?? now
        holdingSince = since
        return now - since < Self.backlogWaitLimit
    }

    /// Far behind after a stall (an outage's backlog), by more than the maximum rate removes in
    /// ``quickCatchUp``: the picture is frozen anyway, so playback resumes at the target latency instead of
    /// catching up for seconds or skipping visibly just after it resumed. Whole GOPs up to the newest keyframe
    /// that leaves the target are dropped, and the position moves on to the target itself: the frames between
    /// that keyframe and it are decoded but not shown (a precise seek, as mpv's hr-seek does).
    private mutating func resumeAtTarget(into actions: inout [PlaybackAction]) {
        let quick = Duration.seconds((parameters.maximumRate - 1) * Self.quickCatchUp.seconds)
        guard bufferLatency - target > min(quick, parameters.skipExcess), let edge = buffer.liveEdge,
            let from = position
        else { return }
        let before = buffer.droppedVideoFrames
        _ = buffer.skip(keeping: target)
        let to = edge - target
        let passed = buffer.videoPackets(before: to)
        position = to
        actions.append(.skipped(removed: to - from, droppedVideoFrames: buffer.droppedVideoFrames - before + passed))
    }

    /// Rate and skip decisions while playing, on the latency a landing backlog will bring.
    private mutating func control(at now: Duration, into actions: inout [PlaybackAction]) {
        let coming = projectedLatency(at: now) - bufferLatency
        skipIfFarBehind(excess: parameters.skipExcess - coming, keeping: target, into: &actions)
        // The rate moves only on an excess the buffer and the end-to-end latency agree on. Media arriving late
        // (jitter) empties the buffer while the end-to-end latency stays where it was: that is the cache doing
        // its job, not a reason to slow down and add latency for good (nor to speed up when the late media
        // lands). A stall's backlog raises both.
        let buffered = bufferLatency + coming - target
        let endToEnd = endToEndLatency(at: now).map { $0 - target } ?? buffered
        let remaining: Duration =
            if buffered > .zero, endToEnd > .zero { min(buffered, endToEnd) }
            else if buffered < .zero, endToEnd < .zero { max(buffered, endToEnd) }
            else { .zero }
        guard parameters.autoAdjustCacheTime else {
            setRate(1.0, into: &actions)
            return
        }
        var newRate = 1.0
        if remaining > deadBand || remaining < .zero - deadBand {
            newRate = 1.0 + parameters.rateGain * remaining.seconds
            newRate = min(parameters.maximumRate, max(parameters.minimumRate, newRate))
        } else if rate > 1.0, remaining > .zero {
            // Finish a catch-up down to the target rather than stopping at the dead band's edge.
            newRate = min(parameters.maximumRate, 1.0 + parameters.rateGain * remaining.seconds)
        }
        if newRate > 1.0, catchUpExcess == nil {
            catchUpExcess = remaining
            actions.append(.catchUpStarted(excess: remaining))
        } else if newRate <= 1.0, let started = catchUpExcess {
            catchUpExcess = nil
            actions.append(.catchUpEnded(removed: max(.zero, started - max(.zero, remaining))))
        }
        setRate((newRate * 1000).rounded() / 1000, into: &actions)
    }

    /// A latency more than `excess` over the target is removed at once: whole GOPs, up to the newest keyframe
    /// that still leaves `keep` buffered.
    private mutating func skipIfFarBehind(
        excess: Duration, keeping keep: Duration, into actions: inout [PlaybackAction]
    ) {
        guard bufferLatency - target > excess else { return }
        let before = buffer.droppedVideoFrames
        let removed = buffer.skip(keeping: keep)
        if removed > .zero, let oldest = buffer.oldest {
            position = max(position ?? oldest, oldest)
            actions.append(.skipped(removed: removed, droppedVideoFrames: buffer.droppedVideoFrames - before))
        }
    }

    private mutating func setRate(_ newRate: Double, into actions: inout [PlaybackAction]) {
        guard newRate != rate else { return }
        rate = newRate
        actions.append(.rateChanged(newRate))
    }

    /// Auto: the target follows measured jitter, rises after stalls (in `advance`), decays when calm.
    private mutating func adaptTarget(elapsed: Duration) {
        guard parameters.autoAdjustCacheTime else {
            target = parameters.cacheTime
            return
        }
        // Four times the mean jitter covers nearly all late packets of a jittery but steady link.
        let floor = clampTarget(jitter.spread * 4)
        if target > floor {
            let decay = Duration.seconds(parameters.targetDecayPerSecond.seconds * elapsed.seconds)
            target = max(floor, target - decay)
        } else {
            target = floor
        }
    }

    private func clampTarget(_ value: Duration) -> Duration {
        guard parameters.autoAdjustCacheTime else { return parameters.cacheTime }
        return min(parameters.maxAutoAdjustCacheTime, max(parameters.minAutoAdjustCacheTime, value))
    }

    /// Releases packets whose decode time is within the look-ahead of the position.
    private mutating func release(into actions: inout [PlaybackAction]) {
        guard state == .playing || (state == .loading && !hasStarted), let position else { return }
        // Before the first begin, the first keyframe is decoded at once so the first frame shows early.
        let horizon = state == .playing ? position + lookAhead : position
        while let first = buffer.first, first.dts <= horizon {
            actions.append(.decode(buffer.removeFirst()!))
        }
    }
}
