import LivePlayBuffering
import LivePlayCore
import Testing

@Suite struct ReconnectPolicyTests {
    @Test func retriesTheConfiguredNumberOfTimesThenGivesUp() {
        var policy = ReconnectPolicy()
        #expect(policy.connectionLost() == .retry(attempt: 1, after: .seconds(3)))
        #expect(policy.connectionLost() == .retry(attempt: 2, after: .seconds(3)))
        #expect(policy.connectionLost() == .retry(attempt: 3, after: .seconds(3)))
        #expect(policy.connectionLost() == .giveUp(attempts: 3))
        #expect(policy.connectionLost() == .giveUp(attempts: 3))
    }

    @Test func mediaFlowingAgainResetsTheCount() {
        var policy = ReconnectPolicy(retryCount: 2, retryInterval: .milliseconds(200))
        #expect(policy.connectionLost() == .retry(attempt: 1, after: .milliseconds(200)))
        #expect(policy.connectionLost() == .retry(attempt: 2, after: .milliseconds(200)))
        policy.mediaReceived()
        #expect(policy.failedAttempts == 0)
        #expect(policy.connectionLost() == .retry(attempt: 1, after: .milliseconds(200)))
    }

    @Test func zeroRetriesGivesUpAtOnce() {
        var policy = ReconnectPolicy(retryCount: 0)
        #expect(policy.connectionLost() == .giveUp(attempts: 0))
    }
}

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
}

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

    @Test func silenceCountsAsZeroAndNoVerdictBeforeAWholeWindow() {
        var meter = GoodputMeter(window: .seconds(2))
        meter.record(media: MediaTimestamp(milliseconds: 0), at: .zero)
        #expect(meter.goodput(at: .seconds(1)) == nil)
        meter.record(media: MediaTimestamp(milliseconds: 500), at: .milliseconds(500))
        #expect(meter.goodput(at: .seconds(5)) == 0)
    }
}
