import LivePlayBuffering
import LivePlayCore
import Testing

@Suite struct TimelineStitcherTests {
    static func ms(_ value: Int64) -> MediaTimestamp { MediaTimestamp(milliseconds: value) }

    @Test func firstConnectionPassesThrough() {
        var stitcher = TimelineStitcher()
        let mapped = stitcher.map(dts: Self.ms(1000), pts: Self.ms(1080))
        #expect(mapped.dts == Self.ms(1000) && mapped.pts == Self.ms(1080) && mapped.gap == nil)
    }

    @Test func aTimelineRestartingAtZeroFollowsOnAfterTheOutage() {
        var stitcher = TimelineStitcher()
        _ = stitcher.map(dts: Self.ms(0), pts: Self.ms(0))
        _ = stitcher.map(dts: Self.ms(5000), pts: Self.ms(5040))
        stitcher.beginConnection(outage: .milliseconds(1500))
        let first = stitcher.map(dts: Self.ms(0), pts: Self.ms(80))
        #expect(first.dts == Self.ms(6500) && first.pts == Self.ms(6580))
        #expect(first.gap == .milliseconds(1500))
        #expect(stitcher.map(dts: Self.ms(40), pts: Self.ms(40)).dts == Self.ms(6540))
    }

    @Test func aServerThatContinuesItsTimelineKeepsIt() {
        var stitcher = TimelineStitcher()
        _ = stitcher.map(dts: Self.ms(10_000), pts: Self.ms(10_000))
        stitcher.beginConnection(outage: .milliseconds(800))
        let first = stitcher.map(dts: Self.ms(10_900), pts: Self.ms(10_900))
        #expect(first.dts == Self.ms(10_900))
        #expect(first.gap == .milliseconds(900))
    }

    @Test func aReplayedGOPCacheIsMovedAfterWhatWasPlayed() {
        var stitcher = TimelineStitcher()
        _ = stitcher.map(dts: Self.ms(20_000), pts: Self.ms(20_000))
        stitcher.beginConnection(outage: .milliseconds(300))
        // The GOP cache starts at the last keyframe, 1.5 s behind.
        let first = stitcher.map(dts: Self.ms(18_500), pts: Self.ms(18_500))
        #expect(first.dts == Self.ms(20_300))
        #expect(stitcher.lastTimestamp == Self.ms(20_300))
    }

    @Test func aClockJumpingWithinAConnectionFollowsOnAFrameLater() {
        var stitcher = TimelineStitcher()
        _ = stitcher.map(dts: Self.ms(10_000), pts: Self.ms(10_000))
        // Tracks interleave a little out of order: passed as they are.
        #expect(stitcher.map(dts: Self.ms(9_600), pts: Self.ms(9_600)).dts == Self.ms(9_600))
        // The encoder restarts its clock 1.5 s back: moved to follow on.
        let back = stitcher.map(dts: Self.ms(8_500), pts: Self.ms(8_580))
        #expect(back.dts == Self.ms(10_040) && back.pts == Self.ms(10_120))
        #expect(back.jump == .milliseconds(-1500) && back.gap == nil)
        #expect(stitcher.map(dts: Self.ms(8_540), pts: Self.ms(8_540)).jump == nil)
        // Forwards: seconds per frame are a slideshow's own; a minute is a clock jump.
        #expect(stitcher.map(dts: Self.ms(13_540), pts: Self.ms(13_540)).jump == nil)
        let forward = stitcher.map(dts: Self.ms(73_540), pts: Self.ms(73_540))
        #expect(forward.jump == .seconds(60) && forward.dts == Self.ms(15_120))
    }
}
