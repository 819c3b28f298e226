import Foundation
import LivePlay
import LivePlayTesting
import Testing

@testable import liveplay

/// What a person sees: the status line in a real terminal (tmux) at 60 and 120 columns, libavcodec's own
/// messages through the logger, the demuxer's warnings in the live log, and media played out before an
/// error ends the run.
@Suite struct QuietTerminalTests {
    /// The FLV tags of a file: (offset of the tag header, type, body range).
    static func tags(_ bytes: [UInt8]) -> [(offset: Int, type: UInt8, body: Range<Int>)] {
        var tags: [(Int, UInt8, Range<Int>)] = []
        var offset = 13
        while offset + 11 <= bytes.count {
            let size = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard offset + 11 + size + 4 <= bytes.count else { break }
            tags.append((offset, bytes[offset], (offset + 11)..<(offset + 11 + size)))
            offset += 11 + size + 4
        }
        return tags
    }

    /// The H.264 fixture with inter frames 10 to 14 overwritten in their slice data: libavcodec complains.
    static func corruptStream() throws -> String {
        var bytes = try Fixtures.bytes(try Fixture.h264AAC.path())
        let inter = Self.tags(bytes).filter { $0.type == 9 && bytes[$0.body.lowerBound] >> 4 == 2 }
        for tag in inter.dropFirst(10).prefix(5) {
            for index in (tag.body.lowerBound + 12)..<min(tag.body.upperBound, tag.body.lowerBound + 400) {
                bytes[index] = 0xA5
            }
        }
        return try Fixtures.write(bytes, name: "corrupt-inter")
    }

    // MARK: - The status line in a real terminal

    /// Runs `liveplay demo --human` in a tmux window `columns` wide; `resizeTo` narrows it once the status
    /// line is up. Returns the screen while playing (a status line up, after the resize) and once the run has
    /// ended.
    static func screens(columns: Int, resizeTo narrower: Int? = nil) async throws -> (playing: String, ended: String)? {
        guard let tmux = ExternalTool.find("tmux") else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("tmux is needed under CI") }
            return nil
        }
        let socket = "liveplay-test-\(UUID().uuidString.prefix(8))"
        let command = "\(Binary.path) demo --human --duration 5; echo liveplay-exited; sleep 30"
        // The tmux server daemonizes and keeps every descriptor it inherits; one that Foundation's Process
        // watches would make this wait for the whole session. Python's close_fds starts it clean.
        let launcher = """
            import subprocess, sys
            sys.exit(subprocess.run(sys.argv[1:], close_fds=True, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode)
            """
        _ = try ExternalTool.check(
            "python3", ["-c", launcher, tmux, "-L", socket, "new-session", "-d", "-x", "\(columns)", "-y", "40", command])
        defer { _ = try? ExternalTool.run(tmux, ["-L", socket, "kill-server"]) }
        var screen = ""
        var playing: String?
        var resized = narrower == nil
        // Each look at the screen: resize once a status line is up, keep the newest screen while playing.
        _ = try await eventually(within: .seconds(20)) {
            screen = try ExternalTool.check(tmux, ["-L", socket, "capture-pane", "-p"]).text
            guard !statusRows(screen).isEmpty else { return screen.contains("liveplay-exited") }
            if !resized, let narrower {
                resized = true
                _ = try ExternalTool.check(tmux, ["-L", socket, "resize-window", "-x", "\(narrower)"])
            } else if resized, screen.contains("PLAY_EVT_PLAY_BEGIN"), playing == nil || !screen.contains("SUMMARY") {
                playing = screen
            }
            return screen.contains("liveplay-exited")
        }
        #expect(screen.contains("LIVEPLAY_EVT_SESSION_SUMMARY") && screen.contains("liveplay-exited"), "\(screen)")
        let seen = try #require(playing, "a status line while playing: \(screen)")
        return (seen, screen)
    }

    /// The rows that are a status line: they start with the state.
    static func statusRows(_ screen: String) -> [String] {
        screen.split(separator: "\n").map(String.init).filter { row in
            ["playing  ", "loading  ", "connecting  ", "paused  "].contains { row.hasPrefix($0) }
        }
    }

    /// While playing: one status row, never wrapped, no fragment of an earlier one, fitted by leaving fields out
    /// rather than cutting; no progress events. Once ended: the status line is gone, below the summary.
    static func expectCleanStatus(_ screens: (playing: String, ended: String), columns: Int) {
        let rows = screens.playing.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(!screens.ended.contains("PLAY_EVT_PLAY_PROGRESS"), "the status line shows the progress already")
        let statusRows = Self.statusRows(screens.playing)
        #expect(statusRows.count == 1, "one status line, redrawn in place: \(statusRows)")
        #expect(rows.allSatisfy { $0.count <= columns })
        #expect(statusRows.allSatisfy { !$0.hasSuffix("…") && $0.contains("latency") }, "\(statusRows)")
        if columns > 100 {
            #expect(statusRows.first?.contains("640x360") == true, "whole at \(columns) columns: \(statusRows)")
        } else {
            #expect(statusRows.first?.contains("640x360") == false, "the size left out first: \(statusRows)")
        }
        #expect(Self.statusRows(screens.ended).isEmpty, "no stale status line after the summary: \(screens.ended)")
    }

    @Test(arguments: [60, 120])
    func theStatusLineFitsTheTerminalAndProgressIsNotRepeated(_ columns: Int) async throws {
        guard let screens = try await Self.screens(columns: columns) else { return }
        Self.expectCleanStatus(screens, columns: columns)
    }

    @Test func aTerminalMadeNarrowerWhilePlayingKeepsOneCleanStatusLine() async throws {
        guard let screens = try await Self.screens(columns: 120, resizeTo: 60) else { return }
        Self.expectCleanStatus(screens, columns: 60)
    }

    // MARK: - Pictures a decoder releases late

    /// After a corrupt inter frame a B-frame decoder waits for the next keyframe and then releases the
    /// pictures it held from before the damage, long after their time: they are dropped and reported
    /// (`dropped_before`), never shown out of time.
    @Test func picturesReleasedLateAfterAnErrorAreDroppedAndReportedNotShownLate() throws {
        var bytes = try Fixtures.bytes(try Fixture.h264BFramesAAC.path())
        let inter = Self.tags(bytes).filter { $0.type == 9 && bytes[$0.body.lowerBound] >> 4 == 2 }
        let damaged = try #require(inter.dropFirst(10).first)
        for index in (damaged.body.lowerBound + 12)..<min(damaged.body.upperBound, damaged.body.lowerBound + 400) {
            bytes[index] = 0xA5
        }
        let path = try Fixtures.write(bytes, name: "corrupt-bframes")
        let output = try Binary.run([path, "--json", "--trace-frames", "-q"])
        #expect(output.status == 0, "\(output.standardError)")
        let frames = try OnDemandTests.frames(output.text)
        let lines = try EdgeTests.lines(output.text).filter { $0["kind"] as? String == "frame" }
        let lateness = lines.compactMap { line -> Int? in
            guard let position = line["position_ms"] as? Int, let pts = line["pts_ms"] as? Int else { return nil }
            return position - pts
        }
        #expect(lateness.allSatisfy { $0 <= 260 }, "no picture shown out of time: \(lateness.max() ?? 0) ms")
        #expect(frames.map(\.droppedBefore).reduce(0, +) >= 1, "the stale pictures are reported")
    }

    // MARK: - libavcodec's messages

    @Test func libavcodecMessagesGoThroughTheLoggerByLevelAndRateLimited() throws {
        let path = try Self.corruptStream()
        let warning = try Binary.run([path, "--json", "--log-level", "warning"])
        #expect(warning.status == 0, "\(warning.standardError)")
        let lines = warning.standardError.split(separator: "\n")
        #expect(!lines.isEmpty, "libavcodec complained about the corrupt slices")
        #expect(!warning.standardError.contains(" @ 0x"), "no raw libav prefix: \(warning.standardError)")
        #expect(lines.allSatisfy { $0.hasPrefix("liveplay: h264: ") }, "\(lines)")
        #expect(lines.count <= 12, "one line per kind of message, not one per macroblock: \(lines.count)")
        let debug = try Binary.run([path, "--json", "--log-level", "debug"])
        #expect(debug.standardError.split(separator: "\n").count > lines.count, "debug shows libav's debug lines")
        let quiet = try Binary.run([path, "--json", "-q"])
        let quietLines = quiet.standardError.split(separator: "\n")
        #expect(quietLines.count <= lines.count)
        // -q --json: the errors and the summary, nothing else (no status lines: -q is errors only).
        let quietLog = try EdgeTests.lines(quiet.text)
        #expect(!quietLog.contains { $0["kind"] as? String == "status" })
        #expect(quietLog.contains { $0["code"] as? Int == 9006 })
        #expect(quietLog.compactMap { $0["code"] as? Int }.allSatisfy { $0 < 0 || $0 == 9006 })
        let warningCodes = try EdgeTests.codes(warning.text)
        #expect(warningCodes.allSatisfy { $0 < 0 || (2101...2199).contains($0) || (3001...3099).contains($0) || $0 == 9006 || (9101...9199).contains($0) })
        #expect(warningCodes.contains(2101), "the corrupt pictures are reported as events too")
    }

    // MARK: - What the demuxer saw, in the live log

    @Test func aLyingPreviousTagSizeIsAWarningInTheLiveLog() throws {
        var bytes = try Fixtures.bytes(try Fixture.h264AAC.path())
        // Ten PreviousTagSize fields in the middle lie.
        for tag in Self.tags(bytes).dropFirst(20).prefix(10) {
            for index in tag.body.upperBound..<(tag.body.upperBound + 4) { bytes[index] = 0x7F }
        }
        let stream = bytes
        let server = try ScriptedHTTPServer { _, _ in
            .init(body: stream, pacing: (chunk: 8192, interval: .milliseconds(50)), contentLength: false)
        }
        let output = try Binary.run(["http://127.0.0.1:\(server.port)/live.flv", "--json", "--retries", "0"])
        let warnings = try EdgeTests.lines(output.text).filter { $0["code"] as? Int == 9101 }
        #expect(!warnings.isEmpty, "the live log says what inspect says")
        let first = try #require(warnings.first?["params"] as? [String: Any])
        #expect(first["reason"] as? String != nil && first["count"] as? Int == 1)
        #expect(warnings.count < 10, "rate-limited: \(warnings.count) lines for 10 lies")
        let counted = warnings.compactMap { ($0["params"] as? [String: Any])?["count"] as? Int }.max() ?? 0
        let suppressed = warnings.compactMap { ($0["params"] as? [String: Any])?["suppressed"] as? Int }.reduce(0, +)
        #expect(counted == warnings.count + suppressed, "the counts add up: \(counted) vs \(warnings.count)+\(suppressed)")
        let path = try Fixtures.write(stream, name: "lying-tag-sizes")
        let inspected = try Binary.run(["inspect", "file://" + path])
        #expect(inspected.status == 0 && inspected.standardError.contains("warning"), "inspect takes file:// URLs")
    }

    // MARK: - Media that arrived is shown

    @Test func whatArrivedIsPlayedOutBeforeTheConnectionErrorEndsTheRun() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let stream = try Fixtures.bytes(path)
        // Live (no Content-Length), at about the media's own pace, then the server closes.
        let server = try ScriptedHTTPServer { _, _ in
            .init(body: stream, pacing: (chunk: stream.count / 60, interval: .milliseconds(50)), contentLength: false)
        }
        let output = try Binary.run([
            "http://127.0.0.1:\(server.port)/live.flv", "--json", "--retries", "0", "--trace-frames", "--mode", "smooth",
        ])
        #expect(output.status == ExitStatus.unavailable)
        let lines = try EdgeTests.lines(output.text)
        let shown = lines.filter { $0["kind"] as? String == "frame" }.compactMap { $0["pts_ms"] as? Int }
        let pictures = try Oracle.packets(path).filter { $0.stream == "video" }.map { Int($0.pts) }.sorted()
        // Every picture is shown, or counted dropped: a turn of the loop held up on a loaded machine (CI's two shards
        // and a build beside them) finds two pictures due and shows the newer, as any player does; the pictures the
        // decoder held back that were never drained would be neither. The last one, which nothing can supersede,
        // is one of those and is always shown.
        let summary = try #require(lines.last { $0["code"] as? Int == 9006 }?["params"] as? [String: Any])
        let dropped = summary["dropped_frames"] as? Int ?? -1
        #expect(shown == shown.sorted() && Set(shown).isSubset(of: pictures), "\(shown)")
        #expect(shown.count + dropped == pictures.count, "\(shown.count) shown, \(dropped) dropped of \(pictures.count)")
        #expect(dropped <= 3, "late pictures on a loaded machine only")
        #expect(shown.last == pictures.last, "the B-frames the decoder held back included")
        let codes = lines.compactMap { $0["code"] as? Int }
        #expect(codes.filter { $0 < 0 } == [-2301])
        let lastFrame = try #require(lines.lastIndex { $0["kind"] as? String == "frame" })
        let error = try #require(lines.firstIndex { $0["code"] as? Int == -2301 })
        #expect(lastFrame < error, "played out first, then the error")
    }
}
