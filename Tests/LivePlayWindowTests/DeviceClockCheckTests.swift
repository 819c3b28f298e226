import LivePlayWindow
import Testing

/// The check that gives up a sound device which does not play in real time, on virtual time: the device's takes are
/// simulated at a rate, observed as the sink observes them (after each block queued, and on each turn).
@Suite struct DeviceClockCheckTests {
    /// A device taking `rate` seconds of sound per second, fed 1024-frame blocks at 48 kHz whenever it holds less
    /// than 100 ms, observed every 10 ms for `seconds`: the first verdict that is not real time, and when.
    static func run(rate: Double, seconds: Double = 6, pausedFrom pause: ClosedRange<Double>? = nil)
        -> (verdict: DeviceClockCheck.Verdict, at: Double)?
    {
        var check = DeviceClockCheck(sampleRate: 48_000)
        var queued = 0
        var consumed = 0.0
        var time = 0.0
        while time < seconds {
            time += 0.01
            let paused = pause?.contains(time) ?? false
            consumed = min(consumed + rate * 0.01 * 48_000, consumed + Double(queued))
            queued = max(0, queued - Int(rate * 0.01 * 48_000))
            if !paused { while queued < 4_800 { queued += 1024 } }
            if paused { continue }
            let verdict = check.observe(
                at: .milliseconds(Int64(time * 1000)), consumedFrames: Int(consumed), queuedFrames: queued)
            if verdict != .realTime { return (verdict, time) }
        }
        return nil
    }

    @Test func aDeviceThatPlaysInRealTimeIsKept() {
        #expect(Self.run(rate: 1.0) == nil)
        #expect(Self.run(rate: 1.02) == nil, "a device clock's drift")
    }

    /// Given up within 150 ms of its first sound: each moment of it races the pictures.
    @Test func aDeviceThatTakesSoundSixTimesTooFastIsGivenUpAtOnce() throws {
        let result = try #require(Self.run(rate: 6))
        guard case .notRealTime(let rate) = result.verdict else { return }
        #expect(rate > 5 && rate < 7)
        #expect(result.at <= 0.15)
        #expect(Self.run(rate: 1.6) != nil, "a milder race is seen over the long window")
    }

    @Test func aDeviceThatTakesNothingIsGivenUp() throws {
        let result = try #require(Self.run(rate: 0))
        #expect(result.verdict == .notRealTime(rate: 0))
        #expect(result.at <= 3)
    }

    /// A pause (no observation for a second) starts a new stretch: what the device did not take meanwhile is not
    /// counted against it.
    @Test func aPauseIsNotAStuckDevice() {
        #expect(Self.run(rate: 1, seconds: 8, pausedFrom: 2...3.5) == nil)
    }

    /// A queue that ran dry (the player fed too little) says nothing against a slow device, only against a fast one.
    @Test func aQueueThatRanDryIsNotASlowDevice() {
        var check = DeviceClockCheck(sampleRate: 1000)
        var verdicts: [DeviceClockCheck.Verdict] = []
        for step in 0...30 {
            // 100 ms steps; the device takes all it has, which is 20 ms of sound each time.
            verdicts.append(check.observe(at: .milliseconds(Int64(step * 100)), consumedFrames: step * 20, queuedFrames: 0))
        }
        #expect(verdicts.allSatisfy { $0 == .realTime })
    }
}
