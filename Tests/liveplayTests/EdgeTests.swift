import Foundation
import LivePlay
import LivePlayTesting
import Testing

@testable import liveplay

/// The CLI at its edges, each as a new user meets it: the built binary, run against real servers.
@Suite struct EdgeTests {
    static func lines(_ text: String) throws -> [[String: Any]] {
        try EventLogTests.lines(text)
    }

    static func codes(_ text: String) throws -> [Int] {
        try lines(text).compactMap { $0["code"] as? Int }
    }

    /// A port that nothing listens on.
    static func closedPort() throws -> UInt16 {
        try LoopbackPort.free()
    }

    // MARK: - Bad input is a usage error, never a trap

    @Test(arguments: [
        "http://127.0.0.1:99999/live.flv", "https://127.0.0.1:99999/live.flv", "rtmp://127.0.0.1:99999/live/s",
        "http://127.0.0.1:18446744073709551617/x.flv", "http://127.0.0.1:-1/x.flv", "http://127.0.0.1:8o/x.flv",
    ])
    func anOutOfRangePortIsAUsageErrorNotACrash(_ url: String) throws {
        for arguments in [[url], ["inspect", url]] {
            let output = try Binary.run(arguments)
            #expect(output.status == ExitStatus.usage, "\(arguments): \(output.standardError)")
            #expect(output.standardError.contains("not a number from 1 to 65535"), "\(output.standardError)")
            #expect(!output.standardError.contains("Fatal error") && !output.standardError.contains("backtrace"))
        }
    }

    /// AsyncHTTPClient traps on an IP literal with a port over 65535, and would follow a server's redirect
    /// there: every redirect target is checked like the user's URL first.
    @Test func aRedirectToAnOutOfRangePortIsNotFollowedAndNeverTraps() throws {
        let server = try ScriptedHTTPServer { _, _ in
            .init(status: 302, reason: "Found", headers: [("Location", "http://127.0.0.1:99999/x.flv")])
        }
        let output = try Binary.run(["http://127.0.0.1:\(server.port)/live.flv", "--retries", "0", "--json"])
        #expect(output.status == ExitStatus.unavailable, "\(output.standardError)")
        #expect(!output.standardError.contains("Fatal error"))
        // Not followed: the 302 is a failed response, as a redirect off HTTP is.
        let failure = try #require(try Self.lines(output.text).first { $0["code"] as? Int == 3002 })
        #expect((failure["params"] as? [String: Any])?["http_status"] as? Int == 302)
        #expect(server.receivedRequests.count == 1)
    }

    @Test func numbersThatCannotBeDurationsAreUsageErrors() throws {
        for (option, value) in [
            ("--duration", "-1"), ("--duration", "nan"), ("--duration", "inf"), ("--duration", "1e300"),
            ("--retry-interval", "1e300"), ("--read-timeout", "nan"), ("--connect-timeout", "-5"), ("--start", "-2"),
            ("--cache-time", "nan"), ("--snapshot-every", "1e300"),
        ] {
            let output = try Binary.run(["demo", option, value])
            #expect(output.status == ExitStatus.usage, "\(option) \(value): \(output.standardError)")
            #expect(!output.standardError.contains("Missing value"), "\(option) \(value)")
            #expect(!output.standardError.contains("Fatal error"), "\(option) \(value)")
        }
        #expect(try Binary.run(["demo", "--duration", "-1"]).standardError.contains("--duration must be positive"))
        for (option, value) in [("--duration", "nan"), ("--duration", "1e300"), ("--threads", "99999999999")] {
            let output = try Binary.run(["inspect", "http://127.0.0.1:1/x.flv", option, value])
            #expect(output.status == ExitStatus.usage, "inspect \(option) \(value): \(output.standardError)")
        }
    }

    // MARK: - The exit-code table of README, row by row

    @Test func exit64ForEveryKindOfBadURL() throws {
        let cases: [(String, String)] = [
            ("ftp://127.0.0.1/live.flv", "ftp:// URLs are not supported"),
            ("http://[::1/x.flv", "no closing ']'"),
            ("http:///x.flv", "no host"),
            ("rtmp://127.0.0.1", "application and a stream"),
            ("rtmpe://127.0.0.1/live/s", "use rtmp:// or rtmps://"),
            ("rtmpt://127.0.0.1/live/s", "use rtmp:// or rtmps://"),
        ]
        for (url, message) in cases {
            let output = try Binary.run([url])
            #expect(output.status == ExitStatus.usage, "\(url)")
            #expect(output.standardError.contains(message), "\(url): \(output.standardError)")
        }
    }

    @Test func exit66ForAFileThatDoesNotExist() throws {
        for path in ["/nonexistent/stream.flv", "file:///nonexistent/stream.flv", "relative-missing.flv"] {
            let output = try Binary.run([path, "--duration", "5"])
            #expect(output.status == ExitStatus.noInput, "\(path): \(output.standardError)")
            #expect(output.standardError.contains("no such file"))
        }
    }

    @Test func exit65ForAnEmptyBodyAndForAFileThatIsNotFLV() throws {
        let server = try ScriptedHTTPServer { _, _ in .init(body: [], contentLength: true) }
        let output = try Binary.run(["http://127.0.0.1:\(server.port)/live.flv", "--duration", "5"])
        #expect(output.status == ExitStatus.dataError, "an empty body played nothing: \(output.standardError)")
        #expect(output.standardError.contains("without any media"))
        let text = try Fixtures.write(Array("not a video at all, just text\n".utf8), name: "not-flv")
        #expect(try Binary.run([text]).status == ExitStatus.dataError)
    }

    @Test func exit69WhenDurationRunsOutBeforeAnyMediaPlayed() throws {
        let url = "http://127.0.0.1:\(try Self.closedPort())/x.flv"
        let started = Date()
        let output = try Binary.run([url, "--duration", "2", "--retry-interval", "0.5", "--json"])
        #expect(output.status == ExitStatus.unavailable, "a dead stream never exits 0")
        #expect(Date().timeIntervalSince(started) < 10)
        // The person sees the cause at once on stderr, as one sentence; "lost" only for what was connected.
        #expect(output.standardError.contains("refused the connection"), "\(output.standardError)")
        #expect(!output.standardError.contains("lost"))
        #expect(!output.standardError.contains("errno"), "library text is in the log's detail, not the sentence")
        let refused = try Self.lines(output.text).first { $0["code"] as? Int == 3002 }
        let parameters = try #require(refused?["params"] as? [String: Any])
        #expect((parameters["detail"] as? String)?.contains("111") == true, "the errno stays in the detail")
        // As the system names it: SwiftNIO's own text says "connection reset (error set): Connection refused)".
        #expect(parameters["detail"] as? String == "Connection refused (errno 111)", "\(parameters)")
        #expect(!output.text.contains("reset"), "a refused connection is never called a reset")
    }

    @Test func exit69WithTheReasonWhenEveryRetryFailedAndTheSentenceGoesToStandardError() throws {
        let url = "http://127.0.0.1:\(try Self.closedPort())/x.flv"
        let output = try Binary.run([url, "--retries", "1", "--retry-interval", "0.1", "--json"])
        #expect(output.status == ExitStatus.unavailable)
        let final = try #require(try Self.lines(output.text).first { $0["code"] as? Int == -2301 })
        #expect((final["message"] as? String)?.hasPrefix("could not connect in 2 attempts") == true, "\(final)")
        let sentences = output.standardError.split(separator: "\n")
        #expect(sentences.count == 2, "the first failure at once, then the final reason: \(sentences)")
        #expect(sentences.last?.contains("could not connect") == true)
    }

    @Test func exit74WhenAnOutputCannotBeWritten() throws {
        let output = try Binary.run(["demo", "--video-out", "/nonexistent-directory/out.y4m", "--duration", "2"])
        #expect(output.status == ExitStatus.ioError)
        #expect(output.standardError.contains("/nonexistent-directory/out.y4m"))
    }

    @Test func exit0OnlyWhenMediaPlayed() throws {
        let output = try Binary.run(["demo", "--duration", "2"])
        #expect(output.status == ExitStatus.success, "\(output.standardError)")
        #expect(try Self.codes(output.text).contains(2004))
    }

    // MARK: - A closed pipe

    @Test func aClosedStandardOutputStopsTheRunAtOnceAndQuietly() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = ["demo", "--json"]
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let reader = stdout.fileHandleForReading
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("\n"), Date() < deadline {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        #expect(text.contains("\n"), "the first line arrives")
        // `| head -1`: the reader takes one line and goes away.
        try reader.close()
        let closed = Date()
        _ = await eventually { !process.isRunning }
        let took = Date().timeIntervalSince(closed)
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        // The next line (a status line comes every second) finds the pipe closed.
        #expect(took < 1.5, "stopped \(took) s after the reader left")
        #expect(process.terminationStatus == ExitStatus.success)
        let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(errors.isEmpty, "quietly: \(errors)")
    }

    // MARK: - Finding your way

    @Test func theTopLevelHelpShowsThePlayOptionsAndTheVersionIsThere() throws {
        let help = try Binary.run(["--help"])
        #expect(help.status == 0)
        // The help is wrapped to the terminal's width: the words are compared with the line breaks as spaces.
        let words = help.text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for text in ["--duration", "-t,", "--mode", "--start", "--log-level", "-q,", "--id", "Examples", "inspect",
            "Exit codes", "66 the file does not exist"]
        {
            #expect(words.contains(text), "liveplay --help lacks \(text)")
        }
        let version = try Binary.run(["--version"])
        #expect(version.status == 0 && version.text.trimmingCharacters(in: .whitespacesAndNewlines) == LivePlayCommand.version)
        let completion = try Binary.run(["--generate-completion-script", "bash"])
        #expect(completion.status == 0 && completion.text.contains("--duration"))
        // Short flags: -t and -q work as their long forms.
        let short = try Binary.run(["demo", "-t", "1.5", "-q", "-j"])
        #expect(short.status == 0, "\(short.standardError)")
    }

    // MARK: - Which stream a line belongs to

    @Test func everyRunSaysWhichStreamItIs() throws {
        let url = "http://127.0.0.1:\(try Self.closedPort())/live.flv?token=secret"
        let output = try Binary.run([url, "--retries", "0", "--id", "cdn-7", "--json"])
        let lines = try Self.lines(output.text)
        let start = try #require(lines.first)
        #expect(start["kind"] as? String == "start")
        #expect((start["url"] as? String)?.hasSuffix("/live.flv?token=***") == true, "\(start)")
        #expect(lines.allSatisfy { $0["id"] as? String == "cdn-7" })
        #expect(!output.text.contains("secret") && !output.standardError.contains("secret"))
    }
}
