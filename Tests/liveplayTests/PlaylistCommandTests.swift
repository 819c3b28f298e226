import Foundation
import LivePlayTesting
import Testing

/// `liveplay list.m3u`: the items one after another, each failure told on stderr and skipped; a playlist that is not
/// one is refused with a sentence and exit 65, one that is not there with 66.
@Suite struct PlaylistCommandTests {
    static func folder(_ files: [String: Data]) throws -> String {
        let folder = NSTemporaryDirectory() + "liveplay-m3u-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, body) in files { try body.write(to: URL(fileURLWithPath: "\(folder)/\(name)")) }
        return folder
    }

    @Test func aPlaylistPlaysItsItemsInOrderAndSaysWhatItSkipped() throws {
        let clip = try Data(contentsOf: URL(fileURLWithPath: try Fixture.videoOnly.path()))
        let folder = try Self.folder([
            "a.flv": clip, "b.flv": clip,
            "list.m3u": Data("#EXTM3U\n#EXTINF:2,First\na.flv\nmissing.flv\n#EXTINF:2,Last\nb.flv\n".utf8),
        ])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let output = try Binary.run(["\(folder)/list.m3u", "--json"])
        #expect(output.status == 0, "\(output.standardError)")
        let items = try EdgeTests.lines(output.text).filter { $0["code"] as? Int == 9023 }
            .compactMap { ($0["params"] as? [String: Any])?["title"] as? String ?? "-" }
        #expect(items == ["First", "-", "Last"], "\(items)")
        let summaries = try EdgeTests.lines(output.text).filter { $0["code"] as? Int == 9006 }
        #expect(summaries.count == 3, "a session each")
        // Each change to the next file is a cold start of a file: milliseconds (a preloading session of a file used
        // to wait out a 5 s timeout first).
        let switches = try EdgeTests.lines(output.text).filter { $0["code"] as? Int == 9012 }
            .compactMap { ($0["params"] as? [String: Any])?["switch_ms"] as? Double }
        #expect(!switches.isEmpty && switches.allSatisfy { $0 < 1000 }, "\(switches)")
        #expect(output.standardError.contains("skipped to the next item of the playlist"), "\(output.standardError)")
    }

    @Test func aPlaylistThatIsNotOneIsRefusedWithASentence() throws {
        let folder = try Self.folder([
            "binary.m3u": Data([0x00, 0xFF, 0x10, 0x80]), "hls.m3u": Data("#EXTM3U\n#EXT-X-VERSION:3\nseg.ts\n".utf8),
        ])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let binary = try Binary.run(["\(folder)/binary.m3u"])
        #expect(binary.status == 65 && binary.standardError.contains("it is not text"), "\(binary.standardError)")
        let hls = try Binary.run(["\(folder)/hls.m3u"])
        #expect(hls.status == 65 && hls.standardError.contains("not HLS"), "\(hls.standardError)")
        let missing = try Binary.run(["\(folder)/none.m3u"])
        #expect(missing.status == 66, "\(missing.standardError)")
        let mixed = try Binary.run(["\(folder)/hls.m3u", "\(folder)/a.flv"])
        #expect(mixed.status == 64 && mixed.standardError.contains("plays alone"), "\(mixed.standardError)")
    }
}
