import Foundation
import LivePlayTesting
import Testing

@testable import LivePlay
@testable import liveplay

/// The second round of edges a new user meets (issue 28): outputs that cannot be written, a stream that plays
/// with nothing to show, and what the terminal says. Each runs the built binary against real servers and files.
@Suite struct NewUserEdgeTests {
    // MARK: - 1. Outputs that cannot be written

    @Test(arguments: ["x.mp4", "x.flv"])
    func aRecordingInAMissingDirectoryFailsBeforePlayingWithExit74(_ name: String) throws {
        let file = try Fixture.longH264AAC.path()
        for input in [file, "demo"] {
            let started = Date()
            let output = try Binary.run([input, "--record", "/nonexistent/dir/\(name)", "--duration", "3", "--json"])
            #expect(output.status == ExitStatus.ioError, "\(input): \(output.standardError)")
            #expect(Date().timeIntervalSince(started) < 2.5, "fails at start, not after the duration")
            let errors = output.standardError.split(separator: "\n")
            #expect(errors.count == 1, "one plain sentence: \(output.standardError)")
            #expect(output.standardError.contains("the directory /nonexistent/dir does not exist"))
            #expect(!(try EdgeTests.codes(output.text)).contains(2004), "nothing was played")
        }
    }

    @Test func aSnapshotInAMissingDirectoryFailsAtStartAndNamesNoPartialFile() throws {
        let file = try Fixture.longH264AAC.path()
        let started = Date()
        let output = try Binary.run([file, "--snapshot", "/nonexistent/dir/last.png", "--duration", "3", "--json"])
        #expect(output.status == ExitStatus.ioError, "\(output.standardError)")
        #expect(Date().timeIntervalSince(started) < 2.5, "fails at start, not after the duration")
        #expect(output.standardError.contains("/nonexistent/dir/last.png"))
        #expect(!output.standardError.contains(".partial"))
    }

    /// A real tmpfs too small for the recording: `ENOSPC` half-way, while playback goes on.
    @Test func aRecordingThatFailsLaterIsToldOnStandardErrorAndExits74() throws {
        guard let disk = try SmallFileSystem.make(bytes: 256 << 10) else { return }
        defer { disk.unmount() }
        let file = try Fixture.renditionHigh.path()
        let path = disk.directory + "/full.mp4"
        let output = try Binary.run([file, "--record", path, "--record-min-free", "0", "--json"])
        #expect(output.status == ExitStatus.ioError, "\(output.standardError)")
        let codes = try EdgeTests.codes(output.text)
        #expect(codes.contains(9102), "the warning event stays")
        #expect(codes.contains(2006), "playback itself went on to the end")
        #expect(output.standardError.contains("recording stopped"), "\(output.standardError)")
        #expect(output.standardError.contains("74"), "the sentence says what the exit status will be")
    }

    // MARK: - 2. Never "playing" with nothing to show

    /// A live HTTP-FLV stream whose sequence headers never come, played for 4 s: no PLAY_BEGIN, no exit 0,
    /// statuses that say why, and one warning naming the cause.
    @Test func aStreamWithoutSequenceHeadersNeverClaimsToPlay() throws {
        let body = Fixtures.withoutSequenceHeaders(try Fixtures.bytes(try Fixture.longH264AAC.path()))
        let server = try ScriptedHTTPServer { _, _ in
            .init(body: body, pacing: (body.count / 100, .milliseconds(100)), contentLength: false)
        }
        defer { server.stop() }
        let output = try Binary.run(["http://127.0.0.1:\(server.port)/live.flv", "-t", "4", "--json"])
        #expect(output.status == ExitStatus.unavailable, "never played: \(output.standardError)")
        let lines = try EdgeTests.lines(output.text)
        #expect(!lines.contains { $0["code"] as? Int == 2004 }, "no PLAY_BEGIN without a picture")
        #expect(!lines.contains { $0["code"] as? Int == 2005 }, "no progress of a stream that is not playing")
        let statuses = lines.compactMap { $0["status"] as? [String: Any] }
        #expect(statuses.count >= 3)
        #expect(statuses.allSatisfy { $0["state"] as? String != "playing" }, "\(statuses.map { $0["state"] ?? "" })")
        #expect(statuses.contains { $0["reason"] as? String == "no_decodable_video" })
        let warnings = lines.filter {
            ($0["params"] as? [String: Any])?["reason"] as? String == "no_decodable_video"
        }
        #expect(warnings.count == 1, "the cause is named once")
        #expect(warnings.first?["code"] as? Int == 2101)
        #expect(output.standardError.contains("no media played"), "\(output.standardError)")
    }

    // MARK: - 3. Media on demand is not a live stream

    @Test func aHealthyFileReadAheadGivesNoFalseNoMediaWarning() throws {
        for fixture in [Fixture.flashBeep, .renditionHigh, .longH264AAC] {
            let output = try Binary.run([try fixture.path(), "--duration", "3", "--json"])
            #expect(output.status == 0, "\(fixture): \(output.standardError)")
            let lags = try EdgeTests.lines(output.text).filter { $0["code"] as? Int == 2104 }
            #expect(lags.isEmpty, "\(fixture): \(lags)")
        }
    }

    // MARK: - 4. A file's status line and summary speak of position, not latency

    @Test func aFileStatusShowsPositionAndDurationAndItsSummaryNoLatency() throws {
        let path = try Fixture.longH264AAC.path()
        let human = try Binary.run([path, "--human", "--duration", "3"])
        let statuses = human.text.split(separator: "\n").filter { $0.contains(" status ") }
        #expect(statuses.contains { $0.contains(" / 0:10") }, "position / duration: \(statuses)")
        #expect(!statuses.contains { $0.contains("latency") }, "\(statuses)")
        let json = try Binary.run([path, "--start", "4", "--duration", "3", "--json"])
        let lines = try EdgeTests.lines(json.text)
        let playing = lines.compactMap { $0["status"] as? [String: Any] }.filter { $0["state"] as? String == "playing" }
        #expect(!playing.isEmpty)
        #expect(
            playing.allSatisfy { ($0["NET_STATUS_VIDEO_BITRATE"] as? Int ?? 0) > 0 },
            "the bitrate after --start: \(playing.map { $0["NET_STATUS_VIDEO_BITRATE"] ?? 0 })")
        let summary = try #require(lines.last { $0["code"] as? Int == 9006 }?["params"] as? [String: Any])
        #expect(summary["mean_latency_ms"] == nil && summary["p95_latency_ms"] == nil, "\(summary)")
        #expect(summary["on_demand"] as? Bool == true)
    }

    @Test func theStatusLineFits80ColumnsByLeavingOutFieldsNotByCutting() {
        var status = NetStatusSample.playing
        status.endToEndLatencyMilliseconds = 1234
        status.rate = 1.2
        status.reason = nil
        let line = StatusLine.text(status, columns: 80)
        #expect(line.count <= 79, "\(line)")
        #expect(!line.hasSuffix("…"), "\(line)")
        #expect(line.hasPrefix("playing  latency "), "the most important fields stay: \(line)")
        let wide = StatusLine.text(status, columns: 200)
        #expect(wide.contains("1920x1080") && wide.contains("e2e"), "all of it when there is room: \(wide)")
        status.positionMilliseconds = 72_400
        status.durationMilliseconds = 3_725_000
        let file = StatusLine.text(status, columns: 80)
        #expect(file.hasPrefix("playing  1:12 / 1:02:05"), "\(file)")
        #expect(!file.contains("latency"))
    }

    // MARK: - 5. Errors that say what happened

    @Test func startPastTheEndSaysSoWithTheDuration() throws {
        let output = try Binary.run([try Fixture.longH264AAC.path(), "--start", "30"])
        #expect(output.status == ExitStatus.usage, "\(output.standardError)")
        #expect(output.standardError.contains("past the end"), "\(output.standardError)")
        #expect(output.standardError.contains("10.0 s"), "names the duration: \(output.standardError)")
    }

    @Test func aDirectoryGivenAsInputIsCalledADirectory() throws {
        let output = try Binary.run([NSTemporaryDirectory(), "--duration", "2"])
        #expect(output.status == ExitStatus.noInput)
        #expect(output.standardError.contains("is a directory"), "\(output.standardError)")
        #expect(!output.standardError.contains("no such file"))
    }

    @Test func noRetriesMeansNoRetryingAndA404NamesTheURLOnce() throws {
        let closed = "http://127.0.0.1:\(try LoopbackPort.free())/x.flv"
        let refused = try Binary.run([closed, "--retries", "0", "--json"])
        #expect(refused.status == ExitStatus.unavailable)
        #expect(!refused.standardError.contains("Retrying"), "\(refused.standardError)")
        let server = try ScriptedHTTPServer { _, _ in .init(status: 404, reason: "Not Found") }
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/missing.flv"
        let missing = try Binary.run([url, "--json"])
        #expect(missing.status == ExitStatus.unavailable)
        #expect(missing.standardError.components(separatedBy: "/missing.flv").count == 2, "\(missing.standardError)")
    }

    @Test func noRawFoundationErrorTextReachesTheUser() throws {
        let output = try Binary.run(
            [try Fixture.h264AAC.path(), "--media-cache-dir", "/proc/liveplay-cache", "--duration", "1"])
        #expect(output.status == ExitStatus.ioError, "\(output.standardError)")
        #expect(!output.standardError.contains("Error Domain"), "\(output.standardError)")
        #expect(!output.standardError.contains("NSCocoaErrorDomain"))
        #expect(output.standardError.contains("/proc/liveplay-cache"))
    }

    // MARK: - 8. stderr is one voice

    @Test func aNormalRTMPStopPrintsNothingOnStandardError() throws {
        if let reason = NginxRTMPServer.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("\(reason)") }
            return
        }
        let nginx = try NginxRTMPServer()
        let publisher = try FFmpegPublisher(file: try Fixture.longH264AAC.path(), url: nginx.url(stream: "s"))
        defer {
            publisher.stop()
            nginx.stop()
        }
        _ = LoopbackPort.wait(timeout: .seconds(5)) { false }
        let output = try Binary.run([nginx.url(stream: "s"), "-t", "3", "--json"])
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardError.isEmpty, "nothing alarming at a normal stop: \(output.standardError)")
        let debug = try Binary.run([nginx.url(stream: "s"), "-t", "2", "--json", "--log-level", "debug"])
        #expect(debug.standardError.contains("liveplay: librtmp: "), "asked for, they come in the same voice")
    }

    @Test func anMP4RecordingMakesNoMuxerWarnings() throws {
        let directory = NSTemporaryDirectory() + "liveplay-clean-record-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for fixture in [Fixture.longH264AAC, .h264MP3] {
            let output = try Binary.run(
                [try fixture.path(), "--record", directory + "/\(fixture.rawValue).mp4", "--json", "--log-level", "warning"])
            #expect(output.status == 0, "\(fixture): \(output.standardError)")
            #expect(!output.standardError.contains("Packet duration"), "\(fixture): \(output.standardError)")
            #expect(!output.standardError.contains("pts has no value"), "\(fixture): \(output.standardError)")
        }
    }

    // MARK: - 9. Terminal and help

    /// `-q --json` keeps the summary monitoring reads; `-q` alone prints nothing on a healthy run (issue 45).
    @Test func quietWithAJSONLogKeepsTheSummary() throws {
        let output = try Binary.run([try Fixture.h264AAC.path(), "-q", "--json"])
        let codes = try EdgeTests.codes(output.text)
        #expect(codes.contains(9006), "\(codes)")
        #expect(codes.allSatisfy { $0 < 0 || $0 == 9006 })
    }

    /// Bash's completion run for real: the script sourced, the words as typed, `_liveplay` called as bash calls it.
    static func bashCompletions(_ words: [String]) throws -> [String] {
        let script = try Binary.run(["--generate-completion-script", "bash"]).text
        let path = try Fixtures.write(Array(script.utf8), name: "liveplay-completion-\(UUID().uuidString.prefix(8)).bash")
        let line = words.joined(separator: " ")
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let driver = """
            source '\(path)'
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
            _liveplay liveplay '\(words.last ?? "")' '\(words.dropLast().last ?? "")'
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let output = try ExternalTool.check("bash", ["-c", driver]).text
        return output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test func completionOffersTheDefaultSubcommandsOptionsAndValues() throws {
        #expect(try Self.bashCompletions(["liveplay", "--mo"]).contains("--mode"))
        #expect(Set(try Self.bashCompletions(["liveplay", "--mode", ""])) == ["auto", "speed", "smooth"], "the modes only")
        #expect(Set(try Self.bashCompletions(["liveplay", "--render-mode", "fill-"])) == ["fill-screen", "fill-edge"])
        #expect(try Self.bashCompletions(["liveplay", "in"]).contains("inspect"), "the subcommands still complete")
        #expect(try Self.bashCompletions(["liveplay", "inspect", "--pa"]).contains("--packets"))
        let fish = try Binary.run(["--generate-completion-script", "fish"]).text
        #expect(fish.contains("should_offer_completions_for_flags_or_options \"liveplay\" m mode"), "fish too")
    }

    @Test func helpListsTheWindowKeysAndAlignsItsExamples() throws {
        let help = LivePlayCommand.helpText(columns: 80)
        #expect(help.contains("Window keys"), "\(help)")
        #expect(help.contains("space pause / resume"))
        let examples = try #require(help.components(separatedBy: "Examples:\n").last?.components(separatedBy: "\n\n").first)
        let lines = examples.split(separator: "\n")
        #expect(lines.count >= 8)
        #expect(lines.allSatisfy { $0.hasPrefix("  liveplay") || $0.hasPrefix(String(repeating: " ", count: 40)) },
            "no example wraps at 80 columns: \(examples)")
        // Every description starts in one column, on the command's line or the next.
        let columns = lines.compactMap { line -> Int? in
            let text = String(line)
            let start = text.hasPrefix("  liveplay") ? text.range(of: "  ", range: text.index(text.startIndex, offsetBy: 2)..<text.endIndex) : text.range(of: " ")
            guard let start else { return nil }
            return text.distance(from: text.startIndex, to: text[start.lowerBound...].firstIndex { $0 != " " } ?? text.endIndex)
        }
        #expect(Set(columns).count == 1, "every description starts in one column: \(columns)")
    }

    /// `liveplay help monitor`'s examples at 80 columns: no command or description wraps (issue 45).
    @Test func theMonitorsHelpExamplesDoNotWrapAt80Columns() throws {
        let help = MonitorCommand.helpMessage(columns: 80)
        let examples = try #require(help.components(separatedBy: "Examples:\n").last?.components(separatedBy: "\n\n").first)
        let lines = examples.split(separator: "\n")
        #expect(lines.count >= 5)
        #expect(lines.allSatisfy { $0.hasPrefix("  liveplay") || $0.hasPrefix("  kill") || $0.hasPrefix(String(repeating: " ", count: 42)) },
            "no example wraps at 80 columns: \(examples)")
    }
}

/// A net status with every field set, for the status line's tests.
enum NetStatusSample {
    static var playing: NetStatus {
        NetStatus(
            elapsedMilliseconds: 5000, state: "playing", processCPU: 10, machineCPU: 20, videoWidth: 1920,
            videoHeight: 1080, netSpeedKbps: 2000, netJitterMilliseconds: 12, videoFPS: 30, videoBitrateKbps: 1900,
            audioBitrateKbps: 128, cacheMilliseconds: 1230, serverAddress: "127.0.0.1:1935", videoCacheFrames: 30,
            audioCacheMilliseconds: 1000, decodedCacheFrames: 2, avReceiveIntervalMilliseconds: 0,
            avPlayIntervalMilliseconds: 0, gopSeconds: 1, audioSampleRate: 44100, audioChannels: 2, videoCodec: "h264",
            audioCodec: "aac", latencyMilliseconds: 1230, endToEndLatencyMilliseconds: nil, target: .seconds(1),
            rate: 1, stutters: 0, stutterMilliseconds: 0, droppedFrames: 0, framesShown: 150, reconnects: 0,
            mode: "auto")
    }
}
