import Foundation
import LivePlay
import LivePlayTesting
import Testing

@testable import liveplay

/// Media on demand through the CLI: a local file, a `file://` URL and a file served by nginx (a response
/// with a Content-Length) are played from their start at 1.0×, every picture once at its time, to 2006.
@Suite struct OnDemandTests {
    struct Frame {
        var pts: Int64
        var shownAt: Int64
        var rate: Double
        var droppedBefore: Int
    }

    static func frames(_ text: String) throws -> [Frame] {
        try EventLogTests.lines(text).filter { $0["kind"] as? String == "frame" }.map {
            Frame(
                pts: Int64(try #require($0["pts_ms"] as? Int)), shownAt: Int64(try #require($0["shown_at_ms"] as? Int)),
                rate: try #require($0["rate"] as? Double), droppedBefore: try #require($0["dropped_before"] as? Int))
        }
    }

    /// Checks a run played `expected` (the pictures' presentation times) exactly once each, in order, at
    /// 1.0×, spaced on the wall clock as in the file.
    static func expectPlayedAtNormalSpeed(_ output: ExternalTool.Output, _ expected: [Int64]) throws {
        #expect(output.status == 0, "\(output.standardError)")
        let frames = try Self.frames(output.text)
        #expect(frames.map(\.pts) == expected, "every picture once, in order")
        #expect(frames.allSatisfy { $0.rate == 1.0 && $0.droppedBefore == 0 })
        if let first = frames.first {
            let drift = frames.map { ($0.shownAt - first.shownAt) - ($0.pts - first.pts) }
            #expect(drift.allSatisfy { abs($0) <= 100 }, "shown at the file's pace: \(drift.min()!)…\(drift.max()!) ms")
        }
        let lines = try EventLogTests.lines(output.text)
        let codes = lines.compactMap { $0["code"] as? Int }
        #expect(!codes.contains(9001) && !codes.contains(9003) && !codes.contains(2107), "no catch-up on demand")
        #expect(codes.filter { $0 != 9006 }.last == 2006, "ends with PLAY_END: \(codes)")
        let progress = lines.filter { $0["code"] as? Int == 2005 }.compactMap { $0["params"] as? [String: Any] }
        #expect(!progress.isEmpty)
        for parameters in progress {
            let duration = try #require(parameters["EVT_PLAY_DURATION"] as? Double)
            #expect(abs(duration - 3.0) < 0.2, "duration \(duration)")
            let position = try #require(parameters["EVT_PLAY_PROGRESS"] as? Double)
            #expect(position >= 0 && position <= duration + 0.1)
        }
    }

    /// The video pictures of a file, in presentation order, from ffprobe.
    static func pictures(_ path: String, fromDTS start: Int64 = 0) throws -> [Int64] {
        try Oracle.packets(path).filter { $0.stream == "video" && $0.dts >= start }.map(\.pts).sorted()
    }

    @Test func aLocalFileAndAFileURLPlayEveryPictureOnceAtItsTime() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let expected = try Self.pictures(path)
        try Self.expectPlayedAtNormalSpeed(try Binary.run([path, "--trace-frames", "--json"]), expected)
        try Self.expectPlayedAtNormalSpeed(try Binary.run(["file://" + path, "--trace-frames", "--json"]), expected)
    }

    @Test func aFileOverHTTPWithAContentLengthIsOnDemandAndStartShowsThePictureAtTheTarget() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let name = URL(fileURLWithPath: path).lastPathComponent
        let server: NginxRTMPServer
        do {
            server = try NginxRTMPServer(staticFiles: directory)
        } catch {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("nginx is needed under CI: \(error)") }
            return
        }
        defer { server.stop() }
        let url = server.fileURL(name)
        try Self.expectPlayedAtNormalSpeed(try Binary.run([url, "--trace-frames", "--json"]), try Self.pictures(path))

        // --start 1.5: the picture on screen at 1.5 s, and everything from it.
        let output = try Binary.run([url, "--trace-frames", "--json", "--start", "1.5"])
        #expect(output.status == 0, "\(output.standardError)")
        let all = try Self.pictures(path)
        let atTarget = try #require(all.last { $0 <= 1500 })
        #expect(try Self.frames(output.text).map(\.pts) == all.filter { $0 >= atTarget }, "from the picture at 1.5 s")
        let codes = try EdgeTests.codes(output.text)
        #expect(codes.contains(9009) && codes.contains(9010) && codes.last == 9006)
        #expect(!server.accessLog.contains("206"), "without a keyframe index, no byte range is asked for")

        // --keyframe-seek: the keyframe at or before 1.5 s, and everything from it.
        let packets = try Oracle.packets(path).filter { $0.stream == "video" }
        let keyframe = try #require(packets.filter { $0.isKeyframe && $0.dts <= 1500 }.last)
        #expect(keyframe.pts < atTarget, "1.5 s is not on a keyframe")
        let fromKeyframe = try Binary.run([url, "--trace-frames", "--json", "--start", "1.5", "--keyframe-seek"])
        #expect(fromKeyframe.status == 0, "\(fromKeyframe.standardError)")
        let frames = try Self.frames(fromKeyframe.text)
        #expect(frames.map(\.pts) == (try Self.pictures(path, fromDTS: keyframe.dts)))
        #expect(frames.first?.pts == keyframe.pts, "starts at the keyframe at or before the target")
    }

    /// A file whose connection breaks in the middle goes on where it broke off after the reconnect (the
    /// new response starts at byte 0; what was had already is skipped), not from its start again.
    @Test func aFileWhoseConnectionBreaksGoesOnWhereItBrokeOff() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let bytes = try Fixtures.bytes(path)
        let requests = LockedCounter()
        let server = try ScriptedHTTPServer { _, _ in
            // The first response promises the whole file and ends at half of it.
            if requests.next() == 1 {
                return .init(
                    headers: [("Content-Length", "\(bytes.count)")], body: Array(bytes.prefix(bytes.count / 2)),
                    contentLength: false)
            }
            return .init(body: bytes)
        }
        let output = try Binary.run([
            "http://127.0.0.1:\(server.port)/movie.flv", "--trace-frames", "--json", "--retry-interval", "0.2",
        ])
        #expect(output.status == 0, "\(output.standardError)")
        let codes = try EdgeTests.codes(output.text)
        #expect(codes.contains(2103), "the broken response was retried")
        // Said as what happened: the body ended before its Content-Length (not "something that is not HTTP").
        let retry = try EdgeTests.lines(output.text).first { $0["code"] as? Int == 2103 }
        #expect((retry?["message"] as? String)?.contains("closed the connection before the end") == true, "\(retry ?? [:])")
        #expect(try Self.frames(output.text).map(\.pts) == (try Self.pictures(path)), "every picture once, in order")
    }

    /// A server that answers `--start`'s `Range` request (to the keyframe the file's index names) with bytes that
    /// are not the file's (206, the right length, text): the run does not resynchronise on them and then call the
    /// start "past the end" (exit 64, as it did); it ends with 65 and a sentence naming the byte and the `Range`.
    @Test func aRangeAnsweredWithGarbageEndsWith65() throws {
        let path = try Fixtures.make(
            name: "h264-aac-10s-indexed", extension: "flv",
            Fixture.longH264AAC.ffmpegArguments + ["-flvflags", "add_keyframe_index", "-f", "flv"])
        let bytes = try Fixtures.bytes(path)
        let server = try ScriptedHTTPServer { _, headers in
            guard let range = headers["range"], let from = Int(range.dropFirst("bytes=".count).prefix { $0.isNumber })
            else { return .init(headers: [("Accept-Ranges", "bytes")], body: bytes) }
            let garbage = Array(String(repeating: "<html>not the file</html>\n", count: bytes.count / 20).utf8)
            return .init(
                status: 206, reason: "Partial Content",
                headers: [("Content-Range", "bytes \(from)-\(bytes.count - 1)/\(bytes.count)")],
                body: Array(garbage.prefix(bytes.count - from)))
        }
        defer { server.stop() }
        let started = Date()
        let output = try Binary.run(["http://127.0.0.1:\(server.port)/movie.flv", "--json", "--start", "7"])
        #expect(Date().timeIntervalSince(started) < 30, "no hang on the garbage")
        #expect(server.receivedRequests.contains { $0.headers["range"] != nil }, "the start asked for a Range")
        #expect(output.status == ExitStatus.dataError, "\(output.standardError)")
        #expect(output.standardError.contains("from byte"), "\(output.standardError)")
        #expect(output.standardError.contains("Range"), "\(output.standardError)")
        #expect(!output.standardError.contains("past the end"), "\(output.standardError)")
    }

    /// A file with a keyframe index (`-flvflags add_keyframe_index`): `--start` asks nginx for the bytes from
    /// the keyframe on (`Range`, answered 206) instead of reading everything before it.
    @Test func withAKeyframeIndexStartAsksForAByteRange() throws {
        let path = try Fixtures.make(
            name: "h264-aac-10s-indexed", extension: "flv",
            Fixture.longH264AAC.ffmpegArguments + ["-flvflags", "add_keyframe_index", "-f", "flv"])
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let server: NginxRTMPServer
        do {
            server = try NginxRTMPServer(staticFiles: directory)
        } catch {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("nginx is needed under CI: \(error)") }
            return
        }
        defer { server.stop() }
        let started = Date()
        let output = try Binary.run([
            server.fileURL(URL(fileURLWithPath: path).lastPathComponent), "--trace-frames", "--json", "--start", "7",
        ])
        #expect(output.status == 0, "\(output.standardError)")
        let all = try Self.pictures(path)
        let atTarget = try #require(all.last { $0 <= 7000 })
        #expect(try Self.frames(output.text).map(\.pts) == all.filter { $0 >= atTarget }, "from the picture at 7 s")
        #expect(server.accessLog.contains("206 bytes="), "a byte range from the keyframe: \(server.accessLog)")
        #expect(!(try EdgeTests.codes(output.text)).contains(9101), "no warning for the sequence headers it skipped")
        // From 6 s on only: about 4 s of playing, not 10.
        #expect(Date().timeIntervalSince(started) < 8)
    }
}

/// Counts calls from any thread.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    /// 1 on the first call, then 2, …
    func next() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }
}
