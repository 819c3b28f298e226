import Foundation
import LivePlayTesting
import Testing

@testable import liveplay

/// Captions from the CLI: a `caption` JSON line per caption as it leaves the screen, the same captions as WebVTT
/// with `--captions-out`, none with `--captions off`, another channel by name; a caption file that cannot be
/// written fails the run (74).
@Suite struct CaptionCommandTests {
    @Test func theLogAndTheWebVTTFileCarryTheCaptions() throws {
        let path = try CaptionFixture.make()
        let vtt = NSTemporaryDirectory() + "liveplay-captions-\(UUID().uuidString).vtt"
        defer { try? FileManager.default.removeItem(atPath: vtt) }
        let output = try Binary.run([path, "--json", "--trace-frames", "--captions-out", vtt])
        #expect(output.status == 0, "\(output.standardError)")
        let lines = try EventLogTests.lines(output.text)
        let captions = lines.filter { $0["kind"] as? String == "caption" }
        #expect(captions.map { $0["text"] as? String } == CaptionFixture.captions.map(\.text))
        #expect(captions.allSatisfy { $0["channel"] as? String == "CC1" })
        // The same ones as ffmpeg, which counts from the first picture.
        let expected = try Oracle.captions(path)
        let origin = try #require(lines.filter { $0["kind"] as? String == "frame" }.compactMap { $0["pts_ms"] as? Int }.min())
        let starts = captions.compactMap { $0["start_ms"] as? Int }, ends = captions.compactMap { $0["end_ms"] as? Int }
        #expect(starts.map { $0 - origin } == expected.map { Int($0.start) }, "\(starts)")
        #expect(ends.map { $0 - origin } == expected.map { Int($0.end) }, "\(ends)")
        // Not also as an event line.
        #expect(!lines.contains { $0["code"] as? Int == 9020 })
        let file = try String(contentsOfFile: vtt, encoding: .utf8)
        let cues = zip(starts, ends).map { "\(Self.vtt($0)) --> \(Self.vtt($1))" }
        #expect(
            file == "WEBVTT\n" + zip(cues, CaptionFixture.captions).map { "\n\($0)\n\($1.text)\n" }.joined(),
            "\(file)")

        let off = try Binary.run([path, "--json", "--captions", "off"])
        #expect(off.status == 0)
        #expect(try !EventLogTests.lines(off.text).contains { $0["kind"] as? String == "caption" })
        let refused = try Binary.run([path, "--captions", "off", "--captions-out", vtt])
        #expect(refused.status == 64 && refused.standardError.contains("--captions-out"), "\(refused.standardError)")
    }

    /// `--captions cc2` logs field 1's second channel, and only it; `cc4` field 2's.
    @Test func anotherChannelIsChosenByName() throws {
        let path = try CaptionFixture.make(
            pictureCaptions: [("HELLO WORLD", 5, 40)], otherChannels: [(2, "BONJOUR", 20, 60), (4, "HOLA", 20, 70)])
        let expected = [("cc2", "CC2", "BONJOUR"), ("CC4", "CC4", "HOLA"), ("cc1", "CC1", "HELLO WORLD")]
        for (option, channel, text) in expected {
            let output = try Binary.run([path, "--json", "--captions", option])
            #expect(output.status == 0, "\(output.standardError)")
            let captions = try EventLogTests.lines(output.text).filter { $0["kind"] as? String == "caption" }
            #expect(captions.map { $0["text"] as? String } == [text], "\(option): \(captions)")
            #expect(captions.allSatisfy { $0["channel"] as? String == channel })
        }
    }

    /// A caption file that cannot be written is an error the person sees, with exit 74: a missing directory before
    /// anything plays, a full disk (`/dev/full`) as soon as the file is written.
    @Test func aCaptionFileThatCannotBeWrittenFailsTheRun() throws {
        let path = try CaptionFixture.make()
        let missing = try Binary.run([path, "--captions-out", "/nonexistent-\(UUID().uuidString)/c.vtt"])
        #expect(missing.status == 74, "\(missing.standardError)")
        #expect(missing.standardError.contains("c.vtt"), "\(missing.standardError)")
        let full = try Binary.run([path, "--captions-out", "/dev/full"])
        #expect(full.status == 74, "\(full.standardError)")
        #expect(full.standardError.contains("/dev/full"), "\(full.standardError)")
    }

    static func vtt(_ milliseconds: Int) -> String {
        String(
            format: "%02d:%02d:%02d.%03d", milliseconds / 3_600_000, milliseconds / 60_000 % 60,
            milliseconds / 1000 % 60, milliseconds % 1000)
    }
}
