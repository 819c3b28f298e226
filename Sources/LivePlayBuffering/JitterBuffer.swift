public import LivePlayCore

/// Compressed packets waiting to be decoded, accounted in media duration, bytes and packets, each with
/// a hard limit, so a server that floods cannot grow memory past them.
///
/// Knows the live edge (the newest decode timestamp received) and sheds latency only as whole packets
/// from keyframe to keyframe: the decoder never sees a GOP with its head cut off.
public struct JitterBuffer: Sendable {
    public struct Limits: Sendable, Hashable {
        public var duration: Duration
        public var bytes: Int
        public var packets: Int

        /// Generous enough for the largest cache (5 s) plus a burst; a hard ceiling, not a target.
        public init(duration: Duration = .seconds(20), bytes: Int = 64 << 20, packets: Int = 8192) {
            self.duration = duration
            self.bytes = bytes
            self.packets = packets
        }
    }

    public let limits: Limits
    private var packets: [EncodedPacket] = []
    private var head = 0
    public private(set) var byteCount = 0
    /// Newest decode timestamp received (the live edge), across connections.
    public private(set) var liveEdge: MediaTimestamp?
    /// The presentation times of the newest video keyframes received (held still, or already played), oldest first:
    /// at most ``recentKeyframeCount``, kept as they arrive so that finding the next one to be played is no scan of the buffer.
    public private(set) var recentKeyframes: [MediaTimestamp] = []
    public static let recentKeyframeCount = 8
    /// Whole packets dropped so far to respect the limits or to catch up.
    public private(set) var droppedPackets = 0
    public private(set) var droppedVideoFrames = 0
    private var hasVideo = false
    /// Set when a GOP had to be dropped whole while still arriving: its remaining frames are dropped too.
    private var awaitingKeyframe = false

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    public var count: Int { packets.count - head }
    public var isEmpty: Bool { count == 0 }

    /// Decode timestamp of the oldest packet held.
    public var oldest: MediaTimestamp? { head < packets.count ? packets[head].dts : nil }

    /// Media held: live edge minus the oldest packet.
    public var duration: Duration {
        guard let oldest, let liveEdge else { return .zero }
        return liveEdge - oldest
    }

    /// Whether any video packet is held.
    public var holdsVideo: Bool {
        packets[head...].contains { $0.kind == .video }
    }

    /// The oldest video packet held.
    public var firstVideo: EncodedPacket? {
        packets[head...].first { $0.kind == .video }
    }

    /// The video keyframes held, oldest first: decode and presentation times.
    public var keyframes: [(dts: MediaTimestamp, pts: MediaTimestamp)] {
        packets[head...].filter { $0.kind == .video && $0.isKeyframe }.map { ($0.dts, $0.pts) }
    }

    /// What is held by kind: video packets, and audio as the span of its timestamps. A scan: for the
    /// once-per-second status, not for every packet.
    public var content: (videoPackets: Int, audioDuration: Duration) {
        var videoPackets = 0
        var firstAudio: MediaTimestamp?
        var lastAudio: MediaTimestamp?
        for packet in packets[head...] {
            if packet.kind == .video {
                videoPackets += 1
            } else {
                firstAudio = firstAudio ?? packet.dts
                lastAudio = packet.dts
            }
        }
        guard let firstAudio, let lastAudio else { return (videoPackets, .zero) }
        return (videoPackets, lastAudio - firstAudio)
    }

    /// The oldest packet, without removing it.
    public var first: EncodedPacket? { head < packets.count ? packets[head] : nil }

    /// Video packets buffered with a decode time before `time`.
    public func videoPackets(before time: MediaTimestamp) -> Int {
        packets[head...].prefix { $0.dts < time }.count { $0.kind == .video }
    }

    /// Adds a packet; sheds oldest GOPs if a limit would be exceeded. Returns the packets shed.
    @discardableResult
    public mutating func append(_ packet: EncodedPacket) -> Int {
        if packet.kind == .video { hasVideo = true }
        if awaitingKeyframe, packet.kind == .video {
            guard packet.isKeyframe else {
                droppedPackets += 1
                droppedVideoFrames += 1
                liveEdge = max(liveEdge ?? packet.dts, packet.dts)
                return 1
            }
            awaitingKeyframe = false
        }
        packets.append(packet)
        byteCount += packet.size
        liveEdge = max(liveEdge ?? packet.dts, packet.dts)
        if packet.kind == .video, packet.isKeyframe {
            if recentKeyframes.count == Self.recentKeyframeCount { recentKeyframes.removeFirst() }
            recentKeyframes.append(packet.pts)
        }
        var shed = 0
        while count > 0, byteCount > limits.bytes || count > limits.packets || duration > limits.duration {
            let dropped = dropOldestGroup()
            if dropped == 0 { break }
            shed += dropped
        }
        return shed
    }

    /// Removes and returns the oldest packet.
    public mutating func removeFirst() -> EncodedPacket? {
        guard head < packets.count else { return nil }
        let packet = packets[head]
        // The slot keeps no bytes until it is compacted away (up to 1,024 packets later): the payload is the
        // caller's alone, so it is freed, or given back for reuse, once decoded.
        packets[head].payload = []
        head += 1
        byteCount -= packet.size
        compact()
        return packet
    }

    /// Drops everything before the newest video keyframe that still leaves at least `keep` of media
    /// (or, without video, audio older than `liveEdge - keep`). Returns the media removed.
    public mutating func skip(keeping keep: Duration) -> Duration {
        guard let liveEdge, let oldest else { return .zero }
        let limit = liveEdge - keep
        var cut: Int?
        for index in (head..<packets.count).reversed() {
            let packet = packets[index]
            guard packet.dts <= limit else { continue }
            if !hasVideo || (packet.kind == .video && packet.isKeyframe) {
                cut = index
                break
            }
        }
        guard let cut, cut > head else { return .zero }
        let newOldest = packets[cut].dts
        var kept: [EncodedPacket] = []
        // Audio from the cut's time on is kept even if it arrived just before the keyframe.
        for index in head..<cut where packets[index].kind == .audio && packets[index].dts >= newOldest {
            kept.append(packets[index])
        }
        for index in head..<cut where !(packets[index].kind == .audio && packets[index].dts >= newOldest) {
            count(dropped: packets[index])
        }
        packets.replaceSubrange(head..<cut, with: kept)
        compact()
        return newOldest - oldest
    }

    private mutating func count(dropped packet: EncodedPacket) {
        droppedPackets += 1
        byteCount -= packet.size
        if packet.kind == .video { droppedVideoFrames += 1 }
    }

    /// Drops the oldest GOP (up to the next video keyframe), or the oldest packet without video.
    private mutating func dropOldestGroup() -> Int {
        guard head < packets.count else { return 0 }
        var end = head + 1
        if hasVideo {
            while end < packets.count, !(packets[end].kind == .video && packets[end].isKeyframe) { end += 1 }
            // A single GOP larger than the limits: drop it whole, and the rest of it as it arrives.
            if end == packets.count { awaitingKeyframe = true }
        }
        for index in head..<end { count(dropped: packets[index]) }
        let dropped = end - head
        head = end
        compact()
        return dropped
    }

    private mutating func compact() {
        if head > 1024 && head * 2 > packets.count {
            packets.removeSubrange(0..<head)
            head = 0
        }
    }
}
