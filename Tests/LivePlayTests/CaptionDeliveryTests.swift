import Foundation
import LivePlay
import LivePlayTesting
import Testing

/// Captions through a whole playback: CEA-608 from the pictures' SEI and text from the stream's script data reach
/// the sink with the pictures they show on (``FrameTiming/caption``) and the listener as each leaves the screen
/// (9020), at the times ffmpeg gives the same captions.
@Suite struct CaptionDeliveryTests {
    @Test func pictureCaptionsShowWithTheirPicturesAndEndAsFFmpegSays() async throws {
        let path = try CaptionFixture.make()
        let sink = RecordingSink()
        let recording = await SessionRecording.record(
            path, configuration: LivePlayConfiguration(), limit: .seconds(20), sink: sink)
        let pictures = sink.pictures
        let origin = try #require(pictures.map(\.timing.pts.milliseconds).min())
        let captions = recording.events.compactMap(\.caption)
        let expected = try Oracle.captions(path)
        #expect(captions.map(\.text) == CaptionFixture.captions.map(\.text))
        #expect(captions.map(\.text) == expected.map(\.text))
        // ffmpeg's movie source counts from the first picture's time.
        #expect(captions.map { $0.start.milliseconds - origin } == expected.map(\.start))
        #expect(captions.map { $0.end.milliseconds - origin } == expected.map(\.end))
        #expect(captions.allSatisfy { $0.channel == .cc1 })
        // Every picture carries the caption on screen at its time, and only that.
        for picture in pictures {
            let pts = picture.timing.pts
            let showing = captions.first { $0.start <= pts && pts < $0.end }?.text
            #expect(picture.timing.caption == showing, "\(pts)")
        }
        #expect(pictures.contains { $0.timing.caption == "HELLO WORLD" })
        // Off: nothing decoded, nothing shown.
        var off = LivePlayConfiguration()
        off.captionChannel = nil
        let plain = RecordingSink()
        let quiet = await SessionRecording.record(path, configuration: off, limit: .seconds(20), sink: plain)
        #expect(!quiet.codes.contains(PlayEventCode.caption.rawValue))
        #expect(!plain.pictures.isEmpty && plain.pictures.allSatisfy { $0.timing.caption == nil })
    }

    /// The same captions carried in `onCaptionInfo` script messages instead of the SEI (AMF0 with the T.35 payload,
    /// AMF3 with Flash's layout) are the same captions, at the same times.
    @Test func captionInfoMessagesGiveTheCaptionsTheSEIGives() async throws {
        let reference = await SessionRecording.record(
            try CaptionFixture.make(), configuration: LivePlayConfiguration(), limit: .seconds(20))
        let expected = reference.events.compactMap(\.caption)
        #expect(expected.map(\.text) == CaptionFixture.captions.map(\.text))
        var messages = LivePlayConfiguration()
        messages.enableMessage = true
        for carriage in [CaptionFixture.Carriage.captionInfoAMF0, .captionInfoAMF3] {
            let path = try CaptionFixture.make(carriage: carriage)
            let sink = RecordingSink()
            let recording = await SessionRecording.record(
                path, configuration: messages, limit: .seconds(20), sink: sink)
            let captions = recording.events.compactMap(\.caption)
            #expect(captions == expected, "\(carriage): \(captions)")
            #expect(sink.pictures.contains { $0.timing.caption == "HELLO WORLD" }, "\(carriage)")
            // Not also reported as a script message (2012, asked for here; x264's own SEI is one from the video).
            let scriptMessages = recording.events.filter {
                $0.code == .getMessage && $0.parameters["source"] == .string("script")
            }
            #expect(scriptMessages.isEmpty, "\(carriage): \(scriptMessages)")
        }
    }

    /// `onTextData` shows from its tag's time until the next one; an empty one clears the screen.
    @Test func scriptDataTextIsACaptionFromItsTimeToTheNext() async throws {
        let path = try CaptionFixture.make(
            pictureCaptions: [], scriptCaptions: [("FROM SCRIPT DATA", 400), ("TWO\nLINES", 1200), ("", 2000)])
        let sink = RecordingSink()
        let recording = await SessionRecording.record(
            path, configuration: LivePlayConfiguration(), limit: .seconds(20), sink: sink)
        let captions = recording.events.compactMap(\.caption)
        #expect(captions.map(\.text) == ["FROM SCRIPT DATA", "TWO\nLINES"])
        #expect(captions.allSatisfy { $0.channel == .text })
        // A caption starts and ends with the first picture at or after its time (40 ms apart at 25 fps).
        let starts = captions.map(\.start.milliseconds), ends = captions.map(\.end.milliseconds)
        #expect(zip(starts, [400, 1200]).allSatisfy { $0 >= $1 && $0 < $1 + 40 }, "\(starts)")
        #expect(zip(ends, [1200, 2000]).allSatisfy { $0 >= $1 && $0 < $1 + 40 }, "\(ends)")
        let shown = sink.pictures.filter { $0.timing.caption != nil }
        #expect(shown.first?.timing.caption == "FROM SCRIPT DATA" && shown.last?.timing.caption == "TWO\nLINES")
        #expect(sink.pictures.last?.timing.caption == nil)
    }
}
