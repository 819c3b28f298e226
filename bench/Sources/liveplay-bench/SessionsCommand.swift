import ArgumentParser
import Foundation
import LivePlay

/// Starts and stops playbacks one after another in one process, as an app that moves from stream to stream does,
/// and reports the process's peak memory at a checkpoint and at the end: a player that reuses what a stopped
/// playback had (its thread and the malloc arena that comes with it) settles on a plateau; one that makes new ones
/// climbs with every playback.
struct SessionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "Start and stop N playbacks one after another in one process; report peak RSS after 10 and after N."
    )

    struct Result: Encodable {
        var benchmark = "sessions"
        var sessions: Int
        var checkpoint: Int
        /// `ru_maxrss` (kB) after `checkpoint` sessions, and after all of them.
        var peakRSSAtCheckpointKilobytes: Int
        var peakRSSKilobytes: Int
        var endRSSKilobytes: Int
        /// Peak after all over peak at the checkpoint: 1.0 is a plateau.
        var growth: Double
        /// Peak RSS (kB) after every 25th session: a plateau, or a climb.
        var peakRSSEvery25Kilobytes: [Int]
        /// Sessions that did not show a picture within 10 s.
        var failedSessions: Int
        /// Threads of the process at the end (`/proc/self/task`).
        var threadsAtEnd: Int
        var wallSeconds: Double
    }

    @Argument(help: "The live URL every playback plays.")
    var url: String

    @Option(help: "Number of playbacks, one after another.")
    var count = 200

    @Option(help: "Where the first reading is taken, in playbacks.")
    var checkpoint = 10

    @Option(help: "Seconds each playback plays after its first picture.")
    var play = 0.3

    func validate() throws {
        guard checkpoint >= 1, count >= checkpoint else { throw ValidationError("need 1 ≤ --checkpoint ≤ --count") }
    }

    func run() async throws {
        let started = ContinuousClock.now
        var failed = 0
        var atCheckpoint = 0
        var series: [Int] = []
        for index in 1...count {
            let player = LivePlayer(configuration: LivePlayConfiguration(latency: .preset(.speed)))
            let updates = player.updates()
            let task = Task { await player.run(url: url) }
            let shown = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    for await update in updates {
                        if case .event(let event) = update, event.code == .playBegin { return true }
                    }
                    return false
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(10))
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            if shown { try? await Task.sleep(for: .seconds(play)) } else { failed += 1 }
            task.cancel()
            _ = await task.value
            if index == checkpoint { atCheckpoint = peakResidentKilobytes() }
            if index % 25 == 0 { series.append(peakResidentKilobytes()) }
        }
        let peak = peakResidentKilobytes()
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
        try printJSONLine(
            Result(
                sessions: count, checkpoint: checkpoint, peakRSSAtCheckpointKilobytes: atCheckpoint,
                peakRSSKilobytes: peak, endRSSKilobytes: residentKilobytes(),
                growth: rounded(Double(peak) / Double(max(1, atCheckpoint)), places: 3), peakRSSEvery25Kilobytes: series,
                failedSessions: failed,
                threadsAtEnd: threads, wallSeconds: rounded(seconds(ContinuousClock.now - started), places: 2)))
    }
}
