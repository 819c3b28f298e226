import Foundation
import LivePlayLab
import LivePlayTesting
import Testing

@testable import LivePlay
@testable import liveplay

/// The third round of edges a new user meets (issue 45): outputs whose reader leaves, `-q`, and the messages a
/// person reads. Each runs the built binary against real files and servers; the bounds are generous, and each would
/// fail on the behaviour it replaces (a 10 s file played to its end, a status line every second).
@Suite struct ThirdRoundEdgeTests {
    /// `liveplay ARGS | head …` in bash: liveplay's exit status, its stderr, and how long the pipeline took.
    static func pipeline(_ arguments: [String], into reader: String) throws -> (status: Int32, errors: String, seconds: Double) {
        let errors = NSTemporaryDirectory() + "liveplay-pipe-\(UUID().uuidString).err"
        defer { try? FileManager.default.removeItem(atPath: errors) }
        let quoted = ([Binary.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let started = Date()
        let output = try ExternalTool.run(
            "bash", ["-c", "\(quoted) 2>'\(errors)' | \(reader) > /dev/null; exit ${PIPESTATUS[0]}"])
        let seconds = Date().timeIntervalSince(started)
        return (output.status, (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "", seconds)
    }

    // MARK: - 3. Media pipes close

    /// Each media output on a pipe whose reader leaves: the run stops then (a 10 s file would play to its end), with
    /// exit 0 and nothing on stderr, as when the log's own reader leaves.
    @Test(arguments: [
        (["--video-out", "-"], "head -c 100000"), (["--audio-out", "-"], "head -c 1000"),
        (["--captions-out", "-"], "head -1"),
    ])
    func aMediaPipeWhoseReaderLeavesStopsTheRun(_ output: [String], _ reader: String) throws {
        let file = try Fixture.longH264AAC.path()
        let run = try Self.pipeline([file, "--json"] + output, into: reader)
        #expect(run.status == ExitStatus.success, "\(output): \(run.errors)")
        #expect(run.seconds < 5, "\(output): stopped when its reader left, not at the file's end: \(run.seconds) s")
        let sentences = run.errors.split(separator: "\n").filter { !$0.hasPrefix("{") }
        #expect(sentences.isEmpty, "\(output): a reader leaving is no error: \(sentences)")
    }

    /// `liveplay ARGS` with a 256 KiB file system (tmpfs, in a mount namespace of its own) mounted at `directory`:
    /// a disk that fills while the run writes to it. Its exit status and stderr.
    static func onASmallDisk(_ arguments: (String) -> [String]) throws -> (status: Int32, errors: String) {
        let directory = NSTemporaryDirectory() + "liveplay-small-disk-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let quoted = ([Binary.path] + arguments(directory)).map { "'\($0)'" }.joined(separator: " ")
        // As root a mount namespace is enough; otherwise a user namespace maps the caller to root in it.
        let unshare = getuid() == 0 ? ["-m"] : ["-r", "-m"]
        let output = try ExternalTool.run(
            "unshare", unshare + ["bash", "-c", "mount -t tmpfs -o size=256k tmpfs '\(directory)' && exec \(quoted)"])
        return (output.status, output.standardError)
    }

    /// A media output whose disk fills midway: the run stops with 74 and one sentence naming the file and the
    /// reason, not at the end of the file with a short output and exit 0.
    @Test(arguments: ["--video-out", "--audio-out"])
    func aMediaOutputWhoseDiskFillsStopsTheRunWith74(_ option: String) throws {
        let file = try Fixture.longH264AAC.path()
        let started = Date()
        let run = try Self.onASmallDisk { [file, "--json", option, $0 + "/out"] }
        #expect(run.status == ExitStatus.ioError, "\(option): \(run.errors)")
        #expect(run.errors.contains("No space left on device"), "\(option): \(run.errors)")
        #expect(run.errors.contains("/out"), "the sentence names the file: \(run.errors)")
        #expect(Date().timeIntervalSince(started) < 9, "stopped when the disk filled, before the file's end")
    }

    /// The media cache on a disk below its free-space floor: said once at the start, and the file plays from the
    /// network all the same.
    @Test func aMediaCacheBelowItsFloorSaysSoOnceAndPlays() throws {
        let bytes = try Fixtures.bytes(try Fixture.h264AAC.path())
        let server = try ScriptedHTTPServer { _, _ in .init(body: bytes) }
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/movie.flv"
        let run = try Self.onASmallDisk { [url, "--media-cache-dir", $0, "--json"] }
        #expect(run.status == ExitStatus.success, "\(run.errors)")
        let notes = run.errors.components(separatedBy: "the media cache keeps nothing new").count - 1
        #expect(notes == 1, "said once: \(run.errors)")
    }

    // MARK: - 5. Reconnects end

    /// The reconnect events of a JSON log: their messages, in order, and the code the run ended with.
    static func reconnects(_ text: String) throws -> (messages: [String], final: Int?) {
        let events = try EdgeTests.lines(text).filter { $0["kind"] as? String == "event" }
        let messages = events.filter { $0["code"] as? Int == 2103 }.compactMap { $0["message"] as? String }
        return (messages, events.compactMap { $0["code"] as? Int }.last { $0 < 0 })
    }

    /// A server that answers, sends a couple of seconds of media and closes, every time: each connection counts as a
    /// failed attempt (it never delivered 10 s), the messages count 1 of 2 and 2 of 2, and the run ends with -2301
    /// and 69 long before its --duration (it used to loop until killed, always "attempt 1 of 3").
    @Test func aServerThatSendsALittleAndClosesUsesUpTheRetries() throws {
        let bytes = try Fixtures.bytes(try Fixture.longH264AAC.path())
        let body = Array(bytes.prefix(bytes.count / 4))
        let server = try ScriptedHTTPServer { _, _ in .init(body: body, contentLength: false) }
        defer { server.stop() }
        let started = Date()
        let output = try Binary.run([
            "http://127.0.0.1:\(server.port)/live.flv", "--retries", "2", "--retry-interval", "0.2", "-t", "60", "--json",
        ])
        let seconds = Date().timeIntervalSince(started)
        #expect(output.status == ExitStatus.unavailable, "\(output.standardError)")
        #expect(seconds < 30, "ended by the retry budget, not by --duration: \(seconds) s")
        let (messages, final) = try Self.reconnects(output.text)
        #expect(messages.count == 2, "\(messages)")
        #expect(messages.first?.contains("attempt 1 of 2") == true && messages.last?.contains("attempt 2 of 2") == true, "\(messages)")
        #expect(final == -2301)
        #expect(server.receivedRequests.count == 3, "the first connection and two retries")
    }

    /// nginx-rtmp plays a stream name nobody publishes as an idle stream that never sends media: each connection
    /// ends at the read timeout and counts, and the run ends with -2301.
    @Test func anUnknownNginxRTMPStreamEndsAfterTheRetries() throws {
        if let reason = NginxRTMPServer.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("nginx-rtmp is required under CI: \(reason)") }
            return
        }
        let nginx = try NginxRTMPServer()
        defer { nginx.stop() }
        let started = Date()
        let output = try Binary.run([
            nginx.url(stream: "nobody-publishes-this"), "--retries", "1", "--retry-interval", "0.2", "--read-timeout", "1",
            "-t", "60", "--json",
        ])
        let seconds = Date().timeIntervalSince(started)
        #expect(output.status == ExitStatus.unavailable, "\(output.standardError)")
        #expect(seconds < 20, "\(seconds) s")
        let (messages, final) = try Self.reconnects(output.text)
        #expect(messages.count == 1 && messages[0].contains("attempt 1 of 1"), "\(messages)")
        #expect(final == -2301)
    }

    /// A silent server (it accepts and answers nothing): --connect-timeout bounds each attempt's wait for the answer
    /// too, so two attempts of 1 s and a 0.2 s pause end the run in about 2.2 s (it took 10 s an attempt).
    @Test(arguments: ["http", "rtmp"])
    func aSilentServerIsBoundedByTheConnectTimeout(_ scheme: String) throws {
        let silent = try MisbehavingServer(.silent)
        defer { silent.stop() }
        let url = scheme == "http" ? "http://127.0.0.1:\(silent.port)/live.flv" : "rtmp://127.0.0.1:\(silent.port)/live/s"
        let started = Date()
        let output = try Binary.run([url, "--retries", "1", "--retry-interval", "0.2", "--connect-timeout", "1", "--json"])
        let seconds = Date().timeIntervalSince(started)
        #expect(output.status == ExitStatus.unavailable, "\(output.standardError)")
        #expect(seconds < 6, "(1 + 1) × 1 s + 0.2 s, with room: \(seconds) s")
    }

    /// `rtmp://host/live` names an application and no stream: a usage error before anything connects.
    @Test func anRTMPURLWithoutAStreamNameIsAUsageError() throws {
        let output = try Binary.run(["rtmp://127.0.0.1:1935/live", "-t", "5"])
        #expect(output.status == ExitStatus.usage, "\(output.standardError)")
        #expect(output.standardError.contains("live names the application; the stream is missing"), "\(output.standardError)")
    }

    // MARK: - 4. A truncated file is no success

    /// A 10 s file cut at 40 % of its bytes (inside a tag) and cut at a tag's end: each plays what is there, then
    /// warns 9103 with how much of how much, still ends with 2006, and exits 65 with a sentence on stderr.
    @Test func aTruncatedFileIsToldAndExits65() throws {
        let bytes = try Fixtures.bytes(try Fixture.longH264AAC.path())
        let tags = QuietTerminalTests.tags(bytes)
        let insideATag = try Fixtures.write(Array(bytes.prefix(bytes.count * 2 / 5)), name: "cut-inside-a-tag")
        let boundary = try #require(tags.first { $0.body.upperBound + 4 >= bytes.count / 2 }).body.upperBound + 4
        let atATagsEnd = try Fixtures.write(Array(bytes.prefix(boundary)), name: "cut-at-a-tag")
        for (path, inside) in [(insideATag, true), (atATagsEnd, false)] {
            let output = try Binary.run([path, "--json"])
            #expect(output.status == ExitStatus.dataError, "\(path): \(output.standardError)")
            let events = try EdgeTests.lines(output.text).filter { $0["kind"] as? String == "event" }
            let warning = try #require(events.first { $0["code"] as? Int == 9103 }, "\(path)")
            let parameters = try #require(warning["params"] as? [String: Any])
            let received = try #require(parameters["received_s"] as? Double)
            let promised = try #require(parameters["EVT_PLAY_DURATION"] as? Double)
            #expect(received > 2 && received < 7 && promised > 9.5, "\(parameters)")
            #expect((parameters["cut_inside_tag_bytes"] != nil) == inside, "\(parameters)")
            #expect(events.contains { $0["code"] as? Int == 2006 }, "what was there played to its end")
            #expect(output.standardError.contains("the media is truncated"), "\(output.standardError)")
        }
        let whole = try Binary.run([try Fixture.longH264AAC.path(), "--json", "--start", "8"])
        #expect(whole.status == 0, "\(whole.standardError)")
        #expect(!(try EdgeTests.codes(whole.text)).contains(9103), "a whole file is not truncated")
    }

    // MARK: - 11. The first frames of a fast stream

    /// A live 1080p60 8 Mbit/s stream, joined at its start (the server's GOP cache holds the first keyframe) and
    /// played to its end: every frame is shown, none dropped as late at the start. The turn that begins playback
    /// decodes 150 ms of pictures at once, about as long as they last at 1080p60 on this machine; the clock starts
    /// after that (before, 6 of the first 9 were dropped: 354–358 of 360 shown).
    @Test func everyFrameOfAFast1080p60StreamIsShownFromTheStart() async throws {
        let path = try Fixture.fast1080p60.path()
        let frames = try LiveFLVProgram(contentsOfFile: path).tags.filter { $0.type == 9 }.count
        let server = try LiveFLVServer(
            path: path, configuration: .init(port: 0, gopCache: true, loops: false, threads: 1))
        let url = "http://127.0.0.1:\(try await server.start())/live.flv"
        let output = try Binary.run([url, "--json", "--retries", "0", "-t", "20"])
        await server.stop()
        let summary = try #require(try EdgeTests.lines(output.text).first { $0["code"] as? Int == 9006 })
        let parameters = try #require(summary["params"] as? [String: Any])
        let shown = try #require(parameters["frames_shown"] as? Int)
        #expect(parameters["dropped_frames"] as? Int == 0, "\(parameters)")
        #expect(shown == frames, "\(shown) of \(frames) frames shown: \(parameters)")
    }

    // MARK: - 9. -q is quiet

    /// A healthy run with -q prints nothing: piped (it used to write a status line a second) and on a terminal (a
    /// scrolling line a second); with --json, the start line and the summary only.
    @Test func quietPrintsNothingOnAHealthyRun() throws {
        let file = try Fixture.longH264AAC.path()
        let piped = try Binary.run([file, "-t", "2.5", "-q"])
        #expect(piped.status == 0, "\(piped.standardError)")
        #expect(piped.text.isEmpty && piped.standardError.isEmpty, "\(piped.text)\(piped.standardError)")
        let json = try Binary.run([file, "-t", "2.5", "-q", "--json"])
        let kinds = try EdgeTests.lines(json.text).map { "\($0["kind"] ?? "")\($0["code"].map { " \($0)" } ?? "")" }
        #expect(kinds == ["start", "event 9006"], "which stream, and its summary: \(kinds)")
        // script(1) gives it a terminal.
        let terminal = try ExternalTool.run("script", ["-qec", "'\(Binary.path)' '\(file)' -t 2.5 -q", "/dev/null"])
        #expect(terminal.status == 0, "\(terminal.standardError)")
        #expect(terminal.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(terminal.text)")
    }

    // MARK: - 12. Messages that say what is wrong

    @Test func optionsOutOfRangeSayTheirLimits() throws {
        let cases: [([String], String)] = [
            (["--render-size", "100000x100000"], "each 1 to 16384"),
            (["--timeshift", "5s"], "--timeshift keeps 10 s to 24 h (e.g. 90s, 30m, 1h), got 5 s"),
            (["--record", "/proc/x.flv"], "/proc is on a virtual file system"),
        ]
        for (options, sentence) in cases {
            let output = try Binary.run(["demo", "-t", "1"] + options)
            #expect(output.status != 0, "\(options)")
            #expect(output.standardError.contains(sentence), "\(options): \(output.standardError)")
        }
        let file = try Fixture.h264AAC.path()
        let onFile = try Binary.run([file, "--timeshift", "30s"])
        #expect(onFile.status == ExitStatus.usage && onFile.standardError.contains("--timeshift is for live streams"))
        let small = try Binary.run(["demo", "-t", "1", "--record", NSTemporaryDirectory() + "r.flv", "--record-min-free", "100000000"])
        #expect(small.status == ExitStatus.ioError, "\(small.standardError)")
        #expect(small.standardError.contains("below the 100000000 MiB --record-min-free keeps free"), "\(small.standardError)")
        let directory = try Binary.run(["monitor", "--streams", NSTemporaryDirectory()])
        #expect(directory.status == ExitStatus.usage && directory.standardError.contains("it is a directory"), "\(directory.standardError)")
        #expect(!directory.standardError.contains("NSCocoaErrorDomain"))
    }

    /// A track the stream does not have is named as such, with the ones it has (it was "video arrives without a
    /// sequence header").
    @Test func aTrackTheStreamLacksIsNamedWithTheOnesItHas() throws {
        let output = try Binary.run([try Fixture.h264AAC.path(), "--video-track", "7", "-t", "3", "--json"])
        #expect(output.standardError.contains("--video-track 7: the stream has no such video track; its video tracks: 0"),
            "\(output.standardError)")
    }
}
