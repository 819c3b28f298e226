// Prints the latency-mode simulator's table: every mode × network trace, plus fixed caches of 1…5 s.
// Deterministic (virtual clock, seeded traces): `swift run liveplay-simulate [SECONDS]`.
//
// `swift run liveplay-simulate replay TRACE.jsonl [auto|speed|smooth] [SECONDS]` replays an arrival trace
// recorded with `liveplay URL --arrival-trace TRACE.jsonl` (docs/arrival-trace.md) and prints the buffer
// latency at every whole second, as the player's net status reports it.
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
} else {
    let seconds = arguments.first.flatMap { Int($0) } ?? 180
    print(PlaybackSimulator.table(duration: .seconds(seconds)))
}
