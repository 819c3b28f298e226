// Prints the latency-mode simulator's table: every mode × network trace, plus fixed caches of 1…5 s.
// Deterministic (virtual clock, seeded traces): `swift run liveplay-simulate [SECONDS]`.
import LivePlayTesting

let seconds = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 180
print(PlaybackSimulator.table(duration: .seconds(seconds)))
