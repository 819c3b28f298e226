import Foundation
public import LivePlay
import LivePlayLab
import Logging

/// A real network case of the latency suite (docs/latency-modes.md): a live stream played through the impairment
/// proxy, whose timeline (proxy-relative, `ImpairmentTimeline.parse` syntax) does to the connection what the
/// name says.
public struct NetworkScenario: Sendable {
    public var name: String
    public var timeline: String
    public var duration: Duration
    /// When each impairment begins and ends, for the recovery time.
    public var impairments: [ClosedRange<Duration>]

    public init(name: String, timeline: String, duration: Duration, impairments: [ClosedRange<Duration>]) {
        self.name = name
        self.timeline = timeline
        self.duration = duration
        self.impairments = impairments
    }

    /// The demo stream the cases play (the CLI's built-in demo: 640×360 25 fps H.264 with a 1 s GOP, AAC).
    public static let demoPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../liveplay/Resources/demo.flv").standardized.path
    /// The demo stream's bitrate, for the bandwidth case.
    public static let demoKilobitsPerSecond = 353

    /// Serves the demo stream from the lab's GOP-cached HTTP-FLV server (`/live.flv`) until `body` returns.
    public static func withDemoServer<T>(_ body: (_ port: Int) async throws -> T) async throws -> T {
        var logger = Logger(label: "scenario")
        logger.logLevel = .critical
        let server = try LiveFLVServer(path: demoPath, configuration: .init(port: 0, threads: 1), logger: logger)
        let port = try await server.start()
        return try await withCleanup { try await body(port) } cleanup: { await server.stop() }
    }

    public static let stall3s = NetworkScenario(
        name: "3 s stall", timeline: "at=6s stall=3s", duration: .seconds(24), impairments: [.seconds(6) ... .seconds(9)])
    public static let stall7s = NetworkScenario(
        name: "7 s stall", timeline: "at=6s stall=7s", duration: .seconds(26), impairments: [.seconds(6) ... .seconds(13)])
    public static let stalls1sEvery10s = NetworkScenario(
        name: "1 s stall / 10 s", timeline: "at=10s stall=1s; at=20s stall=1s; at=30s stall=1s", duration: .seconds(38),
        impairments: [10, 20, 30].map { .seconds($0) ... .seconds($0 + 1) })
    public static let bandwidth70 = NetworkScenario(
        name: "70 % bandwidth 20 s",
        timeline: "at=8s bandwidth=\(demoKilobitsPerSecond * 7 / 10); at=28s clear=bandwidth", duration: .seconds(40),
        impairments: [.seconds(8) ... .seconds(28)])
    public static let jitter200ms = NetworkScenario(
        name: "jitter ±200 ms", timeline: "at=4s latency=200 jitter=200; at=24s clear=latency", duration: .seconds(30),
        impairments: [.seconds(4) ... .seconds(24)])
    /// The connection is reset; the player reconnects to the GOP-cached server, which replays its newest GOP.
    public static let reconnect = NetworkScenario(
        name: "reconnect to a GOP cache", timeline: "at=8s reset", duration: .seconds(22),
        impairments: [.seconds(8) ... .seconds(8)])

    /// The cases kept as recorded fixtures and run in real time.
    public static let all = [stall3s, stalls1sEvery10s, bandwidth70, jitter200ms, reconnect]

    /// A file name for the case: `3-s-stall`.
    public var slug: String {
        String(name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
            .split(separator: "-", omittingEmptySubsequences: true).joined(separator: "-")
    }

    /// Plays the case once for each of `modes` at the same time, each on its own connection through one proxy in
    /// front of `upstreamPort`, and records each session with its arrivals.
    ///
    /// - Parameters:
    ///   - path: the stream's path and query on the upstream server (`/live.flv`, `/live/demo` for RTMP).
    ///   - sinks: a sink for the run of the mode at the same index (the pictures and sound it was handed).
    public func record(
        upstreamPort: Int, scheme: String = "http", path: String = "/live.flv", modes: [LatencyParameters],
        sinks: [RecordingSink] = []
    ) async throws -> [SessionRecording] {
        var logger = Logger(label: "scenario")
        logger.logLevel = .critical
        let proxy = ImpairmentProxy(
            upstreamPort: upstreamPort, timeline: try ImpairmentTimeline.parse(timeline), logger: logger)
        let port = try await proxy.start()
        let url = "\(scheme)://127.0.0.1:\(port)\(path)"
        let recordings = await withTaskGroup(of: (Int, SessionRecording).self) { group in
            for (index, parameters) in modes.enumerated() {
                group.addTask {
                    let configuration = LivePlayConfiguration(latency: parameters)
                    let sink = index < sinks.count ? sinks[index] : nil
                    return (index, await SessionRecording.record(
                        url, configuration: configuration, limit: duration, sink: sink, recordsArrivals: true))
                }
            }
            var results: [(Int, SessionRecording)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
        await proxy.stop()
        return recordings
    }
}

/// A real run next to its replay in the simulator.
public struct RunComparison: Sendable {
    public var real: RunFigures
    public var replayed: RunFigures
    /// Seconds where both report a latency, and the largest difference between them.
    public var comparedSeconds: Int
    public var largestDifference: Duration
    /// The largest difference of end-to-end latency (real: the stream's wall-clock stamps; replay: estimated).
    public var largestEndToEndDifference: Duration?
    /// The seconds, while both play, whose latencies differ by more than the tolerance: (second, real, replayed). A second at which
    /// one side is playing and the other loading counts only when neither stalled nor resumed within
    /// ``transitionTolerance`` of it (a resume a few milliseconds apart flips a sample from 0 to the whole cache).
    public var disagreements: [(second: Int, real: Duration, replayed: Duration)]
    /// Each stall's loading and begin, real and replayed, in order: they must pair up within ``transitionTolerance``.
    public var transitions: [(real: Int64, replayed: Int64)]
    /// Whether both had the same number of loadings and begins, each within ``transitionTolerance``.
    public var transitionsAgree: Bool
    public static let transitionTolerance = Duration.milliseconds(300)

    /// Replays `recording`'s arrivals with `parameters` and compares latency at every status second.
    public init(
        _ recording: SessionRecording, parameters: LatencyParameters, impairments: [ClosedRange<Duration>],
        tolerance: Duration = .milliseconds(100)
    ) {
        let samples = recording.statuses.map(RunSample.init)
        let duration = Duration.seconds((samples.map(\.second).max() ?? 0) + 1)
        let replay = PlaybackSimulator.replay(
            recording.arrivals, parameters: parameters, duration: duration,
            sampledAt: Dictionary(samples.compactMap { sample in sample.at.map { (sample.second, $0) } }) { first, _ in first })
        real = RunFigures(samples: samples, events: recording.events, impairments: impairments)
        replayed = RunFigures(samples: replay.samples, events: replay.events, impairments: impairments)
        comparedSeconds = 0
        largestDifference = .zero
        disagreements = []
        let realChanges = Self.stateChanges(recording.events)
        let replayedChanges = Self.stateChanges(replay.events)
        let anyChange = Self.stateChanges(recording.events, stuttersOnly: false)
            + Self.stateChanges(replay.events, stuttersOnly: false)
        transitions = Array(zip(realChanges, replayedChanges))
        let near = Self.transitionTolerance.milliseconds
        transitionsAgree = realChanges.count == replayedChanges.count && transitions.allSatisfy { abs($0 - $1) <= near }
        for sample in samples {
            guard let other = replay.samples.first(where: { $0.second == sample.second }), sample.stateKnown else {
                continue
            }
            if sample.playing != other.playing {
                // The state a status reports follows a stall or resume in the second before it.
                let at = Int64(sample.second) * 1000
                if !anyChange.contains(where: { $0 > at - 1000 - near && $0 <= at + near }) {
                    disagreements.append((sample.second, sample.latency, other.latency))
                }
                continue
            }
            // While both load, the buffer refills by a burst whose exact millisecond decides the figure: the
            // latency is compared while playing.
            guard sample.playing else { continue }
            comparedSeconds += 1
            // Against the replay's buffer after the reads of the report's millisecond, or anywhere between it and
            // the buffer before them (their order against the report is not in the trace).
            let low = min(other.latency, other.latencyBeforeSameMillisecond ?? other.latency)
            let high = max(other.latency, other.latencyBeforeSameMillisecond ?? other.latency)
            let nearest = min(max(sample.latency, low), high)
            let difference = abs(sample.latency.milliseconds - nearest.milliseconds)
            largestDifference = max(largestDifference, .milliseconds(difference))
            if .milliseconds(difference) > tolerance { disagreements.append((sample.second, sample.latency, other.latency)) }
            if sample.playing, other.playing, let real = sample.endToEnd, let replayed = other.endToEnd {
                let difference = Duration.milliseconds(abs(real.milliseconds - replayed.milliseconds))
                largestEndToEndDifference = max(largestEndToEndDifference ?? .zero, difference)
            }
        }
    }

    /// When playback stalled (`PLAY_EVT_PLAY_LOADING`) and began again (`PLAY_EVT_PLAY_BEGIN`) after its first
    /// begin, for the stalls the player counts as stutters (over 500 ms): whether the buffer runs dry for a few
    /// milliseconds as a backlog comes in is a matter of milliseconds in either run.
    static func stateChanges(_ events: [PlayEvent], stuttersOnly: Bool = true) -> [Int64] {
        let changes = events.filter { $0.code == .playLoading || $0.code == .playBegin }.drop { $0.code != .playBegin }
            .dropFirst().map(\.elapsedMilliseconds)
        var stutters: [Int64] = []
        var index = 0
        // A stall still open when the run ends (the replay runs dry where the recording stopped) is not compared.
        while index + 1 < changes.count {
            let (stalled, resumed) = (changes[index], changes[index + 1])
            if resumed - stalled > 500 || !stuttersOnly { stutters += [stalled, resumed] }
            index += 2
        }
        return stutters
    }
}
