import Foundation
import LivePlayLab
import LivePlayTesting
import Testing

@testable import liveplay

/// `liveplay URL --record FILE`: what a person who kills the player finds on disk.
@Suite(.serialized) struct RecordCommandTests {
    /// Each video packet of a file as FFmpeg reads it without decoding: size and MD5 of the payload.
    static func videoPackets(_ path: String) throws -> [String] {
        try ExternalTool.check(
            "ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-map", "0:v", "-c", "copy", "-f", "framemd5", "-"]
        ).text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
            let fields = $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return "\(fields[4]) \(fields[5])"
        }
    }

    /// libavformat is loaded when a recording starts (CLazyLibraries): one that cannot be loaded stops the recording
    /// with a warning naming it and the package to install; playback goes on, and the exit status says so.
    @Test func aRecordingWithoutLibavformatSaysWhatToInstallAndPlaybackGoesOn() throws {
        let listing = try ExternalTool.check(ExternalTool.find("ldconfig") ?? "/sbin/ldconfig", ["-p"]).text
        let soname = try #require(
            listing.split(separator: "\n").lazy.compactMap { $0.split(whereSeparator: \.isWhitespace).first }
                .first { $0.hasPrefix("libavformat.so.") }.map(String.init), "libavformat is installed")
        // An empty file by that name first on the loader's path: dlopen fails on it ("file too short").
        let directory = NSTemporaryDirectory() + "liveplay-no-avformat-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(FileManager.default.createFile(atPath: "\(directory)/\(soname)", contents: Data()))
        let inherited = ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"].map { ":\($0)" } ?? ""
        let output = try ExternalTool.run(
            "env", ["LD_LIBRARY_PATH=\(directory)\(inherited)", Binary.path, try Fixture.renditionHigh.path(), "--record",
                    "\(directory)/out.mp4", "--json"])
        #expect(output.status == ExitStatus.ioError, "\(output.standardError)")
        let warning = try #require(
            output.text.split(separator: "\n").first { $0.contains("\"code\":9102") }, "\(output.text)")
        #expect(warning.contains("missing_library"), "\(warning)")
        #expect(output.standardError.contains(soname), "names the library: \(output.standardError)")
        #expect(output.standardError.contains("apt-get install libavformat"), "\(output.standardError)")
        #expect(try EdgeTests.codes(output.text).contains(2006), "playback went on to the end")
    }

    @Test func aRecordingKilledWithSIGKILLPlaysUpToItsLastFragment() async throws {
        let source = try Fixture.renditionHigh.path()
        let server = try LiveFLVServer(path: source, configuration: .init(port: 0, threads: 1))
        let port = try await server.start()
        let directory = NSTemporaryDirectory() + "liveplay-killed-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/killed.mp4"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = ["http://127.0.0.1:\(port)/live.flv", "--record", path, "--no-decode", "--json"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Killed a few fragments (GOPs of 1 s) in, wherever the writer happens to be.
        let size = { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
        let grew = LoopbackPort.wait(timeout: .seconds(20)) { size() > 300_000 || !process.isRunning }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        await server.stop()
        #expect(grew && process.terminationReason == .uncaughtSignal, "killed while recording")
        let recorded = try Self.videoPackets(path)
        let sent = Set(try Self.videoPackets(source))
        print("killed at \(size()) bytes: \(recorded.count) pictures readable")
        #expect(recorded.count >= 60, "the whole fragments before the kill play: \(recorded.count) pictures")
        #expect(recorded.allSatisfy(sent.contains), "every packet is one the server sent, unchanged")
        let frames = try ExternalTool.check(
            "ffprobe", ["-v", "error", "-select_streams", "v", "-count_frames", "-show_entries", "stream=nb_read_frames",
                        "-of", "csv=p=0", path]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect((Int(frames) ?? 0) >= 60, "and they decode: \(frames)")
    }

    /// A file recorded while it plays for 3 s holds those 3 s, not the 10 s read ahead of them (it held 13 s of a
    /// 60 s file); played to its end, it holds the whole file. No libavformat note reaches stderr (issue 45, point 7).
    @Test func aRecordingOfAFileHoldsWhatWasPlayed() throws {
        let directory = NSTemporaryDirectory() + "liveplay-played-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = try Fixture.longH264AAC.path()
        let duration = { (path: String) throws -> Double in
            let text = try ExternalTool.check(
                "ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path]).text
            return Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        let short = try Binary.run([source, "-t", "3", "--record", directory + "/three.mp4", "--json"])
        #expect(short.status == 0, "\(short.standardError)")
        let three = try duration(directory + "/three.mp4")
        #expect(three > 1.5 && three < 4.2, "3 s played, \(three) s recorded")
        #expect(short.standardError.isEmpty, "\(short.standardError)")
        let whole = try Binary.run([source, "--record", directory + "/whole.flv", "--json"])
        #expect(whole.status == 0, "\(whole.standardError)")
        #expect(abs(try duration(directory + "/whole.flv") - (try duration(source))) < 0.5)
    }
}
