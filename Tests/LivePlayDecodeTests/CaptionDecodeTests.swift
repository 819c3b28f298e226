import LivePlay
@testable import LivePlayDecode
import LivePlayTesting
import Testing

/// CEA-608 captions in H.264 SEI (ATSC A/53), read from the decoded pictures and decoded by libavcodec's `cc_dec`
/// in real time: the same captions, at the same times, as ffmpeg finds in the same file (its `subcc` output, decoded
/// when each caption has ended).
@Suite struct CaptionDecodeTests {
    @Test func captionsMatchFFmpegs() throws {
        let path = try CaptionFixture.make()
        let decoded = try Decoded(path)
        #expect(decoded.errors.isEmpty)
        let decoder = try CaptionDecoder()
        var timeline = CaptionTimeline()
        var captions: [Caption] = []
        var changes: [CaptionScreen] = []
        for frame in decoded.video {
            guard let change = try decoder.decode(frame) else { continue }
            changes.append(change)
            if let ended = timeline.show(change) { captions.append(ended) }
        }
        if let last = decoded.video.last, let open = timeline.finish(at: last.pts) { captions.append(open) }
        // Real-time mode tells each change once, at the picture that made it: shown, erased, shown, erased.
        #expect(changes.map(\.text) == ["HELLO WORLD", "", "SECOND LINE", ""], "\(changes)")
        let expected = try Oracle.captions(path)
        #expect(expected.map(\.text) == CaptionFixture.captions.map(\.text), "the oracle: \(expected)")
        #expect(captions.map(\.text) == expected.map(\.text))
        // ffmpeg's movie source counts from the first picture's time (80 ms: x264's two B-frames of delay).
        let origin = try #require(decoded.video.map(\.pts.milliseconds).min())
        #expect(origin > 0)
        #expect(captions.map { $0.start.milliseconds - origin } == expected.map(\.start))
        #expect(captions.map { $0.end.milliseconds - origin } == expected.map(\.end))
        #expect(captions.allSatisfy { $0.channel == .cc1 })
        // Field 2 (CC3) carries nothing here.
        let third = try CaptionDecoder(channel: .cc3)
        #expect(try decoded.video.compactMap { try third.decode($0) }.isEmpty)
    }

    @Test func assTextBecomesPlainText() {
        #expect(CaptionDecoder.plainText(#"0,0,Default,,0,0,0,,{\an7}HELLO WORLD"#) == "HELLO WORLD")
        #expect(CaptionDecoder.plainText(#"0,0,Default,,0,0,0,,{\an7}{\i1}TWO{\i0}\NLINES, HERE "#) == "TWO\nLINES, HERE")
    }
}
