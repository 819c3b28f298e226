import Foundation
import LivePlayLab
import LivePlayTesting
import Testing

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
}
