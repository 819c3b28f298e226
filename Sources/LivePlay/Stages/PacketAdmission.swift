import LivePlayBuffering
import LivePlayCore
import LivePlayFLV

/// Which received packets go on to the jitter buffer, and where the source is read from next.
///
/// A pure stage between demuxing and buffering. Live media is admitted as it comes. Media on demand resumes
/// where a broken connection stopped (each kind's packets up to what was already received are passed over),
/// a seek admits packets from the keyframe at or before its target (``SeekFilter``), and a seek that a file's
/// `keyframes` index can shorten asks to read on from that keyframe's byte offset instead of reading there.
struct PacketAdmission {
    /// What to do with one received packet.
    enum Verdict {
        /// To the jitter buffer.
        case admit(EncodedPacket)
        /// What a seek lets through so far, in order (possibly nothing); `seekDone` says where it landed (the first
        /// of them).
        case admitSeeking([EncodedPacket], seekDone: SeekFilter?)
        /// Not wanted: already played before a reconnect, before a seek's keyframe, or read elsewhere next.
        case passOver
        /// A seek on a live stream: playing from now; the packet is admitted.
        case seekIgnored(EncodedPacket)
    }

    /// Where to read the source from next, when the current read is no longer wanted.
    enum ReadFrom: Equatable {
        case start
        case offset(Int64)
    }

    /// A seek reads on rather than jumping by byte offset when the target is this close ahead.
    static var jumpThreshold: Duration { .seconds(2) }

    /// Whether the source can start mid-file, and where a file's `keyframes` index says each keyframe is.
    var seeksByOffset = false
    private var keyframeIndex: [KeyframePosition] = []
    /// The newest decode timestamps received, in all and of each kind.
    private(set) var newestReceived: MediaTimestamp?
    private(set) var newestVideo: MediaTimestamp?
    private var newestAudio: MediaTimestamp?
    /// Media on demand after a reconnect: what was already received of each kind.
    private var resumeAfter: (video: MediaTimestamp?, audio: MediaTimestamp?)?
    private var seek: SeekFilter?
    /// A byte offset to read on from, once decided; taken by the play loop.
    private(set) var jumpTo: Int64?

    /// A file's metadata arrived: its keyframe index, if the source can start at one.
    mutating func received(_ metadata: FLVMetadata) {
        if seeksByOffset, keyframeIndex.isEmpty { keyframeIndex = metadata.keyframeIndex }
    }

    /// A connection of media on demand starts again after a loss: the file is read again from its start,
    /// and what was already had is passed over.
    mutating func resumeAfterLoss() {
        resumeAfter = (newestVideo, newestAudio)
    }

    /// Judges one received packet (its timestamps on the playback timeline).
    mutating func admit(_ packet: EncodedPacket, onDemand: Bool) -> Verdict {
        newestReceived = max(newestReceived ?? packet.dts, packet.dts)
        // Waiting to read from elsewhere (a jump by the index): what still comes from here is not wanted.
        guard jumpTo == nil else { return .passOver }
        if let resume = resumeAfter, let newest = packet.kind == .video ? resume.video : resume.audio,
            packet.dts <= newest
        {
            return .passOver
        }
        if packet.kind == .video { newestVideo = max(newestVideo ?? packet.dts, packet.dts) }
        if packet.kind == .audio { newestAudio = max(newestAudio ?? packet.dts, packet.dts) }
        guard var filter = seek else { return .admit(packet) }
        guard onDemand else {
            seek = nil
            return .seekIgnored(packet)
        }
        if let entry = indexEntry(at: filter.target),
            Double(entry.time * 1000) > Double(packet.dts.milliseconds) + Self.jumpThreshold.seconds * 1000
        {
            // The sequence headers have been read; the rest up to the target need not be.
            jumpTo = entry.position
            return .passOver
        }
        let admitted = filter.admit(packet)
        seek = filter.isDone ? nil : filter
        return .admitSeeking(admitted, seekDone: filter.isDone && !admitted.isEmpty ? filter : nil)
    }

    /// Starts a seek to `target` (on the playback timeline); says where to read from when what has arrived
    /// cannot serve it: the start (the target is behind), or a keyframe's offset (far ahead or behind).
    mutating func seek(to target: MediaTimestamp) -> ReadFrom? {
        seek = SeekFilter(target: target)
        resumeAfter = nil
        let behind = newestReceived.map { target <= $0 } ?? false
        let farAhead = newestReceived.map { $0 + Self.jumpThreshold.milliseconds < target } ?? false
        if let entry = indexEntry(at: target), entry.position > 0, behind || farAhead { return .offset(entry.position) }
        return behind ? .start : nil
    }

    /// A seek whose target no packet has reached yet: at the end of the input, the target was past the end.
    var unreachedSeek: MediaTimestamp? { seek.map(\.target) }

    /// The play loop takes the offset to read on from.
    mutating func takeJump() -> Int64? {
        defer { jumpTo = nil }
        return jumpTo
    }

    /// A new read of the source starts: nothing of it has been received yet.
    mutating func readAgain() {
        newestReceived = nil
        newestVideo = nil
        newestAudio = nil
    }

    /// The index entry of the keyframe at or before `target`, when the source can start there.
    private func indexEntry(at target: MediaTimestamp) -> KeyframePosition? {
        guard seeksByOffset else { return nil }
        return keyframeIndex.last { $0.time * 1000 <= Double(target.milliseconds) }
    }
}
