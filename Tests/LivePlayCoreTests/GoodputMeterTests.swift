import LivePlayCore
import Testing

@Suite struct GoodputMeterTests {
    @Test func realTimeIsOneAndATrickleIsLess() {
        var meter = GoodputMeter(window: .seconds(2))
        for step in 0...40 {  // 100 ms steps: media advances 100 ms each step
            meter.record(media: MediaTimestamp(milliseconds: Int64(step * 100)), at: .milliseconds(step * 100))
        }
        #expect(meter.goodput(at: .milliseconds(4000)) == 1.0)

        var slow = GoodputMeter(window: .seconds(2))
        for step in 0...40 {  // media advances 25 ms per 100 ms of wall time
            slow.record(media: MediaTimestamp(milliseconds: Int64(step * 25)), at: .milliseconds(step * 100))
        }
        #expect(slow.goodput(at: .milliseconds(4000)) == 0.25)
    }

    @Test func theReferenceIsTheLastSampleAtTheWindowStartAndResetForgets() {
        var meter = GoodputMeter(window: .seconds(2))
        meter.record(media: MediaTimestamp(milliseconds: 0), at: .zero)
        meter.record(media: MediaTimestamp(milliseconds: 500), at: .seconds(1))
        #expect(meter.goodput(at: .seconds(1)) == nil)
        meter.record(media: MediaTimestamp(milliseconds: 1000), at: .seconds(2))
        #expect(meter.goodput(at: .seconds(2)) == 0.5)
        meter.record(media: MediaTimestamp(milliseconds: 3000), at: .seconds(3))
        #expect(meter.goodput(at: .seconds(3)) == 1.25)
        meter.reset()
        meter.record(media: MediaTimestamp(milliseconds: 3000), at: .seconds(4))
        #expect(meter.goodput(at: .seconds(4)) == nil)
    }

    @Test func staysExactOverAnHourOfSamples() {
        var meter = GoodputMeter(window: .seconds(2))
        for step in 0..<36_000 {
            meter.record(media: MediaTimestamp(milliseconds: Int64(step * 100)), at: .milliseconds(step * 100))
        }
        #expect(meter.goodput(at: .milliseconds(35_999 * 100)) == 1.0)
    }

    @Test func silenceCountsAsZeroAndNoVerdictBeforeAWholeWindow() {
        var meter = GoodputMeter(window: .seconds(2))
        meter.record(media: MediaTimestamp(milliseconds: 0), at: .zero)
        #expect(meter.goodput(at: .seconds(1)) == nil)
        meter.record(media: MediaTimestamp(milliseconds: 500), at: .milliseconds(500))
        #expect(meter.goodput(at: .seconds(5)) == 0)
    }
}
