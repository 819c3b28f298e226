import LivePlayBuffering
import LivePlayCore
import LivePlayDecode

/// Play-out's standby variant, for a session a ``PreloadPool`` keeps ready: while its budget is set, only the newest
/// GOPs within it stay, each new keyframe is decoded into the poster a switch shows first, and nothing is presented;
/// then the switch to the session, told when its first picture reaches the sink. ``PlayOut`` asks it on each turn.
struct StandbyPlayOut {
    /// What may be held and read while preloading; nil once a player switched here (or for a session that never
    /// preloaded).
    private(set) var budget: PreloadBudget?
    /// The newest keyframe decoded into the poster, and the poster's presentation time.
    private var posterKeyframe: MediaTimestamp?
    private(set) var posterPTS: MediaTimestamp?
    /// The keyframe a rendition switch asked this session to start at, by its presentation time.
    var start: MediaTimestamp?
    /// A switch to this session waiting for its first picture at the sink.
    private(set) var pendingSwitch: SwitchRequest?
    /// The pictures the buffer let go while preloading (newer GOPs replacing older ones): not drops of playback.
    private(set) var droppedWhilePreloading = 0

    init(budget: PreloadBudget?) {
        self.budget = budget
    }

    var isPreloading: Bool { budget != nil }

    /// Whether more may be read now, while preloading (nil: not preloading, play-out's own rule applies).
    func hasRoom(_ buffer: JitterBuffer) -> Bool? {
        guard let budget else { return nil }
        switch budget.reading {
        case .newestGroup: return buffer.byteCount < budget.bytesPerStream
        case .pauseAfterFirstGroup: return posterKeyframe == nil && buffer.byteCount < budget.bytesPerStream
        }
    }

    /// A new budget from the pool, or none: preloading ends. `dropped`: what the buffer has dropped so far.
    mutating func follow(_ budget: PreloadBudget?, dropped: Int) {
        if isPreloading, budget == nil { droppedWhilePreloading = dropped }
        self.budget = budget
    }

    /// A player switched to this session: preloading ends, and the switch is told when its first picture is shown.
    mutating func switched(_ request: SwitchRequest, dropped: Int) {
        follow(nil, dropped: dropped)
        pendingSwitch = request
    }

    /// Keeps the newest GOP (from the keyframe a rendition switch asked to start at, by its presentation time, when
    /// the buffer has it) and returns a new poster to put in front when that GOP's keyframe is new: decoded by
    /// `decodePoster`, when the session decodes at all.
    mutating func keepNewestGroup(
        _ engine: inout PlaybackEngine, startingAt start: MediaTimestamp?, decodes: Bool,
        decodePoster: (EncodedPacket) -> VideoFrame?
    ) -> VideoFrame? {
        let from = start.flatMap { start in engine.buffer.keyframes.first { $0.pts == start }?.dts }
        guard let keyframe = engine.keepNewestGroup(from: from), keyframe.dts != posterKeyframe, decodes else {
            return nil
        }
        posterKeyframe = keyframe.dts
        guard let poster = decodePoster(keyframe) else { return nil }
        posterPTS = poster.pts
        return poster
    }

    /// A picture reached the sink: the report of the switch that waited for it, once.
    mutating func shown(_ frame: VideoFrame) -> Report? {
        guard let request = pendingSwitch else { return nil }
        pendingSwitch = nil
        return request.rendition
            ? Reports.streamSwitched(after: request.waited, at: frame.pts)
            : Reports.switched(after: request.waited, preloaded: request.preloaded)
    }
}
