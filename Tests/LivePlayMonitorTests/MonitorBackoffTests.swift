import Foundation
import LivePlay
import LivePlayMonitor
import LivePlayTesting
import Testing

/// The monitor on an injected clock: its backoff between a stream's runs is a wait on that clock, so the schedule is
/// checked in virtual time, whatever its length.
@Suite struct MonitorBackoffTests {
    @Test func aStreamIsStartedAgainAfterABackoffThatDoublesToItsLimitUntilItPlays() async throws {
        let missing = NSTemporaryDirectory() + "liveplay-missing-\(UUID().uuidString).flv"
        var options = MonitorOptions(initialBackoff: .seconds(600), maximumBackoff: .seconds(1500))
        options.configuration.connectRetryCount = 0
        let notes = Locked<[MonitorNote]>([])
        let monitor = Monitor(options: options, onNote: { note in notes.withLock { $0.append(note) } }, clock: VirtualClock())
        // A file that plays to its end, and one that is not there.
        monitor.load([
            MonitoredStream(id: "plays", url: try Fixture.h264AAC.path()), MonitoredStream(id: "missing", url: missing),
        ])
        let started = ContinuousClock.now
        let run = Task { await monitor.run() }
        let downs = { (id: String) in notes.get().filter { $0.stream == id && $0.kind == .down } }
        let fourEach = await eventually(within: .seconds(30)) { downs("plays").count >= 4 && downs("missing").count >= 4 }
        run.cancel()
        await run.value
        let took = ContinuousClock.now - started
        #expect(fourEach, "\(notes.get())")
        // One that never played waits twice as long each time, up to the limit; one that played waits the first
        // backoff again.
        #expect(downs("missing").prefix(4).map(\.retryIn) == [.seconds(600), .seconds(1200), .seconds(1500), .seconds(1500)])
        #expect(downs("plays").prefix(4).map(\.retryIn) == Array(repeating: .seconds(600), count: 4))
        let kinds = notes.get().filter { $0.stream == "missing" }.map(\.kind).prefix(8)
        #expect(Array(kinds) == [.started, .down, .started, .down, .started, .down, .started, .down], "\(kinds)")
        print("eight runs and six backoffs of 10–25 minutes in \(took) of real time")
    }
}
