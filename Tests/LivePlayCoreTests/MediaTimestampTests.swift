import LivePlayCore
import Testing

@Suite struct MediaTimestampTests {
    @Test func unwrapsAcrossThe32BitBoundaryMonotonically() {
        var unwrapper = MediaTimestamp.Unwrapper()
        let wire: [UInt32] = [UInt32.max - 40, UInt32.max - 20, UInt32.max, 19, 39, 59]
        let unwrapped = wire.map { unwrapper.unwrap($0).milliseconds }
        let base = Int64(UInt32.max)
        #expect(unwrapped == [base - 40, base - 20, base, base + 20, base + 40, base + 60])
    }

    @Test func smallBackwardStepsStayInTheSameEpoch() {
        var unwrapper = MediaTimestamp.Unwrapper()
        // B-frame reordering and A/V interleaving step back a little; that is not a wrap.
        let unwrapped = [1000, 1040, 960, 1080, 1000].map { unwrapper.unwrap(UInt32($0)).milliseconds }
        #expect(unwrapped == [1000, 1040, 960, 1080, 1000])
    }

    @Test func aLatePacketFromBeforeTheWrapStaysInThePreviousEpoch() {
        var unwrapper = MediaTimestamp.Unwrapper()
        let base = Int64(UInt32.max)
        #expect(unwrapper.unwrap(UInt32.max - 10).milliseconds == base - 10)
        #expect(unwrapper.unwrap(5).milliseconds == base + 6)
        #expect(unwrapper.unwrap(UInt32.max - 5).milliseconds == base - 5)
        #expect(unwrapper.unwrap(30).milliseconds == base + 31)
    }

    @Test func durationsBetweenTimestamps() {
        let a = MediaTimestamp(milliseconds: 1500)
        #expect(a - MediaTimestamp(milliseconds: 500) == .seconds(1))
        #expect((a + 250).milliseconds == 1750)
        #expect(MediaTimestamp.zero < a)
    }
}
