/// Media seconds received per wall second over a sliding window: how a player tells a link that keeps
/// up (about 1.0) from a trickle that only looks alive.
///
/// Time is passed in as a duration since any fixed origin. Fed with the newest media timestamp and when it
/// was seen; a sample taken during silence (same media, later time) counts the silence. No verdict until a
/// whole window has been seen, so a fresh or reset measurement never trips.
public struct GoodputMeter: Sendable {
    public let window: Duration
    private var samples: [(wall: Duration, media: MediaTimestamp)] = []
    private var head = 0

    public init(window: Duration) {
        self.window = window
    }

    /// Forgets the history (a new connection, or the consumer held the stream back on purpose).
    public mutating func reset() {
        samples.removeAll(keepingCapacity: true)
        head = 0
    }

    public mutating func record(media: MediaTimestamp, at wall: Duration) {
        let newest = samples.last.map { max($0.media, media) } ?? media
        samples.append((wall, newest))
        // Keep one sample at or before the window's start as the reference point.
        let start = wall - window
        while head + 1 < samples.count, samples[head + 1].wall <= start { head += 1 }
        if head > 256, head * 2 > samples.count {
            samples.removeFirst(head)
            head = 0
        }
    }

    /// Media per wall time over the window ending at `now`, once a whole window has been seen.
    public func goodput(at now: Duration) -> Double? {
        guard head < samples.count, now - samples[head].wall >= window, let newest = samples.last else { return nil }
        let start = now - window
        var base = samples[head]
        for sample in samples[head...] {
            guard sample.wall <= start else { break }
            base = sample
        }
        let media = Double((newest.media - base.media) / .milliseconds(1))
        return media / Double(window / .milliseconds(1))
    }
}
