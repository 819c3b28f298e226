import Foundation
import LivePlay
import LivePlayTesting
import Testing

@testable import liveplay

/// The event log as monitoring reads it, the built-in demo, exit codes and signals: the built binary, run.
@Suite struct EventLogTests {
    /// Every JSON line of a run, as objects.
    static func lines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not an object: \(line)")
        }
    }

    static let documentation: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/event-log.md"), encoding: .utf8)) ?? ""
    }()

    @Test func theDemoLogsValidLinesWithDocumentedCodesAndKeys() throws {
        // Not a terminal: JSON lines by default.
        let output = try Binary.run(["--duration", "3.5"])
        #expect(output.status == 0, "\(output.standardError)")
        let lines = try Self.lines(output.text)
        #expect(lines.count >= 8)
        let known = Dictionary(uniqueKeysWithValues: PlayEventCode.known.map { ($0.rawValue, $0.symbol) })
        let session = lines.first?["session"] as? String
        for line in lines {
            #expect(line["v"] as? Int == 1)
            #expect(line["session"] as? String == session, "one session id per run")
            let ts = try #require(line["ts"] as? String)
            #expect(ts.count == 24 && ts.hasSuffix("Z"), "\(ts)")
            switch line["kind"] as? String {
            case "event":
                let code = try #require(line["code"] as? Int)
                #expect(known[code] == line["symbol"] as? String, "code \(code) with its documented symbol")
                #expect(line["message"] is String && line["params"] is [String: Any] && line["time_ms"] is Int)
            case "status":
                let status = try #require(line["status"] as? [String: Any])
                #expect(Set(status.keys).isSubset(of: NetStatus.keys), "\(Set(status.keys).subtracting(NetStatus.keys))")
                #expect(status["NET_STATUS_VIDEO_WIDTH"] as? Int == 640 || status["state"] as? String == "connecting")
            case "start":
                #expect((line["url"] as? String)?.hasPrefix("http://127.0.0.1:") == true, "which stream this is")
            default:
                Issue.record("unknown kind: \(line)")
            }
        }
        let statuses = lines.filter { $0["kind"] as? String == "status" }.compactMap { $0["time_ms"] as? Int }
        #expect(statuses.count >= 3)
        for (index, time) in statuses.enumerated() {
            #expect(abs(time - (index + 1) * 1000) <= 50, "status \(index + 1) at \(time) ms: ±50 ms of its second")
        }
        #expect(lines.last?["symbol"] as? String == "LIVEPLAY_EVT_SESSION_SUMMARY")
        let codes = lines.compactMap { $0["code"] as? Int }
        #expect(codes.contains(2004) && codes.contains(2001))
    }

    @Test func theReferencePageDocumentsEveryCodeAndKeyExactlyAsEmitted() {
        #expect(!Self.documentation.isEmpty)
        for code in PlayEventCode.known {
            #expect(Self.documentation.contains("| \(code.rawValue) | \(code.symbol) |"), "\(code) undocumented")
        }
        for key in NetStatus.keys {
            #expect(Self.documentation.contains("`\(key)`"), "\(key) undocumented")
        }
    }

    @Test func sigintStopsCleanlyFlushesAndExitsZero() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = ["demo", "--json"]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait for playback to begin, reading as the lines come (they are flushed one by one).
        var text = ""
        let reader = stdout.fileHandleForReading
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("PLAY_EVT_PLAY_BEGIN"), Date() < deadline {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        #expect(text.contains("PLAY_EVT_PLAY_BEGIN"), "events arrive while playing, not at exit")
        process.interrupt()
        text += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        let lines = try Self.lines(text)
        let summary = try #require(lines.last)
        #expect(summary["symbol"] as? String == "LIVEPLAY_EVT_SESSION_SUMMARY")
        #expect((summary["params"] as? [String: Any])?["outcome"] as? String == "stopped")
    }

    @Test func framesStopsAfterThatManyPicturesAndTracesThem() throws {
        let output = try Binary.run(["demo", "--frames", "5", "--trace-frames"])
        #expect(output.status == 0)
        let frames = try Self.lines(output.text).filter { $0["kind"] as? String == "frame" }
        #expect(frames.count == 5)
        let pts = frames.compactMap { $0["pts_ms"] as? Int }
        #expect(pts == pts.sorted() && Set(pts).count == 5, "\(pts)")
        #expect(frames.allSatisfy { ($0["shown_at_ms"] as? Int ?? 0) > 1_700_000_000_000 && $0["rate"] != nil })
    }

    @Test func aResponseThatIsNotFLVIsUnplayableAtOnce() throws {
        let server = try ScriptedHTTPServer { _, _ in
            .init(body: Array("<html><body>not a stream</body></html>".utf8), contentLength: false)
        }
        let output = try Binary.run(["http://127.0.0.1:\(server.port)/live.flv", "--json", "--retries", "3"])
        #expect(output.status == ExitStatus.dataError)
        let codes = try Self.lines(output.text).compactMap { $0["code"] as? Int }
        #expect(codes.contains(-9001) && !codes.contains(2103), "no reconnect for a page that is not FLV: \(codes)")
    }

    @Test func videoOutToStandardOutputMovesTheLogToStandardError() throws {
        let output = try Binary.run(["demo", "--frames", "10", "--video-out", "-", "--json"])
        #expect(output.status == 0, "\(output.standardError)")
        // The stream, walked as bytes (3.5 MB as a String took 20 s in a debug build): its header line, then each
        // frame's `FRAME` line and a 640×360 4:2:0 picture, ten times, and nothing after.
        let video = [UInt8](output.standardOutput)
        let header = try #require(video.firstIndex(of: 0x0A), "a header line")
        #expect(String(decoding: video[..<header], as: UTF8.self).hasPrefix("YUV4MPEG2 W640 H360"))
        var frames = 0
        var at = header + 1
        while at < video.count, video[at...].starts(with: Array("FRAME\n".utf8)) {
            frames += 1
            at += 6 + 640 * 360 * 3 / 2
        }
        #expect(frames == 10 && at == video.count, "\(frames) frames, \(video.count - at) bytes left over")
        let log = try Self.lines(output.standardError)
        #expect(log.contains { $0["symbol"] as? String == "PLAY_EVT_PLAY_BEGIN" || $0["kind"] as? String == "event" })
    }

    @Test func theHelpDocumentsTheOptions() {
        let help = LivePlayCommand.helpMessage(for: PlayCommand.self)
        for option in [
            "--json", "--human", "--duration", "--frames", "--no-decode", "--trace-frames", "--mode", "--cache-time",
            "--min-cache", "--max-cache", "--video-out", "--audio-out", "--snapshot-every", "--render-mode", "--rotation",
            "--arrival-trace", "--window", "--volume-evaluation", "Exit codes", "demo",
        ] {
            #expect(help.contains(option), "help lacks \(option)")
        }
    }

    @Test func usageErrorsExit64() throws {
        #expect(try Binary.run(["demo", "--no-decode", "--frames", "1"]).status == ExitStatus.usage)
        #expect(try Binary.run(["demo", "--json", "--human"]).status == ExitStatus.usage)
        #expect(try Binary.run(["demo", "--rotation", "45"]).status == ExitStatus.usage)
        #expect(try Binary.run(["demo", "--volume-evaluation", "50"]).status == ExitStatus.usage)
    }
}

@Suite struct TerminalSafetyTests {
    @Test func streamTextCannotDriveTheTerminal() {
        let hostile = "onMetaData \u{1B}]0;owned\u{07}\u{1B}[2J\r\nfake line\u{9B}"
        let shown = EventLog.printable(hostile)
        #expect(!shown.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        #expect(shown == "onMetaData \\u{1b}]0;owned\\u{7}\\u{1b}[2J\\u{d}\\u{a}fake line\\u{9b}")
    }
}
