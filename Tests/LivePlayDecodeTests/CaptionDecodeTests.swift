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

    /// Four channels at once, as a broadcast with a second language and field 2 in use carries them: each decoder
    /// shows its own channel's caption and nothing of the others (`cc_dec` alone would show CC2's on CC1's screen,
    /// and nothing of CC4).
    @Test func eachOfTheFourChannelsShowsOnlyItsOwnCaptions() throws {
        let path = try CaptionFixture.make(
            pictureCaptions: [("HELLO WORLD", 5, 40)],
            otherChannels: [(2, "BONJOUR", 20, 60), (3, "HALLO", 5, 45), (4, "HOLA", 20, 70)])
        let decoded = try Decoded(path)
        let expected: [(CaptionChannel, String)] = [
            (.cc1, "HELLO WORLD"), (.cc2, "BONJOUR"), (.cc3, "HALLO"), (.cc4, "HOLA"),
        ]
        for (channel, text) in expected {
            let decoder = try CaptionDecoder(channel: channel)
            let changes = try decoded.video.compactMap { try decoder.decode($0) }
            #expect(changes.map(\.text) == [text, ""], "\(channel): \(changes)")
            #expect(changes.allSatisfy { $0.channel == channel })
        }
    }

    /// Field 2's extended data (XDS: a program name here) is no channel's text; the caption after it is CC3's.
    @Test func extendedDataIsNoChannelsText() {
        func pair(_ first: UInt8, _ second: UInt8) -> [UInt8] {
            [0xFD, CEA608ChannelFilter.oddParity(first), CEA608ChannelFilter.oddParity(second)]
        }
        let xds = pair(0x01, 0x03) + pair(0x41, 0x42) + pair(0x0F, 0x12)
        let caption = pair(0x15, 0x20) + pair(0x48, 0x49)
        var filter = CEA608ChannelFilter(fieldType: 1, dataChannel: 1)
        let kept = filter.keep(xds + caption)
        let valid = stride(from: 0, to: kept.count, by: 3).map { kept[$0] & 0x04 != 0 }
        #expect(valid == [false, false, false, true, true])
        var fourth = CEA608ChannelFilter(fieldType: 1, dataChannel: 2)
        let forFourth = fourth.keep(pair(0x1D, 0x20) + pair(0x48, 0x49) + pair(0x15, 0x20) + pair(0x4A, 0x4B))
        let validForFourth = stride(from: 0, to: forFourth.count, by: 3).map { forFourth[$0] & 0x04 != 0 }
        #expect(validForFourth == [true, true, false, false])
        #expect(forFourth[1] & 0x7F == 0x15, "CC4's control code written as CC3's")
        #expect(forFourth[1].nonzeroBitCount % 2 == 1, "with odd parity")
    }

    @Test func assTextBecomesPlainText() {
        #expect(CaptionDecoder.plainText(#"0,0,Default,,0,0,0,,{\an7}HELLO WORLD"#) == "HELLO WORLD")
        #expect(CaptionDecoder.plainText(#"0,0,Default,,0,0,0,,{\an7}{\i1}TWO{\i0}\NLINES, HERE "#) == "TWO\nLINES, HERE")
    }
}
