import LivePlay
import LivePlayTesting
import Testing

/// The recorded real runs in `Tests/traces` (made by `liveplay-simulate record-traces`), replayed: deterministic,
/// so a change to the controller that makes the simulator disagree with what really happened fails here at once.
@Suite struct TraceFixtureTests {
    @Test(arguments: NetworkScenario.all.map(\.slug)) func theReplayReportsWhatTheRealRunReported(_ slug: String) throws {
        let scenario = try #require(NetworkScenario.all.first { $0.slug == slug })
        let fixture = try TraceFixture.load(scenario)
        #expect(fixture.samples.count >= Int(scenario.duration.seconds) - 3)
        let replay = PlaybackSimulator.replay(
            fixture.arrivals, parameters: .preset(TraceFixture.mode), duration: scenario.duration)
        var compared = 0
        for sample in fixture.samples {
            guard let replayed = replay.samples.first(where: { $0.second == sample.second }) else { continue }
            compared += 1
            let difference = abs(sample.latency.milliseconds - replayed.latency.milliseconds)
            #expect(difference <= 100, "\(slug) second \(sample.second): real \(sample.latency), replay \(replayed.latency)")
            if let real = sample.endToEnd, let estimate = replayed.endToEnd, sample.playing, replayed.playing {
                #expect(abs(real.milliseconds - estimate.milliseconds) <= 100, "\(slug) second \(sample.second) end to end")
            }
        }
        #expect(compared >= fixture.samples.count - 1)
    }

    /// Auto sits on or beyond the Pareto front of (stutters, mean end-to-end latency) that fixed caches of 1–5 s
    /// draw on every recorded trace: no fixed cache has as few stutters and a mean latency lower by over 50 ms.
    @Test(arguments: NetworkScenario.all.map(\.slug)) func autoIsOnTheParetoFrontOfFixedCaches(_ slug: String) throws {
        let scenario = try #require(NetworkScenario.all.first { $0.slug == slug })
        let fixture = try TraceFixture.load(scenario)
        func figures(_ parameters: LatencyParameters) -> RunFigures {
            let replay = PlaybackSimulator.replay(fixture.arrivals, parameters: parameters, duration: scenario.duration)
            return RunFigures(samples: replay.samples, events: replay.events, impairments: scenario.impairments)
        }
        let auto = figures(.preset(.auto))
        for seconds in 1...5 {
            let fixed = figures(.fixed(.seconds(seconds)))
            let dominates = fixed.stutters <= auto.stutters && fixed.meanLatency + .milliseconds(50) < auto.meanLatency
            #expect(!dominates, "\(slug): fixed \(seconds) s \(fixed.row("", "")) beats auto \(auto.row("", ""))")
        }
        // Speed stutters no more than a fixed 1 s cache.
        #expect(figures(.preset(.speed)).stutters <= figures(.fixed(.seconds(1))).stutters)
    }
}
