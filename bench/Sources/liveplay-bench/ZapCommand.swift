import ArgumentParser
import Foundation
import LivePlay

/// Channel zapping in one process: a player switches along a list of live streams, preloaded (the next and the
/// previous kept ready in a `PreloadPool`) or cold, and each switch's time from the call to the first picture at
/// the sink is taken from `LIVEPLAY_EVT_SWITCHED`.
struct ZapCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zap",
        abstract: "Switch a player along live URLs N times, preloaded or cold; report each switch's time to its first picture."
    )

    struct Result: Encodable {
        var benchmark = "zap"
        var preloaded: Bool
        var streams: Int
        var switches: Int
        /// Milliseconds from `switch(to:from:)` to the first picture at the sink, one per switch, in order.
        var switchMilliseconds: [Double]
        var medianMilliseconds: Double
        var p95Milliseconds: Double
        /// Switches whose stream was ready in the pool.
        var fromPool: Int
        /// Switches with no picture within 10 s.
        var failed: Int
        /// What each stream switched to received while it waited in the pool, bytes per second after its first GOP.
        var preloadBytesPerSecond: [Double]
    }

    @Argument(help: "The live URLs to switch along.")
    var urls: [String]

    @Option(help: "Number of switches.")
    var switches = 50

    @Option(help: "Seconds between switches.")
    var every = 1.0

    @Flag(inversion: .prefixedNo, help: "Keep the next and the previous stream preloaded (default), or switch cold.")
    var preload = true

    func validate() throws {
        guard urls.count >= 2 else { throw ValidationError("at least two URLs") }
    }

    /// Collects 9012 events.
    final class Switches: LivePlayListener, @unchecked Sendable {
        private let lock = NSLock()
        private var events: [PlayEvent] = []
        func onPlayEvent(_ event: PlayEvent) {
            if event.code == .switched { lock.withLock { events.append(event) } }
        }
        var count: Int { lock.withLock { events.count } }
        var all: [PlayEvent] { lock.withLock { events } }
    }

    /// Counts pictures, so the player decodes and presents as a front end's would.
    final class Pictures: VideoSink {
        func present(_ frame: VideoFrame, timing: FrameTiming) {}
    }

    func run() async throws {
        let pool = preload ? PreloadPool(configuration: LivePlayConfiguration(latency: .preset(.speed))) : nil
        let player = LivePlayer(configuration: LivePlayConfiguration(latency: .preset(.speed)), videoSink: Pictures())
        let listener = Switches()
        player.listener = listener
        func neighbours(of index: Int) -> [String] {
            Set([(index + 1) % urls.count, (index + urls.count - 1) % urls.count]).subtracting([index]).map { urls[$0] }
        }
        try player.startPlay(urls[0])
        await pool?.keep(only: neighbours(of: 0))
        var index = 0
        var failed = 0
        var costs: [Double] = []
        for number in 1...switches {
            try await Task.sleep(for: .seconds(every))
            index = (index + 1) % urls.count
            if let waited = pool?.statuses.first(where: { $0.url == urls[index] }), waited.secondsSinceReady > 0 {
                costs.append(Double(waited.bytesSinceReady) / Double(waited.secondsSinceReady))
            }
            try player.switch(to: urls[index], from: pool)
            let deadline = ContinuousClock.now + .seconds(10)
            while listener.count < number - failed, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            if listener.count < number - failed { failed += 1 }
            await pool?.keep(only: neighbours(of: index))
        }
        await player.stopPlay()
        await pool?.removeAll()
        let events = listener.all
        let times = events.compactMap { event -> Double? in
            if case .double(let value)? = event.parameters["switch_ms"] { return value }
            return nil
        }
        let sorted = times.sorted()
        func percentile(_ fraction: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
        }
        try printJSONLine(
            Result(
                preloaded: preload, streams: urls.count, switches: switches, switchMilliseconds: times,
                medianMilliseconds: percentile(0.5), p95Milliseconds: percentile(0.95),
                fromPool: events.filter { $0.parameters["preloaded"] == .bool(true) }.count, failed: failed,
                preloadBytesPerSecond: costs))
    }
}
