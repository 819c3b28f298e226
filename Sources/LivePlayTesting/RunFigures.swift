public import LivePlay

/// What the player reported at one whole second of a run, real (its net status) or replayed.
public struct RunSample: Sendable, Hashable, Codable {
    public var second: Int
    /// Buffer latency (`latency_ms`).
    public var latency: Duration
    public var playing: Bool
    /// Whether ``playing`` is known: a real status says `connecting` while it reconnects, whether or not the
    /// buffer still plays.
    public var stateKnown = true
    public var rate: Double
    /// How long ago the media being shown was made: what a viewer waits (`e2e_latency_ms`, when the stream
    /// carries wall-clock stamps; estimated from on-time arrival in a replay).
    public var endToEnd: Duration?
    /// When a real session reported it, on the session's clock: a replay samples the same instant (not stored; the
    /// recorded fixtures predate it, and their replays sample at the whole second).
    public var at: Duration?
    /// A replay's buffer latency before the reads of the very millisecond it was sampled at, when there were any:
    /// the trace cannot tell whether the real report came before them, after them, or between (not stored).
    public var latencyBeforeSameMillisecond: Duration?

    /// The recorded fixtures (Tests/traces) predate ``stateKnown``: it is not stored.
    enum CodingKeys: String, CodingKey {
        case second, latency, playing, rate, endToEnd
    }

    public init(second: Int, latency: Duration, playing: Bool, rate: Double, endToEnd: Duration? = nil) {
        self.second = second
        self.latency = latency
        self.playing = playing
        self.rate = rate
        self.endToEnd = endToEnd
    }

    /// A real session's net status, at the whole second nearest to it.
    public init(_ status: NetStatus) {
        let playing = status.state == "playing"
        self.init(
            second: Int((Double(status.elapsedMilliseconds) / 1000).rounded()),
            latency: .milliseconds(status.latencyMilliseconds), playing: playing, rate: status.rate,
            endToEnd: status.endToEndLatencyMilliseconds.map { .milliseconds($0) })
        stateKnown = status.state != "connecting"
        at = .milliseconds(status.elapsedMilliseconds)
    }
}

/// The figures of the simulator's table (docs/latency-modes.md) for one run, computed the same way for a real
/// session and for its replay: from the once-a-second samples and the events the player reported.
public struct RunFigures: Sendable {
    /// Stalls after the first begin (`PLAY_EVT_PLAY_LOADING` … `PLAY_EVT_PLAY_BEGIN`) longer than the player's
    /// `videoBlockThreshold` (500 ms, as its own stutter count), and their total time.
    public var stutters = 0
    public var stutterTime = Duration.zero
    /// End-to-end latency over the seconds playing (buffer latency where a sample has no end-to-end figure).
    public var meanLatency = Duration.zero
    public var p95Latency = Duration.zero
    /// The longest time, after an impairment ends, until latency is within 200 ms of its median in the
    /// 10 s before the impairment (nil when there was none; 999 s when it never was).
    public var recovery: Duration?
    /// Video frames skipped to catch up or at a limit (the `dropped_frames` of `PLAY_WARNING_VIDEO_DISCONTINUITY`).
    public var droppedFrames = 0
    /// Seconds sampled at a rate other than 1.0.
    public var secondsOffNormalRate = 0
    public var maximumRate = 1.0

    /// - Parameters:
    ///   - impairments: when each impairment began and ended, in session time.
    public init(samples: [RunSample], events: [PlayEvent], impairments: [ClosedRange<Duration>] = []) {
        var began = false
        var stalledAt: Int64?
        for event in events {
            switch event.code {
            case .playBegin:
                if began, let stalledAt, event.elapsedMilliseconds - stalledAt > 500 {
                    stutters += 1
                    stutterTime += .milliseconds(event.elapsedMilliseconds - stalledAt)
                }
                began = true
                stalledAt = nil
            case .playLoading where began:
                stalledAt = event.elapsedMilliseconds
            case .videoDiscontinuity:
                if case .int(let frames)? = event.parameters["dropped_frames"] { droppedFrames += Int(frames) }
            default:
                break
            }
        }
        let playing = samples.filter(\.playing).map { ($0.second, latency: $0.endToEnd ?? $0.latency) }
        let latencies = playing.map(\.latency).sorted()
        if !latencies.isEmpty {
            meanLatency = .seconds(latencies.map(\.seconds).reduce(0, +) / Double(latencies.count))
            p95Latency = latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.95))]
        }
        secondsOffNormalRate = samples.count { $0.rate != 1.0 }
        maximumRate = samples.map(\.rate).max() ?? 1.0
        for impairment in impairments {
            let before = playing.filter {
                let at = Duration.seconds($0.0)
                return at < impairment.lowerBound && at >= impairment.lowerBound - .seconds(10)
            }.map(\.latency).sorted()
            guard !before.isEmpty else { continue }
            let normal = before[before.count / 2] + .milliseconds(200)
            let back = playing.first { Duration.seconds($0.0) >= impairment.upperBound && $0.latency <= normal }
            let time = back.map { .seconds($0.0) - impairment.upperBound } ?? .seconds(999)
            recovery = max(recovery ?? .zero, time)
        }
    }

    /// The header of ``row(_:_:)``'s Markdown table.
    public static let header = [
        "| trace | mode | stutters | stutter s | mean latency s | p95 latency s | recovery s | dropped frames | s at rate ≠ 1 | max rate |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    /// One row of a Markdown table.
    public func row(_ trace: String, _ mode: String) -> String {
        let recovery = recovery.map { String(format2: $0.seconds) } ?? "–"
        return "| \(trace) | \(mode) | \(stutters) | \(String(format2: stutterTime.seconds)) | "
            + "\(String(format2: meanLatency.seconds)) | \(String(format2: p95Latency.seconds)) | \(recovery) | "
            + "\(droppedFrames) | \(secondsOffNormalRate) | \(String(format2: maximumRate)) |"
    }
}
