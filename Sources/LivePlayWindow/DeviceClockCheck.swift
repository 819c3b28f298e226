/// Whether a sound device plays in real time, judged from how fast it takes the samples queued for it: the sound is
/// the player's master clock only while it follows the wall clock. A device that consumes faster than real time (an
/// ALSA default with no card behind it, which takes every sample at once) would race the pictures; one that takes
/// nothing would hold them for ever. Either is replaced by the player's own clock, once.
///
/// A value type that returns a verdict; the sink reads the monotonic clock and passes it in (STYLE.md rules 2, 3).
/// It judges stretches of steady playing, over ``window`` of wall time, with observations at least every
/// ``maximumGap`` (a longer gap, a pause, starts a new stretch). A stretch in which the queue ran dry says nothing
/// against a slow device (it had nothing to take), only against a fast one.
public struct DeviceClockCheck: Sendable, Hashable {
    public enum Verdict: Sendable, Hashable {
        case realTime
        /// Media time taken per second of wall time, over the window, outside ``acceptedRates``.
        case notRealTime(rate: Double)
    }

    /// How long a stretch is judged over.
    public var window: Duration = .seconds(2)
    /// A device taking sound faster than ``racingRate`` is given up after this much already: every moment of it
    /// races the pictures (6× for 100 ms is 0.6 s of the stream gone). A real device cannot look that fast over it:
    /// its first buffers (2 × 23 ms) fill at once, which is 1.5× over 100 ms.
    public var racingWindow: Duration = .milliseconds(100)
    public var racingRate = 3.0
    /// A longer gap between observations starts a new stretch (the player paused, or stopped feeding).
    public var maximumGap: Duration = .milliseconds(500)
    /// The rates a real device shows over the window: its own clock's drift and its buffer's steps are far
    /// inside; 6× (no card) and 0× (a stuck device) are far outside.
    public var acceptedRates: ClosedRange<Double> = 0.5...1.5

    private struct Stretch: Sendable, Hashable {
        var start: Duration
        var consumed: Int
        var ranDry: Bool
    }

    private var stretch: Stretch?
    private var last: Duration?
    private let sampleRate: Int

    public init(sampleRate: Int) {
        self.sampleRate = max(1, sampleRate)
    }

    /// One look at the device at `now`: `consumedFrames` taken from the queue since it opened (a running total),
    /// `queuedFrames` still waiting in it.
    public mutating func observe(at now: Duration, consumedFrames: Int, queuedFrames: Int) -> Verdict {
        defer { last = now }
        guard let last, now - last <= maximumGap, var stretch else {
            stretch = Stretch(start: now, consumed: consumedFrames, ranDry: queuedFrames == 0)
            return .realTime
        }
        if queuedFrames == 0 { stretch.ranDry = true }
        let elapsed = now - stretch.start
        let media = Double(consumedFrames - stretch.consumed) / Double(sampleRate)
        let rate = media / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        guard elapsed >= window else {
            self.stretch = stretch
            return elapsed >= racingWindow && rate > racingRate ? .notRealTime(rate: rate) : .realTime
        }
        self.stretch = Stretch(start: now, consumed: consumedFrames, ranDry: queuedFrames == 0)
        if rate > acceptedRates.upperBound || rate < acceptedRates.lowerBound && !stretch.ranDry {
            return .notRealTime(rate: rate)
        }
        return .realTime
    }
}
