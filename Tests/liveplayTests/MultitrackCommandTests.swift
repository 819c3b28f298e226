import Foundation
import LivePlayTesting
import Testing

@testable import liveplay

/// `--video-track` / `--audio-track` on a multitrack file (Enhanced RTMP v2): the named tracks play from the
/// start, and the JSON log lists the tracks.
@Suite struct MultitrackCommandTests {
    @Test func theNamedTracksPlayFromTheStart() throws {
        let renditions = try EnhancedFixture.renditions()
        let output = try Binary.run([renditions.path, "--json", "--video-track", "1", "--audio-track", "1", "--frames", "5"])
        #expect(output.status == 0, "\(output.standardError)")
        let lines = try EventLogTests.lines(output.text)
        let lists = lines.filter { $0["code"] as? Int == 9016 }.compactMap { $0["params"] as? [String: Any] }
        let last = try #require(lists.last)
        #expect(last["video_tracks"] as? String == "0 1")
        #expect(last["audio_tracks"] as? String == "0 1")
        #expect(last["video_track"] as? Int == 1)
        #expect(last["audio_track"] as? Int == 1)
        let sizes = lines.filter { $0["code"] as? Int == 2009 }.compactMap { $0["message"] as? String }
        #expect(sizes == ["256x144"])
        // Without the options the lowest ids play.
        let plain = try EventLogTests.lines(try Binary.run([renditions.path, "--json", "--frames", "5"]).text)
        #expect(plain.filter { $0["code"] as? Int == 2009 }.compactMap { $0["message"] as? String } == ["320x240"])
    }
}

extension MultitrackCommandTests {
    /// `inspect --packets` lists every track's packets with its id and FourCC.
    @Test func inspectListsEveryTracksPackets() throws {
        let renditions = try EnhancedFixture.renditions()
        let output = try Binary.run(["inspect", renditions.path, "--packets"])
        #expect(output.status == 0, "\(output.standardError)")
        let lines = try output.text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        var counts: [String: Int] = [:]
        for line in lines {
            let key = "\(line["stream"] ?? "") \(line["track"] ?? "") \(line["fourcc"] ?? "")"
            counts[key, default: 0] += 1
        }
        let sources = try (renditions.videoSources + renditions.audioSources).map { try ElementaryStream.read($0).packets.count }
        #expect(counts == [
            "video 0 av01": sources[0], "video 1 vp09": sources[1], "audio 0 Opus": sources[2], "audio 1 Opus": sources[3],
        ])
        #expect(output.standardError.contains("video: av1 320x240"), "\(output.standardError)")
    }
}

extension MultitrackCommandTests {
    /// AV1 + Opus recorded: MP4 carries them packet for packet; FFmpeg 5.1's FLV muxer cannot, which is said as
    /// `unsupported` (9102) while playback goes on.
    @Test func aV2StreamRecordsIntoMP4AndFLVSaysUnsupported() throws {
        let (av1Source, av1) = try EnhancedFixture.elementary(.av1)
        let (_, opus) = try EnhancedFixture.elementary(.opus)
        let path = try EnhancedFixture.multitrack([(.av1, av1, 0), (.opus, opus, 0)], name: "ertmp-av1-opus")
        let directory = NSTemporaryDirectory() + "liveplay-record-v2-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let mp4 = try Binary.run([path, "--record", "\(directory)/out.mp4", "--json"])
        #expect(mp4.status == 0, "\(mp4.standardError)")
        let streams = try ExternalTool.check(
            "ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", "\(directory)/out.mp4"]
        ).text.split(separator: "\n").map(String.init)
        #expect(streams.sorted() == ["av1", "opus"])
        let remux = try Fixtures.make(name: "ertmp-av1-remux", extension: "mp4", ["-i", av1Source, "-c", "copy", "-f", "mp4"])
        #expect(try RecordCommandTests.videoPackets("\(directory)/out.mp4") == RecordCommandTests.videoPackets(remux))

        let flv = try Binary.run([path, "--record", "\(directory)/out.flv", "--json"])
        #expect(flv.status == ExitStatus.ioError, "\(flv.standardError)")
        let warning = try #require(flv.text.split(separator: "\n").first { $0.contains("\"code\":9102") }, "\(flv.text)")
        #expect(warning.contains("unsupported"), "\(warning)")
        #expect(try EdgeTests.codes(flv.text).contains(2006), "playback went on to the end")
    }
}
