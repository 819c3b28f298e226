/// The three latency modes of TXLivePlayer, as presets over one controller.
public enum LatencyMode: String, Sendable, Hashable, CaseIterable {
    /// Cache adapts to the network between 1 s and 5 s (`bAutoAdjustCacheTime` on, min 1 s, max 5 s).
    case auto
    /// Lowest latency: cache held at 1 s (min = max = 1 s); catches up by playing faster or skipping GOPs.
    case speed
    /// Flash-like: fixed 5 s cache (`bAutoAdjustCacheTime` off); on a stall, loading until it is full again.
    case smooth
}

/// What the latency controller works with: TXLivePlayConfig's fields under their own names, and the
/// documented knobs of liveplay's mechanism. All can be changed while playing.
public struct LatencyParameters: Sendable, Hashable {
    /// `bAutoAdjustCacheTime`: steer latency towards a target by playback rate (and skips), adapting the
    /// target within [min, max] in auto mode; off = a fixed `cacheTime`, always played at 1.0×.
    public var autoAdjustCacheTime: Bool
    /// `cacheTime`: the fixed cache when auto-adjust is off; also what loading waits for.
    public var cacheTime: Duration
    /// `minAutoAdjustCacheTime` / `maxAutoAdjustCacheTime`: the target's range when auto-adjusting.
    public var minAutoAdjustCacheTime: Duration
    public var maxAutoAdjustCacheTime: Duration
    /// Fastest catch-up rate (1.2× by default: audio is time-stretched, pitch kept).
    public var maximumRate: Double
    /// Slowest rate used to rebuild cache (auto only; 1.0 in speed and smooth).
    public var minimumRate: Double
    /// Rate per second of excess latency (ExoPlayer's proportional factor, 0.1).
    public var rateGain: Double
    /// Excess below which the rate stays exactly 1.0 (no rate flutter on a steady stream).
    public var rateDeadBand: Duration
    /// Excess latency beyond which whole GOPs are skipped instead of sped through.
    public var skipExcess: Duration
    /// Auto: how much the target rises after each stall, and how fast it decays on a calm network.
    public var rebufferIncrement: Duration
    public var targetDecayPerSecond: Duration
    /// Stalls longer than this are stutters (`PLAY_WARNING_VIDEO_PLAY_LAG`, default 500 ms).
    public var videoBlockThreshold: Duration

    public init(
        autoAdjustCacheTime: Bool, cacheTime: Duration, minAutoAdjustCacheTime: Duration,
        maxAutoAdjustCacheTime: Duration, maximumRate: Double = 1.2, minimumRate: Double = 1.0,
        rateGain: Double = 0.1, rateDeadBand: Duration = .milliseconds(100), skipExcess: Duration = .seconds(2),
        rebufferIncrement: Duration = .milliseconds(500), targetDecayPerSecond: Duration = .milliseconds(50),
        videoBlockThreshold: Duration = .milliseconds(500)
    ) {
        self.autoAdjustCacheTime = autoAdjustCacheTime
        self.cacheTime = cacheTime
        self.minAutoAdjustCacheTime = minAutoAdjustCacheTime
        self.maxAutoAdjustCacheTime = maxAutoAdjustCacheTime
        self.maximumRate = maximumRate
        self.minimumRate = minimumRate
        self.rateGain = rateGain
        self.rateDeadBand = rateDeadBand
        self.skipExcess = skipExcess
        self.rebufferIncrement = rebufferIncrement
        self.targetDecayPerSecond = targetDecayPerSecond
        self.videoBlockThreshold = videoBlockThreshold
    }

    /// The TXLivePlayer presets.
    public static func preset(_ mode: LatencyMode) -> LatencyParameters {
        switch mode {
        case .auto:
            LatencyParameters(
                autoAdjustCacheTime: true, cacheTime: .seconds(5), minAutoAdjustCacheTime: .seconds(1),
                maxAutoAdjustCacheTime: .seconds(5), minimumRate: 0.95, skipExcess: .seconds(3))
        case .speed:
            LatencyParameters(
                autoAdjustCacheTime: true, cacheTime: .seconds(1), minAutoAdjustCacheTime: .seconds(1),
                maxAutoAdjustCacheTime: .seconds(1), rateGain: 0.5, skipExcess: .milliseconds(1500))
        case .smooth:
            // Played at 1.0× always; a buffer grown past twice the cache is cut back to the cache by
            // skipping whole GOPs, so latency and memory stay bounded.
            LatencyParameters(
                autoAdjustCacheTime: false, cacheTime: .seconds(5), minAutoAdjustCacheTime: .seconds(5),
                maxAutoAdjustCacheTime: .seconds(5), skipExcess: .seconds(5))
        }
    }

    /// Media on demand (a file, an HTTP response with a length): a fixed 1 s start-up cache, played at 1.0×
    /// and never skipped, however far ahead the reading gets (the player bounds that by reading less).
    public static let onDemand = LatencyParameters(
        autoAdjustCacheTime: false, cacheTime: .seconds(1), minAutoAdjustCacheTime: .seconds(1),
        maxAutoAdjustCacheTime: .seconds(1), skipExcess: .seconds(365 * 86_400))

    /// A fixed cache of `cacheTime`, played like smooth (for comparisons).
    public static func fixed(_ cacheTime: Duration) -> LatencyParameters {
        LatencyParameters(
            autoAdjustCacheTime: false, cacheTime: cacheTime, minAutoAdjustCacheTime: cacheTime,
            maxAutoAdjustCacheTime: cacheTime, skipExcess: cacheTime)
    }
}
