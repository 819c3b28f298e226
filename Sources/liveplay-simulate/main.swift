// Prints the latency-mode simulator's table: every mode × network trace, plus fixed caches of 1…5 s.
// Deterministic (virtual clock, seeded traces): `swift run liveplay-simulate [SECONDS]`.
//
// `swift run liveplay-simulate replay TRACE.jsonl [auto|speed|smooth] [SECONDS]` replays an arrival trace
// recorded with `liveplay URL --arrival-trace TRACE.jsonl` (docs/arrival-trace.md) and prints the buffer
// latency at every whole second, as the player's net status reports it.
//
// `swift run liveplay-simulate traces [DIR]` prints the same table replayed from the recorded real traces
// (Tests/traces); `swift run liveplay-simulate record-traces DIR` records them again (real time, ~3 minutes:
// the demo stream through the impairment proxy, one run per case, speed mode).
import Foundation
import LivePlay
import LivePlayTesting

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "replay", arguments.count >= 2 {
    let mode = arguments.count > 2 ? LatencyMode(rawValue: arguments[2]) ?? .auto : .auto
    let reads: [ArrivalRead]
    do {
        reads = try ArrivalTraceFile.read(path: arguments[1])
    } catch {
        // A missing file or a line that is not an arrival read (docs/arrival-trace.md): say so, no trap.
        print("liveplay-simulate: cannot read the arrival trace \(arguments[1]): \(error)")
        exit(1)
    }
    let last = Duration.milliseconds(reads.last?.milliseconds ?? 0)
    let seconds = arguments.count > 3 ? Int(arguments[3]).map { Duration.seconds($0) } ?? last : last
    let (samples, _) = PlaybackSimulator.replay(reads, parameters: .preset(mode), duration: seconds)
    print("| second | latency ms | playing |\n|---:|---:|---|")
    for sample in samples { print("| \(sample.second) | \(sample.latency.milliseconds) | \(sample.playing) |") }
} else if arguments.first == "traces" {
    let directory = arguments.count > 1 ? arguments[1] : TraceFixture.directory
    do {
        print(PlaybackSimulator.table(traces: try NetworkScenario.all.map { try TraceFixture.load($0, from: directory) }))
    } catch {
        print("liveplay-simulate: cannot read the traces in \(directory): \(error)")
        exit(1)
    }
} else if arguments.first == "record-traces", arguments.count == 2 {
    do {
        for scenario in NetworkScenario.all {
            let recording = try await NetworkScenario.withDemoServer { port in
                try await scenario.record(upstreamPort: port, modes: [.preset(TraceFixture.mode)])
            }[0]
            let fixture = TraceFixture(
                scenario: scenario, arrivals: recording.arrivals, samples: recording.statuses.map(RunSample.init))
            try fixture.save(in: arguments[1])
            print("\(scenario.slug): \(fixture.arrivals.count) reads, \(fixture.samples.count) seconds")
        }
    } catch {
        print("liveplay-simulate: \(error)")
        exit(1)
    }
} else {
    let seconds = arguments.first.flatMap { Int($0) } ?? 180
    print(PlaybackSimulator.table(duration: .seconds(seconds)))
}
