import ArgumentParser
import Foundation
import LivePlay

/// Plays one live URL with N players in one process and reports whether every player kept time: each
/// once-per-second net status on its second, no stutters, and the process's peak memory and CPU.
struct PlayersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "players",
        abstract: "Play a live URL with N players in one process; report status timeliness, stutters, RSS, CPU."
    )

    /// What one `players` run prints.
    struct Result: Encodable {
        var benchmark = "players"
        var players: Int
        var decodes: Bool
        var seconds: Double
        /// Net statuses received in all, and those expected (one per player per whole second played).
        var statuses: Int
        var statusesExpected: Int
        /// Statuses whose `elapsedMilliseconds` is more than the tolerance away from a whole second.
        var lateStatuses: Int
        var maxStatusOffsetMilliseconds: Int
        /// The same, leaving out each player's first 3 s (connecting and the GOP-cache burst).
        var lateStatusesAfterWarmup: Int
        /// Statuses that reached the listener more than the tolerance after their second, measured here.
        var lateDeliveries: Int
        var maxDeliveryLagMilliseconds: Int
        /// Sum of every player's last `stutters`, and of its `droppedFrames`.
        var stutters: Int
        var droppedFrames: Int
        /// Players that never reached `playing`, and the lowest fps a playing player reported after its
        /// first 3 s (decoding only; probe mode shows no pictures).
        var playersNotPlaying: Int
        var minimumFPS: Double
        var failedPlayers: Int
        /// `getrusage` `ru_maxrss` (kB) at the end, and resident memory (kB) from /proc/self/statm at the end.
        var peakRSSKilobytes: Int
        var endRSSKilobytes: Int
        /// Resident memory (kB) just before the players started.
        var baselineRSSKilobytes: Int
        var cpuSeconds: Double
        var wallSeconds: Double
        /// `cpuSeconds` / (players × wall seconds) × 100: percent of one core per stream.
        var cpuPercentPerStream: Double
        /// The pass criterion: every expected status present and on time, no stutter, every player playing.
        var passed: Bool
        /// The same with statuses of the first 3 s left out: the steady state.
        var passedAfterWarmup: Bool
    }

    @Argument(help: "The live URL every player plays.")
    var url: String

    @Option(help: "Number of players.")
    var count = 1

    @Option(help: "Seconds to play.")
    var seconds = 15.0

    @Flag(inversion: .prefixedNo, help: "Decode (default) or probe mode.")
    var decode = true

    @Option(help: "libavcodec threads per decoder (0: one per core).")
    var threads = 1

    @Option(help: "How far from its whole second a net status may be, in milliseconds.")
    var tolerance = 100

    @Option(help: "Seconds between starting one player and the next (0: all at once).")
    var stagger = 0.0

    func validate() throws {
        guard count >= 1 else { throw ValidationError("--count must be at least 1") }
        guard seconds > 0 else { throw ValidationError("--seconds must be positive") }
        guard threads >= 0 else { throw ValidationError("--threads must not be negative") }
    }

    func run() async throws {
        let clock = ContinuousClock()
        let baseline = residentKilobytes()
        let cpuStart = ProcessorTime.now()
        let start = clock.now
        let monitors = (0..<count).map { _ in StatusMonitor(tolerance: tolerance, clock: clock) }
        let outcomes = await withTaskGroup(of: PlaybackOutcome.self) { group in
            for (index, monitor) in monitors.enumerated() {
                let delay = stagger * Double(index)
                group.addTask {
                    if delay > 0 { try? await Task.sleep(for: .seconds(delay)) }
                    let configuration = LivePlayConfiguration(
                        decodes: decode, decoder: DecoderOptions(threadCount: threads)
                    )
                    let player = LivePlayer(configuration: configuration)
                    player.listener = monitor
                    monitor.started(at: clock.now)
                    return await player.run(url: url)
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds + stagger * Double(count - 1)))
                return .stopped
            }
            var outcomes: [PlaybackOutcome] = []
            // The sleeper finishes first (players run until cancelled); then stop the players.
            if let first = await group.next() { outcomes.append(first) }
            group.cancelAll()
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        let wall = ((clock.now - start) / .seconds(1))
        let cpu = (ProcessorTime.now() - cpuStart).total
        let reports = monitors.map { $0.report() }
        let expected = reports.reduce(0) { $0 + max(0, $1.playedWholeSeconds - 1) }
        let statuses = reports.reduce(0) { $0 + $1.statuses }
        let late = reports.reduce(0) { $0 + $1.lateStatuses }
        let stutters = reports.reduce(0) { $0 + $1.stutters }
        let notPlaying = reports.filter { !$0.reachedPlaying }.count
        let failed = outcomes.filter { if case .failed = $0 { true } else { false } }.count
        let result = Result(
            players: count, decodes: decode, seconds: seconds,
            statuses: statuses, statusesExpected: expected, lateStatuses: late,
            maxStatusOffsetMilliseconds: reports.map(\.maxOffset).max() ?? 0,
            lateStatusesAfterWarmup: reports.reduce(0) { $0 + $1.lateAfterWarmup },
            lateDeliveries: reports.reduce(0) { $0 + $1.lateDeliveries },
            maxDeliveryLagMilliseconds: reports.map(\.maxDeliveryLag).max() ?? 0,
            stutters: stutters, droppedFrames: reports.reduce(0) { $0 + $1.droppedFrames },
            playersNotPlaying: notPlaying,
            minimumFPS: rounded(reports.compactMap(\.minimumFPS).min() ?? 0, places: 1),
            failedPlayers: failed,
            peakRSSKilobytes: peakResidentKilobytes(), endRSSKilobytes: residentKilobytes(),
            baselineRSSKilobytes: baseline, cpuSeconds: rounded(cpu, places: 3), wallSeconds: rounded(wall, places: 3),
            cpuPercentPerStream: rounded(cpu / (Double(count) * wall) * 100, places: 3),
            passed: late == 0 && statuses >= expected && stutters == 0 && notPlaying == 0 && failed == 0,
            passedAfterWarmup: reports.allSatisfy { $0.lateAfterWarmup == 0 } && statuses >= expected && stutters == 0
                && notPlaying == 0 && failed == 0
        )
        try printJSONLine(result)
    }
}

/// Collects one player's net statuses: how far each is from its whole second, and when it arrived here.
private final class StatusMonitor: LivePlayListener, @unchecked Sendable {
    struct Report {
        var statuses = 0
        var lateStatuses = 0
        var lateAfterWarmup = 0
        var maxOffset = 0
        var lateDeliveries = 0
        var maxDeliveryLag = 0
        var stutters = 0
        var droppedFrames = 0
        var reachedPlaying = false
        var minimumFPS: Double?
        var playedWholeSeconds = 0
    }

    private let lock = NSLock()
    private let tolerance: Int
    private let clock: ContinuousClock
    private var start: ContinuousClock.Instant?
    private var state = Report()

    init(tolerance: Int, clock: ContinuousClock) {
        self.tolerance = tolerance
        self.clock = clock
    }

    func started(at instant: ContinuousClock.Instant) {
        lock.withLock { start = instant }
    }

    func onNetStatus(_ status: NetStatus) {
        let now = clock.now
        lock.withLock {
            let elapsed = Int(status.elapsedMilliseconds)
            let second = ((elapsed + 500) / 1000) * 1000
            let offset = abs(elapsed - second)
            state.statuses += 1
            state.maxOffset = max(state.maxOffset, offset)
            if offset > tolerance {
                state.lateStatuses += 1
                if elapsed >= 3000 { state.lateAfterWarmup += 1 }
            }
            if let start {
                // Measured here: when the listener got it, against the whole second it stands for.
                let lag = Int(((now - start) / .seconds(1)) * 1000) - second
                state.maxDeliveryLag = max(state.maxDeliveryLag, lag)
                if lag > tolerance { state.lateDeliveries += 1 }
                state.playedWholeSeconds = max(state.playedWholeSeconds, Int(((now - start) / .seconds(1))))
            }
            state.stutters = status.stutters
            state.droppedFrames = status.droppedFrames
            if status.state == "playing" {
                state.reachedPlaying = true
                if elapsed >= 3000 {
                    state.minimumFPS = min(state.minimumFPS ?? .infinity, status.videoFPS)
                }
            }
        }
    }

    func report() -> Report {
        lock.withLock {
            var report = state
            if let start { report.playedWholeSeconds = Int(((clock.now - start) / .seconds(1))) }
            return report
        }
    }
}
