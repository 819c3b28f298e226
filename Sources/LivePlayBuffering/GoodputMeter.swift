public import LivePlayCore

/// Media seconds received per wall second over a sliding window: how the player tells a link that
/// keeps up (about 1.0) from a trickle that only looks alive.
///
/// Fed with the newest media timestamp and the wall time it arrived (both passed in).
public struct GoodputMeter: Sendable {
    public var window: Duration
    /// (wall time since some origin, newest media timestamp then)
    private var samples: [(wall: Duration, media: MediaTimestamp)] = []

    public init(window: Duration) {
        self.window = window
    }

    /// Forget everything (a new connection starts).
    public mutating func reset() {
        samples.removeAll(keepingCapacity: true)
    }

    public mutating func record(media: MediaTimestamp, at wall: Duration) {
        if let last = samples.last, media <= last.media {
            if wall > last.wall { samples.append((wall, last.media)) }
        } else {
            samples.append((wall, media))
        }
        let horizon = wall - window * 2
        if let firstKept = samples.firstIndex(where: { $0.wall >= horizon }), firstKept > 0 {
            samples.removeFirst(firstKept)
        }
    }

    /// Media per wall time over the last `window` ending at `now`, once a whole window has been seen.
    public func goodput(at now: Duration) -> Double? {
        guard let first = samples.first, now - first.wall >= window else { return nil }
        let start = now - window
        let base = samples.last { $0.wall <= start } ?? first
        guard let newest = samples.last else { return nil }
        let media = Double((newest.media - base.media) / .milliseconds(1))
        return media / Double(window / .milliseconds(1))
    }
}
