import Foundation
import LivePlayLab
import LivePlayTesting
import Testing

@testable import liveplay

/// The `liveplay` binary, built next to this test bundle.
enum Binary {
    static let path = ExternalTool.builtProduct("liveplay")

    static func run(_ arguments: [String]) throws -> ExternalTool.Output {
        try ExternalTool.run(path, arguments)
    }
}

@Suite struct InspectCommandTests {
    struct PacketLine: Decodable, Equatable {
        var stream: String
        var dts_ms: Int64
        var pts_ms: Int64
        var key: Bool
        var size: Int
    }

    @Test func packetLinesEqualFFprobe() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let output = try Binary.run(["inspect", path, "--packets"])
        #expect(output.status == 0)
        let lines = output.text.split(separator: "\n")
        let decoded = try lines.map { try JSONDecoder().decode(PacketLine.self, from: Data($0.utf8)) }
        let expected = try Oracle.packets(path)
        #expect(decoded.map { ProbePacket(stream: $0.stream, dts: $0.dts_ms, pts: $0.pts_ms, isKeyframe: $0.key, size: $0.size) } == expected)
        // Exactly the documented keys, in the documented order.
        #expect(lines.first?.hasPrefix("{\"stream\":\"video\",\"dts_ms\":0,\"pts_ms\":") == true)
        // The description goes to stderr so stdout stays pure JSON lines.
        #expect(output.standardError.contains("video: h264 320x240"))
    }

    @Test func frameLinesCarryFramemd5Hashes() throws {
        let path = try Fixture.h264AAC.path()
        let output = try Binary.run(["inspect", path, "--frames", "--audio-hash", "f32le"])
        #expect(output.status == 0)
        let objects = try output.text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let video = objects.filter { $0["stream"] as? String == "video" }.compactMap { $0["md5"] as? String }
        let audio = objects.filter { $0["stream"] as? String == "audio" }.compactMap { $0["md5"] as? String }
        #expect(video == (try Oracle.frameHashes(path, video: true)).map(\.md5))
        #expect(audio == (try Oracle.frameHashes(path, video: false, audioCodec: "pcm_f32le")).map(\.md5))
    }

    @Test func describesTheStreamForAPerson() throws {
        let output = try Binary.run(["inspect", try Fixture.videoOnly.path()])
        #expect(output.status == 0)
        #expect(output.text.contains("video: h264 318x238"))
        #expect(output.text.contains("30 fps"))
        #expect(output.text.contains("audio: none"))
        #expect(output.text.contains("encoder: \"Lavf"))
    }

    @Test func describesALiveURLFromWhatArrives() async throws {
        let server = try LiveFLVServer(path: try Fixture.h264AAC.path(), configuration: .init(port: 0, threads: 1))
        let port = try await server.start()
        let output = try Binary.run(["inspect", "http://127.0.0.1:\(port)/live.flv", "--duration", "1.5"])
        await server.stop()
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.text.contains("video: h264 320x240"))
        #expect(output.text.contains("audio: aac 44100 Hz"))
        #expect(output.text.contains("keyframe"))

        let refused = try Binary.run(["inspect", "http://127.0.0.1:\(try LoopbackPort.free())/live.flv"])
        #expect(refused.status == ExitStatus.unavailable)
        #expect(try Binary.run(["inspect", "http://127.0.0.1:1/x.flv", "--packets"]).status == ExitStatus.usage)
    }

    @Test func exitCodesSayWhatWentWrong() throws {
        let missing = try Binary.run(["inspect", "/nonexistent/stream.flv"])
        #expect(missing.status == ExitStatus.noInput)
        #expect(missing.standardError.contains("no such file"))

        let notFLV = try Fixtures.write(Array("<html></html>".utf8), name: "not-flv")
        let wrong = try Binary.run(["inspect", notFLV])
        #expect(wrong.status == ExitStatus.dataError)
        #expect(wrong.standardError.contains("FLV"))

        #expect(try Binary.run(["inspect"]).status == ExitStatus.usage)
        #expect(try Binary.run(["inspect", notFLV, "--threads", "-1"]).status == ExitStatus.usage)
    }

    /// ffprobe's stream line (`Video: h264 (High), …, 29.97 fps`): the profile in its parentheses, the frame rate
    /// as it rounds it.
    static func probedVideo(_ path: String) throws -> (profile: String, fps: String) {
        let output = try ExternalTool.run("ffprobe", ["-hide_banner", path])
        let line = try #require(output.standardError.split(separator: "\n").first { $0.contains("Video: ") })
        let afterCodec = try #require(line.firstRange(of: "Video: ")).upperBound
        let open = try #require(line[afterCodec...].firstIndex(of: "("))
        let close = try #require(line[open...].firstIndex(of: ")"))
        let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let fps = try #require(fields.first { $0.hasSuffix(" fps") })
        return (String(line[line.index(after: open)..<close]), String(fps.dropLast(" fps".count)))
    }

    /// Profiles by name and frame rates rounded, as ffprobe prints them: High, Constrained Baseline, HEVC's Main;
    /// 30 and 25, and 29.97 for 30000/1001 (not 29.97002997…).
    @Test func profilesAndFrameRatesReadAsFFprobePrintsThem() throws {
        let ntscBaseline = try Fixtures.make(
            name: "ntsc-baseline", extension: "flv",
            ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30000/1001", "-t", "2", "-c:v", "libx264", "-preset",
                "veryfast", "-profile:v", "baseline", "-pix_fmt", "yuv420p", "-an", "-f", "flv"])
        let hevc = try HEVCFixture.make(.enhancedRTMP)
        // The FLV inspected, and the file ffprobe reads (Debian's ffmpeg cannot read HEVC in FLV: its MP4 source).
        let cases = [
            (try Fixture.h264AAC.path(), try Fixture.h264AAC.path()),
            (try Fixture.videoOnly.path(), try Fixture.videoOnly.path()),
            (ntscBaseline, ntscBaseline),
            (hevc.path, hevc.sourcePath),
        ]
        var profiles: [String] = []
        for (path, probed) in cases {
            let expected = try Self.probedVideo(probed)
            profiles.append(expected.profile)
            let output = try Binary.run(["inspect", path])
            #expect(output.status == 0, "\(output.standardError)")
            #expect(output.text.contains("profile \(expected.profile), "), "\(expected) vs \(output.text)")
            #expect(output.text.contains(", \(expected.fps) fps"), "\(expected) vs \(output.text)")
        }
        #expect(profiles == ["High", "High", "Constrained Baseline", "Main"])
    }

    /// ffprobe's packets of `path`: from the earliest presentation time to the end of the latest packet, seconds.
    static func probedSpan(_ path: String) throws -> Double {
        let output = try ExternalTool.check(
            "ffprobe", ["-v", "error", "-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", path])
        let packets = output.text.split(separator: "\n").compactMap { line -> (Double, Double)? in
            let fields = line.split(separator: ",").compactMap { Double($0) }
            return fields.count == 2 ? (fields[0], fields[1]) : nil
        }
        let start = try #require(packets.map(\.0).min())
        let end = try #require(packets.map { $0.0 + $0.1 }.max())
        return end - start
    }

    /// A file cut short keeps its onMetaData's full duration, which is what ffprobe reports: `inspect` measures
    /// what the packets span and the bitrate that gives, beside the metadata's claim.
    @Test func aCutFileShowsWhatItHoldsBesideWhatItsMetadataClaims() throws {
        let whole = try Fixture.longH264AAC.path()
        let bytes = try Fixtures.bytes(whole)
        let cut = try Fixtures.write(Array(bytes.prefix(bytes.count * 2 / 5)), name: "cut")
        let claim = try ExternalTool.check(
            "ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", whole]).text
        let claimed = try #require(Double(claim.trimmingCharacters(in: .whitespacesAndNewlines)))
        for path in [whole, cut] {
            let output = try Binary.run(["inspect", path])
            #expect(output.status == 0, "\(output.standardError)")
            let lines = output.text.split(separator: "\n")
            let line = try #require(lines.first { $0.hasPrefix("duration: ") }, "\(output.text)")
            let numbers = line.split(whereSeparator: { $0 == " " || $0 == "," || $0 == ";" }).compactMap { Double($0) }
            try #require(numbers.count == 4, "\(line)")
            let span = try Self.probedSpan(path)
            let size = Double(try Fixtures.bytes(path).count)
            #expect(abs(numbers[0] - span) < 0.03, "measured \(numbers[0]) s, ffprobe's packets span \(span) s")
            let kilobits = size * 8 / span / 1000
            #expect(abs(numbers[1] - kilobits) < kilobits / 100, "file size over ffprobe's span: \(kilobits); \(line)")
            #expect(abs(numbers[2] - claimed) < 0.001, "the claim, as ffprobe reads it: \(claimed) s; \(line)")
        }
        let cutSpan = try Self.probedSpan(cut)
        #expect(cutSpan < claimed * 0.6, "the cut holds less than the claim: \(cutSpan) of \(claimed) s")
    }

    /// `inspect --packets | head` stops at the first line head does not take, and succeeds, as `play` does.
    @Test func packetsPipedIntoHeadExitZero() throws {
        // Thousands of packets: far more than a pipe holds, so writing goes on after head has left.
        let many = try Fixtures.make(
            name: "many-packets", extension: "flv",
            ["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=50", "-f", "lavfi", "-i", "sine=sample_rate=44100",
                "-t", "60", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-f", "flv"])
        for list in ["--packets", "--frames"] {
            let output = try ExternalTool.run(
                "bash", ["-c", "\"$0\" inspect \"$1\" \(list) | head -n 3; exit ${PIPESTATUS[0]}", Binary.path, many])
            #expect(output.status == 0, "\(list): \(output.standardError)")
            #expect(output.text.split(separator: "\n").count == 3)
            #expect(!output.standardError.contains("rror"), "\(list): \(output.standardError)")
        }
    }

    /// What `play` refuses, `inspect` refuses alike: a directory says it is one (66), an FLV header with no media
    /// is not playable (65).
    @Test func aDirectoryOrAHeaderWithNoMediaIsRefusedAsPlayRefusesIt() throws {
        let directory = try Binary.run(["inspect", Fixtures.directory])
        #expect(directory.status == ExitStatus.noInput, "\(directory.standardError)")
        #expect(directory.standardError.contains("\(Fixtures.directory) is a directory"), "\(directory.standardError)")

        let headerOnly = try Fixtures.write(FLVWriter().bytes, name: "header-only")
        let inspected = try Binary.run(["inspect", headerOnly])
        #expect(inspected.status == ExitStatus.dataError, "\(inspected.standardError)")
        #expect(inspected.standardError.contains("not playable"), "\(inspected.standardError)")
        #expect(inspected.text.contains("packets: 0 video"), "the description is still given: \(inspected.text)")
        #expect(try Binary.run(["inspect", headerOnly, "--packets"]).status == ExitStatus.dataError)
        let played = try Binary.run(["play", headerOnly, "--quiet"])
        #expect(played.status == ExitStatus.dataError, "play agrees: \(played.standardError)")
    }

    /// A LAS manifest is listed, lowest bitrate first, URLs redacted; one that is not LAS is refused as `play`
    /// refuses it (65), with the same sentence.
    @Test func aLASManifestIsListedAndABrokenOneRefusedAsPlayRefusesIt() throws {
        let manifest = Fixtures.directory + "/las-\(UUID().uuidString).json"
        try Data(#"""
            {"version": "1.0.0", "adaptationSet": [{"duration": 2000, "representation": [
             {"id": 2, "url": "http://127.0.0.1:9/hd.flv?token=secret", "maxBitrate": 2500, "width": 1280, "height": 720,
              "frameRate": 30, "codec": "avc1.64001f", "qualityType": "HIGH", "disabledFromAdaptive": true},
             {"id": 1, "url": "rtmp://127.0.0.1:9/live/sd", "backupUrl": ["http://127.0.0.1:9/sd.flv?k=v"],
              "maxBitrate": 700, "hidden": true, "defaultSelected": true}]}]}
            """#.utf8).write(to: URL(fileURLWithPath: manifest))
        let listed = try Binary.run(["inspect", manifest])
        #expect(listed.status == 0, "\(listed.standardError)")
        #expect(listed.text.components(separatedBy: "\n").prefix(6) == [
            "LAS manifest, version 1.0.0: 2 renditions, GOP 2000 ms",
            "rendition 1: 700 kbit/s (plays first, hidden from the viewer)",
            "  rtmp://127.0.0.1:9/live/sd",
            "  backup: http://127.0.0.1:9/sd.flv?k=***",
            "rendition 2: 2500 kbit/s, 1280x720, 30 fps, avc1.64001f, “HIGH” (never chosen by adaptation)",
            "  http://127.0.0.1:9/hd.flv?token=***",
        ], "\(listed.text)")
        let broken = Fixtures.directory + "/not-las-\(UUID().uuidString).json"
        try Data(#"{"version": "1", "adaptationSet": [{"representation": [{"id": 1}]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: broken))
        let sentence = "it has no `adaptationSet[0].representation[0].url`: not a LAS manifest"
        let inspected = try Binary.run(["inspect", broken])
        #expect(inspected.status == ExitStatus.dataError && inspected.standardError.contains(sentence))
        let played = try Binary.run(["play", broken, "--quiet"])
        #expect(played.status == ExitStatus.dataError, "play agrees: \(played.standardError)")
        #expect(played.standardError.contains(sentence), "\(played.standardError)")
    }

    @Test func helpTextDocumentsTheOptions() {
        let help = LivePlayCommand.helpMessage(for: InspectCommand.self)
        for option in ["--packets", "--frames", "--audio-hash", "--threads", "<file>"] {
            #expect(help.contains(option), "help lacks \(option)")
        }
        // `liveplay --help`: the play options and exit codes first, then the subcommands.
        let top = LivePlayCommand.helpText(columns: nil)
        #expect(top.contains("Exit codes") && top.contains("inspect") && top.contains("--duration"))
    }
}
