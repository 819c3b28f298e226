import Foundation
import LivePlay
import LivePlayFLV
import LivePlayLab
// Only the repair: the rest of the recording vocabulary (RecordingFormat) comes through LivePlay.
import enum LivePlayRecording.RecordingRepair
import LivePlayTesting
import Logging
import Testing

/// Recording while playing (docs/recording.md), checked with FFmpeg's own tools: the packets written are the
/// packets received, byte for byte; the timeline runs on across a reconnect; a change of resolution begins a
/// new file; and every way a recording can end leaves a file ffprobe reads.
@Suite(.serialized) struct RecordingTests {
    static func temporaryPath(_ name: String) -> String {
        let directory = NSTemporaryDirectory() + "liveplay-recording-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return "\(directory)/\(name)"
    }

    /// Each packet of one stream of a file, as FFmpeg reads it without decoding: size and MD5 of the payload.
    static func packets(_ path: String, _ stream: String) throws -> [String] {
        try ExternalTool.check(
            "ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-map", "0:\(stream)", "-c", "copy", "-f", "framemd5", "-"]
        ).text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
            let fields = $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return "\(fields[4]) \(fields[5])"
        }
    }

    /// Decode times (seconds) of one stream's packets, as ffprobe reads them.
    static func decodeTimes(_ path: String, _ stream: String) throws -> [Double] {
        try ExternalTool.check(
            "ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "packet=dts_time", "-of", "csv=p=0", path]
        ).text.split(separator: "\n").compactMap { Double($0) }
    }

    static func configuration(_ recording: RecordingOptions) -> LivePlayConfiguration {
        var configuration = LivePlayConfiguration(connectRetryCount: 5, connectRetryInterval: .milliseconds(300), decodes: false)
        configuration.recording = recording
        return configuration
    }

    @Test(arguments: [RecordingFormat.flv, .mp4])
    func aRecordingHoldsExactlyThePacketsReceived(format: RecordingFormat) async throws {
        // A file played to its end: every packet from the first keyframe on is received, so all are recorded.
        let source = try Fixture.h264BFramesAAC.path()
        let path = Self.temporaryPath("exact.\(format.rawValue)")
        let recording = await SessionRecording.record(
            source, configuration: Self.configuration(RecordingOptions(path: path)), limit: .seconds(20))
        #expect(recording.outcome == .ended)
        let codes = recording.codes.filter { (9013...9015).contains($0) || $0 == 9102 }
        #expect(codes.first == 9013 && codes.last == 9015 && !codes.contains(9102), "\(codes)")
        let complete = try #require(recording.first(.recordCompleted))
        #expect(complete.parameters["path"] == .string(path))
        #expect(complete.parameters["bytes"] == .int(Int64(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)))
        for stream in ["v", "a"] {
            let received = try Self.packets(source, stream), recorded = try Self.packets(path, stream)
            #expect(recorded.count > 20 && recorded == received, "\(format) \(stream): \(recorded.count) of \(received.count) packets")
        }
        // B-frames keep their composition times: decode order and presentation order both survive the muxer.
        let frames = try ExternalTool.check(
            "ffprobe", ["-v", "error", "-select_streams", "v", "-count_frames", "-show_entries", "stream=nb_read_frames",
                        "-of", "csv=p=0", path]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Int(frames) == (try Self.packets(source, "v")).count, "every picture decodes: \(frames)")
    }

    @Test func theTimelineRunsOnAcrossAReconnect() async throws {
        // The lab restarts on the same port: its stream starts again from timestamp 0, a second later.
        var quiet = Logger(label: "lab")
        quiet.logLevel = .critical
        let logger = quiet
        let fixture = try Fixture.longH264AAC.path()
        let first = try LiveFLVServer(path: fixture, configuration: .init(port: 0, threads: 1), logger: logger)
        let port = try await first.start()
        let second = Locked<LiveFLVServer?>(nil)
        let path = Self.temporaryPath("reconnect.mp4")
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: Self.configuration(RecordingOptions(path: path)),
            limit: .seconds(30),
            script: { probe in
                // Four seconds recorded (a progress report a second), then the server goes; it is back on the same
                // port once the player is reconnecting, and four more seconds are recorded.
                _ = await probe.wait(for: .recordProgress, count: 4, timeout: .seconds(15))
                await first.stop()
                _ = await probe.wait(for: .reconnect, timeout: .seconds(10))
                let server = try? LiveFLVServer(path: fixture, configuration: .init(port: port, threads: 1), logger: logger)
                _ = try? await server?.start()
                second.set(server)
                let reported = probe.events.filter { $0.code == .recordProgress }.count
                _ = await probe.wait(for: .recordProgress, count: reported + 4, timeout: .seconds(15))
                probe.stop()
            })
        await second.get()?.stop()
        #expect(recording.codes.contains(2103), "reconnected: \(recording.codes)")
        let completed = recording.events.filter { $0.code == .recordCompleted }
        #expect(completed.count == 1, "one file across the reconnect: \(recording.codes)")
        let times = try Self.decodeTimes(path, "v")
        let steps = zip(times, times.dropFirst()).map { $1 - $0 }
        print("reconnect: \(times.count) pictures over \(times.last ?? 0) s, largest step \(steps.max() ?? 0) s")
        #expect(times.first == 0, "the file starts at 0")
        #expect(steps.allSatisfy { $0 >= 0 }, "decode times never go back")
        // The outage (a second, plus the reconnect) is a gap, not a jump to the restarted server's timestamps.
        #expect((steps.max() ?? 99) < 4, "the largest gap is the outage: \(steps.max() ?? 0) s")
        #expect((times.last ?? 0) > 6 && (times.last ?? 0) < 14, "about the time played: \(times.last ?? 0) s")
    }

    @Test func aChangeOfResolutionBeginsTheNextFile() async throws {
        // 320×240 then 160×120, one stream (as a CDN's transcoder switch looks), played as a file.
        let high = try LiveFLVProgram(contentsOfFile: try Fixture.renditionHigh.path())
        let low = try LiveFLVProgram(contentsOfFile: try Fixture.renditionLow.path())
        var writer = FLVWriter()
        func append(_ program: LiveFLVProgram, from start: UInt32) {
            for header in program.videoSequenceHeaders + program.audioSequenceHeaders {
                writer.writeTag(type: header.getInteger(at: header.readerIndex, as: UInt8.self) == 0x17 ? 9 : 8,
                                timestamp: start, body: Array(buffer: header))
            }
            for tag in program.tags where tag.timestamp < 2000 {
                writer.writeTag(type: tag.type, timestamp: start + tag.timestamp, body: Array(buffer: tag.body))
            }
        }
        append(high, from: 0)
        append(low, from: 2000)
        let source = try Fixtures.write(writer.bytes, name: "resolution-change-\(UUID().uuidString.prefix(8)).flv")
        for format in RecordingFormat.allCases {
            let path = Self.temporaryPath("change.\(format.rawValue)")
            let recording = await SessionRecording.record(
                source, configuration: Self.configuration(RecordingOptions(path: path)), limit: .seconds(20))
            let files = recording.events.filter { $0.code == .recordCompleted }.compactMap { $0.parameters["path"]?.description }
            let next = RecordingOptions(path: path).path
            #expect(files.count == 2 && files.first == next, "\(format): \(files)")
            let sizes = try files.map { file in
                try ExternalTool.check(
                    "ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=width,height", "-of", "csv=p=0", file]
                ).text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            #expect(sizes == ["320,240", "160,120"], "\(format): \(sizes)")
            #expect(try files.last.map { try Self.decodeTimes($0, "v").first } == 0, "the next file starts at 0")
        }
    }

    @Test func startAndStopWhilePlaying() async throws {
        var logger = Logger(label: "lab")
        logger.logLevel = .critical
        let server = try LiveFLVServer(path: try Fixture.longH264AAC.path(), configuration: .init(port: 0, threads: 1), logger: logger)
        let port = try await server.start()
        let path = Self.temporaryPath("window.flv")
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: LivePlayConfiguration(decodes: false), limit: .seconds(20),
            script: { probe in
                _ = await probe.wait(for: .playBegin, timeout: .seconds(10))
                probe.control.send(.startRecording(RecordingOptions(path: path, progressInterval: .milliseconds(500))))
                // Three seconds recorded (a progress report every 0.5 s), then stopped while playing.
                _ = await probe.wait(for: .recordProgress, count: 6, timeout: .seconds(15))
                probe.control.send(.stopRecording)
                _ = await probe.wait(for: .recordCompleted, timeout: .seconds(5))
                let completed = probe.events.last { $0.code == .recordCompleted }?.elapsedMilliseconds ?? 0
                _ = await eventually { (probe.statuses.last?.elapsedMilliseconds ?? 0) > completed }
                probe.stop()
            })
        await server.stop()
        // The file begins at the first keyframe after the request (this stream's GOP is 2 s), then reports
        // progress every 0.5 s until it is stopped.
        let progress = recording.events.filter { $0.code == .recordProgress }
        let began = try #require(recording.first(.recordBegan))
        let complete = try #require(recording.first(.recordCompleted))
        let open = Double(complete.elapsedMilliseconds - began.elapsedMilliseconds) / 500
        #expect(progress.count >= 2 && abs(Double(progress.count) - open) <= 2, "every 0.5 s for \(open / 2) s: \(progress.count)")
        guard case .int(let milliseconds) = complete.parameters["duration_ms"] else { Issue.record("no duration"); return }
        #expect(milliseconds > 0 && abs(Double(milliseconds) - open * 500) < 700, "the time it was open: \(milliseconds) ms")
        let times = try Self.decodeTimes(path, "v")
        #expect(abs((times.last ?? 0) - Double(milliseconds) / 1000) < 0.1, "the file is what was reported")
        #expect(recording.events.last { $0.code == .recordCompleted }?.elapsedMilliseconds ?? 0
            < (recording.statuses.last?.elapsedMilliseconds ?? 0), "playback went on after the recording stopped")
    }

    @Test func aCutFragmentedMP4IsCutBackToItsLastWholeFragment() async throws {
        let source = try Fixture.longH264AAC.path()
        let path = Self.temporaryPath("whole.mp4")
        _ = await SessionRecording.record(
            source, configuration: Self.configuration(RecordingOptions(path: path)), limit: .seconds(20))
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        let all = try Self.packets(path, "v").count
        // Cut a few hundred bytes into the last moof: FFmpeg 5.1 then rejects the whole file.
        let moof = try #require(whole.range(of: Data("moof".utf8), options: .backwards)).lowerBound - 4
        let cut = Self.temporaryPath("cut.mp4")
        try whole.prefix(moof + 200).write(to: URL(fileURLWithPath: cut))
        #expect(throws: ExternalTool.Failure.self) { try Self.packets(cut, "v") }
        let length = try #require(RecordingRepair.truncateToLastCompleteUnit(path: cut, format: .mp4))
        #expect(length == Int64(moof), "cut back to the end of the fragment before")
        let kept = try Self.packets(cut, "v").count
        #expect(kept > 0 && kept < all, "the whole fragments play: \(kept) of \(all) pictures")
        // An FLV cut inside a tag keeps every whole tag.
        let flv = Self.temporaryPath("cut.flv")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        try bytes.prefix(bytes.count * 2 / 3 + 5).write(to: URL(fileURLWithPath: flv))
        let flvLength = try #require(RecordingRepair.truncateToLastCompleteUnit(path: flv, format: .flv))
        #expect(flvLength < Int64(bytes.count * 2 / 3 + 5) && flvLength > Int64(bytes.count / 2))
        #expect(try Self.packets(flv, "v").count > 0)
    }

    /// A real full disk: a tmpfs of 320 KiB the test mounts (not an injected error). Below the free-space limit,
    /// or at `ENOSPC` with no limit, the recording stops with its cause, the file is closed and readable, and
    /// playback goes on without a stutter.
    @Test(arguments: [(Int64(0), "disk_full"), (Int64(160 << 10), "not_enough_disk_space")])
    func aFullDiskStopsTheRecordingNotThePlayback(minimumFree: Int64, cause: String) async throws {
        guard let disk = try SmallFileSystem.make(bytes: 320 << 10) else { return }
        defer { disk.unmount() }
        var logger = Logger(label: "lab")
        logger.logLevel = .critical
        let server = try LiveFLVServer(
            path: try Fixture.renditionHigh.path(), configuration: .init(port: 0, threads: 1), logger: logger)
        let port = try await server.start()
        let path = disk.directory + "/full.mp4"
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv",
            configuration: Self.configuration(RecordingOptions(path: path, minimumFreeSpace: minimumFree)),
            limit: .seconds(30),
            script: { probe in
                _ = await probe.wait(for: .recordFailed, timeout: .seconds(20))
                // Playback goes on after the failure: three statuses from it on.
                let failedAt = probe.events.first { $0.code == .recordFailed }?.elapsedMilliseconds ?? 0
                _ = await eventually { probe.statuses.filter { $0.elapsedMilliseconds >= failedAt }.count >= 3 }
                probe.stop()
            })
        await server.stop()
        let failure = try #require(recording.first(.recordFailed), "\(recording.codes)")
        #expect(failure.parameters["cause"] == .string(cause), "\(failure.message)")
        if cause == "disk_full" { #expect(failure.parameters["errno"] == .int(Int64(ENOSPC))) }
        let complete = try #require(recording.events.last { $0.code == .recordCompleted }, "\(recording.codes)")
        #expect(complete.parameters["path"] == .string(path))
        let pictures = try Self.packets(path, "v").count
        print("\(cause): \(pictures) pictures kept in \(complete.parameters["bytes"].map { "\($0)" } ?? "?") bytes")
        #expect(pictures >= 30, "what was written before the disk filled stays readable: \(pictures) pictures")
        // Playback went on: every status from the failure to the end plays, and no stall began.
        let after = recording.statuses.filter { $0.elapsedMilliseconds >= failure.elapsedMilliseconds }
        #expect(after.count >= 2, "statuses after the failure: \(after.count)")
        #expect(after.allSatisfy { $0.state == "playing" }, "\(after.map(\.state))")
        #expect(Set(after.map(\.stutters)).count == 1, "no stutter during the error: \(after.map(\.stutters))")
        #expect(recording.outcome == .stopped)
    }

    /// HEVC: MP4 carries it; libavformat 5.1's FLV muxer does not, and says so as `unsupported`, while playback
    /// goes on to the end.
    @Test func hevcRecordsToMP4AndIsUnsupportedInFLV() async throws {
        let fixture = try HEVCFixture.make(.enhancedRTMP)
        for format in RecordingFormat.allCases {
            let path = Self.temporaryPath("hevc.\(format.rawValue)")
            let recording = await SessionRecording.record(
                fixture.path, configuration: Self.configuration(RecordingOptions(path: path)), limit: .seconds(20))
            #expect(recording.outcome == .ended, "\(format): playback went on to the end")
            switch format {
            case .mp4:
                #expect(recording.first(.recordFailed) == nil, "\(recording.codes)")
                // FFmpeg 5.1 cannot read Enhanced RTMP FLV: the MP4 the fixture was made from is the reference.
                let sent = try Self.packets(fixture.sourcePath, "v")
                #expect(try Self.packets(path, "v") == sent, "every HEVC packet, unchanged")
            case .flv:
                let failure = try #require(recording.first(.recordFailed), "\(recording.codes)")
                #expect(failure.parameters["cause"] == .string("unsupported"), "\(failure.message)")
            }
        }
    }
}
