import LivePlayBuffering
import Testing

/// Adaptation's decisions on virtual time, second by second, against a link of a given capacity: the server sends
/// each rendition at its bitrate, the backlog (after a dip, or a new connection's one-second GOP cache) as fast as
/// the link allows. Three renditions, as the scenario: 500, 1200 and 2500 kbit/s; a 2 s buffer target.
@Suite struct RenditionAdaptationTests {
    struct Link {
        var adaptation = RenditionAdaptation(bitrates: [500, 1200, 2500], current: 0)
        var buffered = 2.0
        var backlog = 0.0
        var stalled = 0
        var switches: [(second: Int, to: Int, reason: RenditionAdaptation.Reason)] = []
        var playing: [Int] = []

        /// Runs `seconds` more seconds over a link of `capacity(second)` kbit/s.
        mutating func run(_ seconds: ClosedRange<Int>, capacity: (Int) -> Double) {
            for second in seconds {
                let bitrate = Double(adaptation.bitrates[adaptation.current])
                backlog += bitrate
                let delivered = min(capacity(second), backlog)
                backlog -= delivered
                buffered += delivered / bitrate
                if buffered >= 1 { buffered -= 1 } else { stalled += 1; buffered = 0 }
                playing.append(adaptation.current)
                if let decision = adaptation.observe(
                    at: .seconds(second), buffered: .seconds(buffered), target: .seconds(2), receivedKbps: Int(delivered))
                {
                    switches.append((second, decision.to, decision.reason))
                    // The other rendition's connection: its GOP cache (one second of it) comes first.
                    backlog = Double(adaptation.bitrates[decision.to])
                }
            }
        }

        func switchesInAnyMinute(after start: Int = 0) -> Int {
            let seconds = switches.map(\.second).filter { $0 >= start }
            return seconds.map { first in seconds.filter { $0 >= first && $0 < first + 60 }.count }.max() ?? 0
        }
    }

    @Test func aFastLinkSettlesOnTheTopRendition() {
        var link = Link()
        link.run(1...90) { _ in 4000 }
        #expect(link.adaptation.current == 2, "\(link.switches)")
        #expect(link.switches.count == 2 && link.switches.allSatisfy { $0.to > 0 }, "up, then up: \(link.switches)")
        #expect(link.switches.last!.second <= 40, "\(link.switches)")
        #expect(link.stalled == 0)
    }

    /// 4 Mbit/s, then 900 kbit/s for 20 s, then 4 Mbit/s again: down within two seconds and no stall, up within
    /// 15 s of the link coming back.
    @Test func aDipIsFollowedDownAtOnceAndBackUpWithinFifteenSeconds() {
        var link = Link()
        link.run(1...60) { _ in 4000 }
        #expect(link.adaptation.current == 2)
        link.run(61...140) { second in (61...80).contains(second) ? 900 : 4000 }
        let down = link.switches.first { $0.second > 60 }
        #expect(down.map { $0.second <= 62 && $0.reason == .drain && $0.to == 0 } == true, "\(link.switches)")
        #expect(link.stalled == 0, "no stall: \(link.switches)")
        let up = link.switches.first { $0.second > 80 && $0.to > 0 }
        #expect(up.map { $0.second <= 95 } == true, "up within 15 s: \(link.switches)")
        #expect(link.adaptation.current == 2, "back on the top by the end: \(link.switches)")
        #expect(link.playing[61..<80].allSatisfy { $0 == 0 || $0 == 1 }, "nothing above the link while it dips")
    }

    /// A link that carries the middle rendition's bitrate but not the top's holds still: at most two switches in
    /// any minute (a probe up and its undoing), the probes further apart each time, and no stall but a probe's.
    @Test func aSteadyLinkSeesAtMostTwoSwitchesAMinute() {
        for capacity in [900.0, 1700] {
            var link = Link()
            link.run(1...300) { _ in capacity }
            #expect(link.switchesInAnyMinute(after: 30) <= 2, "\(capacity): \(link.switches)")
            let probes = link.switches.filter { $0.reason == .probe }.map(\.second)
            let gaps = zip(probes.dropFirst(), probes).map { $0 - $1 }
            #expect(gaps == gaps.sorted(), "each failed probe waits longer: \(probes)")
            #expect(link.stalled <= 2, "\(capacity): \(link.stalled) s stalled, \(link.switches)")
            let fits = capacity >= 1500 ? 1 : 0
            let share = Double(link.playing.filter { $0 == fits }.count) / Double(link.playing.count)
            #expect(share > 0.8, "\(capacity): mostly on rendition \(fits): \(link.switches)")
        }
    }

    /// A switch made by the viewer (or anyone) is where adaptation goes on from, with the wait before going up.
    @Test func aSwitchMadeElsewhereIsWhereAdaptationGoesOnFrom() {
        var adaptation = RenditionAdaptation(bitrates: [500, 1200, 2500], current: 2)
        adaptation.played(0, at: .seconds(5))
        #expect(adaptation.current == 0)
        for second in 6...14 {
            #expect(adaptation.observe(at: .seconds(second), buffered: .seconds(2), target: .seconds(2), receivedKbps: 500) == nil)
        }
        let up = adaptation.observe(at: .seconds(15), buffered: .seconds(2), target: .seconds(2), receivedKbps: 500)
        #expect(up == .init(to: 1, reason: .probe))
    }
}
