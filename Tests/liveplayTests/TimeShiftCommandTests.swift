import Foundation
import LivePlay
import LivePlayDemo
import LivePlayTesting
import Testing

@testable import liveplay

/// `--timeshift` from the command line, over HTTP-FLV and RTMP: live playback goes through the ring, progress
/// carries the window, and the ring's directory is gone when the run ends.
@Suite struct TimeShiftCommandTests {
    static func expectPlayedThroughTheRing(_ url: String, _ label: String) throws {
        let directory = NSTemporaryDirectory() + "liveplay-timeshift-cli-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = try Binary.run([url, "--timeshift", "20s", "-t", "5", "--json", "--media-cache-dir", directory])
        #expect(output.status == 0, "\(label): \(output.standardError)")
        let progress = try EdgeTests.lines(output.text).filter { $0["code"] as? Int == 2005 }
            .compactMap { $0["params"] as? [String: Any] }
        #expect(progress.count >= 2, "\(label): \(progress)")
        let windows = progress.compactMap { $0["EVT_PLAY_DURATION"] as? Double }
        #expect(windows.count == progress.count && windows.last! > 1, "\(label): the window grows: \(windows)")
        let behind = progress.compactMap { $0["behind_live_ms"] as? Int }
        #expect(behind.count == progress.count && behind.allSatisfy { $0 < 3_000 }, "\(label): at the live edge: \(behind)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("liveplay-timeshift") }
        #expect(left.isEmpty, "\(label): the ring is removed at exit: \(left)")
    }

    @Test func overHTTPFLVAndRTMPTheStreamPlaysThroughTheRingWhichIsRemovedAtExit() async throws {
        let server = try LiveFLVServer(path: try Fixture.h264AAC.path(), configuration: .init(port: 0, threads: 1))
        let port = try await server.start()
        try Self.expectPlayedThroughTheRing("http://127.0.0.1:\(port)/live.flv", "HTTP-FLV")
        await server.stop()
        if let reason = NginxRTMPServer.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("\(reason)") }
            return
        }
        let nginx = try NginxRTMPServer()
        let publisher = try FFmpegPublisher(file: try Fixture.longH264AAC.path(), url: nginx.url(stream: "shift"))
        defer {
            publisher.stop()
            nginx.stop()
        }
        try Self.expectPlayedThroughTheRing(nginx.url(stream: "shift"), "RTMP")
    }

    @Test func aWindowOutOfRangeOrWithoutAUnitItKnowsIsAUsageError() throws {
        for value in ["5s", "25h", "1x", "", "-30m", "nan"] {
            let output = try Binary.run(["http://127.0.0.1:1/live.flv", "--timeshift", value])
            #expect(output.status == ExitStatus.usage, "\(value): \(output.standardError)")
        }
    }
}
