public import LivePlayCore

/// What the once-per-second net status and the session summary report, accumulated as media arrives and
/// is presented, with time passed in (STYLE.md rule 3).
///
/// Rates (bitrates, fps) cover the interval since the previous ``takeInterval(at:)``; totals cover the
/// session. Latency is kept as a histogram of 10 ms buckets, so mean and p95 cost fixed memory however
/// long the session runs.
public struct PlaybackStatistics: Sendable {
    /// Figures of one interval (normally one second).
    public struct Interval: Sendable, Hashable {
        public var duration: Duration
        /// Bytes received on the wire (FLV as delivered), in kbit/s of wall time.
        public var receivedKbps: Int
        /// The stream's bitrates: payload bytes of the packets received in the interval over the media time
        /// they cover, so a burst (a GOP cache, a backlog after a stall) reports the stream, not the burst.
        public var videoKbps: Int
        public var audioKbps: Int
        /// Pictures presented per second.
        public var framesPerSecond: Double
        /// Video packets received per second (what probe mode, which presents nothing, reports as fps).
        public var receivedFramesPerSecond: Double
    }

    // This interval.
    private var intervalStart: Duration?
    private var intervalBytes = 0
    private var intervalVideo = MediaSpan()
    private var intervalAudio = MediaSpan()
    private var intervalFrames = 0

    // Totals.
    public private(set) var receivedBytes = 0
    public private(set) var framesShown = 0
    public private(set) var stutters = 0
    public private(set) var stutterTime = Duration.zero
    public private(set) var catchUps = 0
    public private(set) var reconnects = 0
    /// Time between the two newest video keyframes received (the GOP length).
    public private(set) var gop: Duration?
    /// Newest audio minus newest video timestamp received (`AV_RECV_INTERVAL`).
    public private(set) var receiveInterval: Duration?
    /// Last sound minus last picture presented (`AV_PLAY_INTERVAL`).
    public private(set) var playInterval: Duration?

    private var lastKeyframe: MediaTimestamp?
    private var newestVideo: MediaTimestamp?
    private var newestAudio: MediaTimestamp?
    private var lastShownVideo: MediaTimestamp?
    private var lastPlayedAudio: MediaTimestamp?
    private var latencyBuckets = [Int](repeating: 0, count: 6001)
    private var latencySamples = 0
    private var latencySum = Duration.zero

    public init() {}

    /// Bytes arrived from the network.
    public mutating func received(bytes: Int) {
        receivedBytes += bytes
        intervalBytes += bytes
    }

    /// The bitrates and received frame rate follow the packets played (``played(_:)``), not those arriving: media
    /// on demand is read ahead in bursts and then not at all, while it plays at its own rate.
    public var ratesFollowPlayback = false

    /// The video decoder in words, `h264 (nvdec)` or `hevc (software)` (the net status's and the summary's `decoder`);
    /// empty before one opens.
    public var decoder = ""

    /// A demuxed packet arrived.
    public mutating func received(_ packet: EncodedPacket) {
        if !ratesFollowPlayback { measureRate(of: packet) }
        switch packet.kind {
        case .video:
            newestVideo = packet.dts
            if packet.isKeyframe {
                if let lastKeyframe, packet.dts > lastKeyframe { gop = packet.dts - lastKeyframe }
                lastKeyframe = packet.dts
            }
        case .audio:
            newestAudio = packet.dts
        }
        if let newestAudio, let newestVideo { receiveInterval = newestAudio - newestVideo }
    }

    /// A packet left the jitter buffer to be played: counted in the rates when they follow playback.
    public mutating func played(_ packet: EncodedPacket) {
        if ratesFollowPlayback { measureRate(of: packet) }
    }

    private mutating func measureRate(of packet: EncodedPacket) {
        switch packet.kind {
        case .video: intervalVideo.add(packet)
        case .audio: intervalAudio.add(packet)
        }
    }

    public mutating func shown(video pts: MediaTimestamp) {
        framesShown += 1
        intervalFrames += 1
        lastShownVideo = pts
        updatePlayInterval()
    }

    public mutating func played(audio pts: MediaTimestamp) {
        lastPlayedAudio = pts
        updatePlayInterval()
    }

    /// Playback resumed after stopping for `duration`; over `threshold` it was a stutter.
    public mutating func stalled(for duration: Duration, threshold: Duration) {
        guard duration > threshold else { return }
        stutters += 1
        stutterTime += duration
    }

    public mutating func caughtUp() { catchUps += 1 }
    public mutating func reconnected() { reconnects += 1 }

    /// One latency sample (taken once a second while playing).
    public mutating func sample(latency: Duration) {
        let bucket = min(latencyBuckets.count - 1, max(0, Int(latency.milliseconds / 10)))
        latencyBuckets[bucket] += 1
        latencySamples += 1
        latencySum += latency
    }

    public var meanLatency: Duration? {
        latencySamples == 0 ? nil : latencySum / latencySamples
    }

    /// The 95th percentile latency, to 10 ms: the middle of its bucket (the top bucket holds everything from
    /// 60 s up).
    public var p95Latency: Duration? {
        guard latencySamples > 0 else { return nil }
        let rank = (latencySamples * 95 + 99) / 100
        var seen = 0
        for (bucket, count) in latencyBuckets.enumerated() {
            seen += count
            if seen >= rank { return .milliseconds(bucket * 10 + 5) }
        }
        return nil
    }

    /// The rates since the previous call (or since the first figure arrived), and starts a new interval.
    public mutating func takeInterval(at now: Duration) -> Interval {
        let start = intervalStart ?? now
        let duration = now - start
        let seconds = duration.seconds
        func kbps(_ bytes: Int) -> Int { seconds > 0 ? Int((Double(bytes) * 8 / 1000 / seconds).rounded()) : 0 }
        let interval = Interval(
            duration: duration, receivedKbps: kbps(intervalBytes), videoKbps: intervalVideo.kbps,
            audioKbps: intervalAudio.kbps,
            framesPerSecond: Self.perSecond(intervalFrames, seconds),
            receivedFramesPerSecond: Self.perSecond(intervalVideo.count, seconds))
        intervalStart = now
        intervalBytes = 0
        intervalVideo = MediaSpan()
        intervalAudio = MediaSpan()
        intervalFrames = 0
        return interval
    }

    private static func perSecond(_ count: Int, _ seconds: Double) -> Double {
        seconds > 0 ? (Double(count) / seconds * 10).rounded() / 10 : 0
    }

    private mutating func updatePlayInterval() {
        if let lastPlayedAudio, let lastShownVideo { playInterval = lastPlayedAudio - lastShownVideo }
    }
}

/// Payload bytes of some packets and the media time they cover: `n` packets span `n` frame intervals,
/// so the span is (last − first) × n / (n − 1).
private struct MediaSpan: Sendable {
    private var bytes = 0
    private(set) var count = 0
    private var first: MediaTimestamp?
    private var last: MediaTimestamp?

    mutating func add(_ packet: EncodedPacket) {
        bytes += packet.size
        count += 1
        first = first.map { min($0, packet.dts) } ?? packet.dts
        last = last.map { max($0, packet.dts) } ?? packet.dts
    }

    var kbps: Int {
        guard count >= 2, let first, let last, last > first else { return 0 }
        let seconds = (last - first).seconds * Double(count) / Double(count - 1)
        return Int((Double(bytes) * 8 / 1000 / seconds).rounded())
    }
}
