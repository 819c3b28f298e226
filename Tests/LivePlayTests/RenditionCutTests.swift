import LivePlayCore
import Testing

@testable import LivePlay

/// ``RenditionCut``, the decision of where `switchStream` cuts, on virtual time: what the two sessions publish,
/// turn by turn, and the instant each turn happens at.
struct RenditionCutTests {
    static let start = Duration.seconds(100)

    static func at(_ milliseconds: Int) -> Duration { start + .milliseconds(milliseconds) }

    static func ms(_ value: Int64) -> MediaTimestamp { MediaTimestamp(milliseconds: value) }

    /// Both renditions' newest media at 10 s, the picture shown at 9 s, the other's keyframes every 2 s.
    static func aligned(poster: Int64? = nil, shown: Int64 = 9_000) -> RenditionCut.Observation {
        RenditionCut.Observation(
            candidateReady: true, candidateLiveEdge: ms(10_000), candidateKeyframes: [ms(8_000), ms(10_000)],
            candidatePoster: poster.map(ms), playingLiveEdge: ms(10_050), shown: ms(shown))
    }

    @Test func itWaitsUntilTheOtherRenditionIsReady() {
        var cut = RenditionCut(requestedAt: Self.start, unreachable: "x did not connect")
        var notReady = Self.aligned()
        notReady.candidateReady = false
        #expect(cut.decide(notReady, at: Self.at(100)) == .wait)
        #expect(cut.decide(notReady, at: Self.at(5_000)) == .fail(reason: "x did not connect"))
    }

    @Test func itAsksForTheFirstKeyframeAheadOfThePictureThenCutsThereOnceItIsThePoster() {
        var cut = RenditionCut(requestedAt: Self.start, unreachable: "")
        // 8 s is behind the picture shown (9 s): the cut is at 10 s, first asked for, then taken once decoded.
        #expect(cut.decide(Self.aligned(poster: 8_000), at: Self.at(100)) == .startAt(Self.ms(10_000)))
        #expect(cut.decide(Self.aligned(poster: 10_000), at: Self.at(120)) == .cut(at: Self.ms(10_000)))
    }

    /// LAS's `startPts`: the server honoured the start asked for when the other rendition's first keyframe is that one,
    /// judged once, on the first keyframes it publishes.
    @Test func theStartAskedForIsHonouredWhenItIsTheFirstKeyframe() {
        var honoured = RenditionCut(requestedAt: Self.start, unreachable: "")
        honoured.asked = Self.ms(8_000)
        #expect(honoured.honoured == nil)
        _ = honoured.decide(Self.aligned(poster: 10_000), at: Self.at(100))
        #expect(honoured.honoured == true)
        var ignored = RenditionCut(requestedAt: Self.start, unreachable: "")
        ignored.asked = Self.ms(9_500)
        var notReady = Self.aligned()
        notReady.candidateReady = false
        notReady.candidateKeyframes = []
        _ = ignored.decide(notReady, at: Self.at(50))
        #expect(ignored.honoured == nil, "no keyframe yet")
        #expect(ignored.decide(Self.aligned(poster: 10_000), at: Self.at(100)) == .cut(at: Self.ms(10_000)))
        #expect(ignored.honoured == false)
    }

    @Test func aKeyframeTooCloseAheadOfThePlaybackIsNotTaken() {
        var cut = RenditionCut(requestedAt: Self.start, unreachable: "")
        // The picture shown is 50 ms before the keyframe: the playback could pass it before the cut is set.
        #expect(cut.decide(Self.aligned(poster: 10_000, shown: 9_950), at: Self.at(100)) == .wait)
        #expect(
            cut.decide(Self.aligned(poster: 10_000, shown: 9_950), at: Self.at(5_001))
                == .fail(reason: "no keyframe ahead of the playback"))
    }

    @Test func renditionsStampedApartFailWithHowFarApartTheyAre() {
        var cut = RenditionCut(requestedAt: Self.start, unreachable: "")
        var apart = Self.aligned(poster: 10_000)
        apart.playingLiveEdge = Self.ms(13_000)
        #expect(cut.decide(apart, at: Self.at(4_000)) == .wait)
        #expect(
            cut.decide(apart, at: Self.at(5_000))
                == .fail(reason: "the timestamps do not align: its newest media is 3000 ms from this stream's"))
    }

    @Test func aCutFoundAtTheDeadlineIsStillTaken() {
        var cut = RenditionCut(requestedAt: Self.start, unreachable: "")
        #expect(cut.decide(Self.aligned(poster: 10_000), at: Self.at(5_000)) == .cut(at: Self.ms(10_000)))
    }
}
