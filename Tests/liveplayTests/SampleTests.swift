import Foundation
import LivePlayLab
import LivePlayTesting
import Logging
import Testing

@testable import liveplay

/// Probe mode and many players in one process, as people run them: the built binaries.
@Suite struct SampleTests {
    /// An executable built next to `liveplay`.
    static func executable(_ name: String) -> String {
        URL(fileURLWithPath: Binary.path).deletingLastPathComponent().appendingPathComponent(name).path
    }

    @Test func probeModeTimesTheStreamWithoutDecoding() throws {
        let output = try Binary.run(["demo", "--no-decode", "--duration", "3.5", "--json"])
        #expect(output.status == 0)
        let lines = try EventLogTests.lines(output.text)
        let codes = lines.compactMap { $0["code"] as? Int }
        #expect(!codes.contains(2008) && !codes.contains(2009), "no decoder opened, no picture: \(codes)")
        #expect(codes.contains(2003) && codes.contains(2004), "the stream is still received and timed: \(codes)")
        let statuses = lines.compactMap { $0["status"] as? [String: Any] }
        let playing = statuses.filter { $0["state"] as? String == "playing" }
        #expect(!playing.isEmpty)
        for status in playing {
            // Probe mode reports the frames received (the demo is 25 fps) and the stream's bitrate.
            let fps = status["NET_STATUS_VIDEO_FPS"] as? Double ?? 0
            #expect(fps >= 20 && fps <= 30, "\(fps)")
            #expect((status["NET_STATUS_VIDEO_BITRATE"] as? Int ?? 0) > 100)
            #expect(status["frames_shown"] as? Int == 0)
        }
    }

    /// On a live stream that never ends: the alarm is raised (exit 2) while it plays, and the lines come
    /// through a pipe as they happen. Two stalls longer than auto mode's largest cache (5 s) each stop the
    /// picture; `timeout` turns a sample that never raises its alarm into a failure, not a hung suite.
    @Test func theStutterAlarmFiresWhileTheStreamIsStillLive() async throws {
        let server = try LiveFLVServer(path: try Fixture.h264AAC.path(), configuration: .init(port: 0, threads: 1))
        let port = try await server.start()
        var quiet = Logger(label: "test")
        quiet.logLevel = .critical
        let proxy = ImpairmentProxy(
            upstreamPort: port, timeline: try ImpairmentTimeline.parse("at=2s stall=4s; at=9s stall=7s"),
            logger: quiet)
        let proxyPort = try await proxy.start()
        let started = Date()
        let output = try ExternalTool.run(
            "timeout", ["60", Self.executable("stutter-alarm"), "http://127.0.0.1:\(proxyPort)/live.flv", "1"])
        let took = Date().timeIntervalSince(started)
        await proxy.stop()
        await server.stop()
        #expect(output.status == 2, "\(output.text) \(output.standardError)")
        #expect(took < 40, "raised while the stream was still playing: \(took) s")
        #expect(output.standardError.contains("ALARM: 2 stutters within a minute"))
        #expect(output.text.components(separatedBy: "stutter: ").count - 1 >= 2, "\(output.text)")
        #expect(output.text.contains("PLAY_EVT_PLAY_BEGIN"))
    }

    @Test func oneProcessMonitorsSeveralStreams() async throws {
        let server = try LiveFLVServer(path: try Fixture.h264AAC.path(), configuration: .init(port: 0, threads: 1))
        let port = try await server.start()
        let url = "http://127.0.0.1:\(port)/live.flv"
        let output = try ExternalTool.run(Self.executable("multi-stream-monitor"), [url, url, url, "--seconds", "3.5"])
        await server.stop()
        #expect(output.status == 0, "\(output.standardError)")
        let lines = output.text.split(separator: "\n")
        for stream in 1...3 {
            let mine = lines.filter { $0.contains("stream-\(stream) ") }
            #expect(mine.count >= 2, "a line per second for stream \(stream): \(lines)")
            #expect(mine.last?.contains("playing") == true)
        }
    }

    @Test func theOfflinePlayerDownloadsOnceAndPlaysFromTheCache() throws {
        let source = try Fixture.h264BFramesAAC.path()
        guard let (server, cache, _) = try MediaCacheCommandTests.serve(source, as: "offline.flv") else { return }
        defer { server.stop() }
        let url = server.fileURL("offline.flv") + "?token=a"
        let first = try ExternalTool.run(Self.executable("offline-player"), [url, cache])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.text.contains("offline-player: completed"), "\(first.text)")
        let pictures = try OnDemandTests.pictures(source).count
        #expect(first.text.contains("played \(pictures) pictures from the cache: ended"), "\(first.text)")
        // Again, under another token: no download, no request.
        let second = try ExternalTool.run(Self.executable("offline-player"), [server.fileURL("offline.flv") + "?token=b", cache])
        #expect(second.status == 0 && !second.text.contains("completed"), "\(second.text)")
        #expect(server.accessLog.split(separator: "\n").count == 1, "one request in all: \(server.accessLog)")
    }

    /// The custom-sink sample measures each second's picture and sound and prints the caption as it changes.
    @Test func theCustomSinkPrintsPicturesAndCaptions() throws {
        let path = try CaptionFixture.make()
        let output = try ExternalTool.run(Self.executable("custom-sink"), [path, "5"])
        #expect(output.status == 0, "\(output.standardError)")
        let captions = output.text.split(separator: "\n").filter { $0.contains("caption:") }.map {
            String($0.split(separator: "caption: ", maxSplits: 1).last ?? "")
        }
        #expect(captions == ["HELLO WORLD", "(none)", "SECOND LINE", "(none)"], "\(output.text)")
        #expect(output.text.split(separator: "\n").filter { $0.contains("brightness") }.count >= 3, "\(output.text)")
    }

    @Test func theChannelZapperSwitchesThroughPreloadedStreams() async throws {
        let (servers, urls) = try await SwitchCommandTests.threeStreams()
        let output = try ExternalTool.run(
            Self.executable("channel-zapper"), urls + ["--every", "1.5", "--switches", "3"])
        for server in servers { await server.stop() }
        #expect(output.status == 0, "\(output.standardError)")
        let switched = output.text.split(separator: "\n").filter { $0.contains("switched: first picture") }
        #expect(switched.count == 3, "\(output.text)")
        #expect(switched.allSatisfy { $0.contains("(preloaded)") }, "\(output.text)")
        #expect(output.text.contains(": ready"), "the pool says when a stream is ready")
    }
}
