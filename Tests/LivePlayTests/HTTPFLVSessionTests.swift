import Foundation
import LivePlay
import LivePlayTesting
import Testing

/// HTTP-FLV end to end through ``LiveSession``: real sockets on loopback, servers started here.
@Suite struct HTTPFLVSessionTests {
    static func configuration(retries: Int = 0, readTimeout: Duration = .seconds(2)) -> LivePlayConfiguration {
        var transport = TransportOptions(connectTimeout: .seconds(2), handshakeTimeout: .seconds(3), noDataTimeout: readTimeout)
        transport.headers = [
            HTTPHeaderField(name: "Referer", value: "https://example.test/page"),
            HTTPHeaderField(name: "Cookie", value: "session=abc"),
        ]
        return LivePlayConfiguration(
            connectRetryCount: retries, connectRetryInterval: .milliseconds(200), transport: transport)
    }

    static func fixtureBytes() throws -> [UInt8] {
        try Fixtures.bytes(try Fixture.h264AAC.path())
    }

    @Test func aFinishedFileEndsWithPlayEndAfterTheStagesInOrder() async throws {
        let body = try Self.fixtureBytes()
        let server = try ScriptedHTTPServer { path, _ in
            path.hasPrefix("/old.flv")
                ? .init(status: 302, reason: "Found", headers: [("Location", "/live.flv")])
                : .init(body: body)
        }
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(server.port)/old.flv?token=secret", configuration: Self.configuration())
        #expect(recording.outcome == .ended)
        let codes = recording.codes
        #expect(codes.first == 2001)
        #expect(codes.last == 2006)
        for (earlier, later) in [(2001, 2003), (2003, 2004), (2008, 2004), (2004, 2006)] {
            let a = try #require(codes.firstIndex(of: earlier))
            let b = try #require(codes.firstIndex(of: later))
            #expect(a < b, "\(earlier) must come before \(later): \(codes)")
        }
        #expect(recording.first(.changeResolution)?.parameters["EVT_PARAM1"] == .int(320))
        #expect(recording.first(.connectSucceeded)?.parameters["SERVER_IP"] == .string("127.0.0.1:\(server.port)"))
        // The redirect was followed, and the CDN headers went out on both requests.
        let requests = server.receivedRequests
        #expect(requests.map(\.path) == ["/old.flv?token=secret", "/live.flv"])
        #expect(requests.allSatisfy { $0.headers["referer"] == "https://example.test/page" && $0.headers["cookie"] == "session=abc" })
    }

    @Test func notFoundIsFileNotFoundAndStops() async throws {
        let server = try ScriptedHTTPServer { _, _ in .init(status: 404, reason: "Not Found") }
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(server.port)/missing.flv", configuration: Self.configuration(retries: 3))
        #expect(recording.codes == [-2303])
        #expect(recording.outcome == .failed(.fileNotFound))
        #expect(recording.events.first?.message.contains("404") == true)
    }

    @Test func forbiddenIsServerRefused() async throws {
        let server = try ScriptedHTTPServer { _, _ in .init(status: 403, reason: "Forbidden") }
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(server.port)/live.flv", configuration: Self.configuration(retries: 3))
        #expect(recording.codes == [-2308])
    }

    @Test func serverErrorsAreRetriedThenDisconnect() async throws {
        let server = try ScriptedHTTPServer { _, _ in .init(status: 500, reason: "Internal Server Error") }
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(server.port)/live.flv", configuration: Self.configuration(retries: 2))
        #expect(recording.codes == [3002, 2103, 3002, 2103, 3002, -2301])
        #expect(recording.events[0].parameters["http_status"] == .int(500))
        #expect(recording.events[1].parameters["EVT_PARAM1"] == .int(1))
        #expect(recording.events[3].parameters["EVT_PARAM1"] == .int(2))
        #expect(recording.outcome == .failed(.networkDisconnected))
        #expect(server.receivedRequests.count == 3)
    }

    @Test func aLiveBodyThatEndsIsADisconnectAndPlaybackResumesMonotonically() async throws {
        let body = try Self.fixtureBytes()
        let requests = RequestCounter()
        let server = try ScriptedHTTPServer { _, _ in
            // First a live body that the server cuts; then a finished file so the test ends.
            requests.next() == 1
                ? .init(body: Array(body.prefix(body.count / 2)), contentLength: false)
                : .init(body: body)
        }
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(server.port)/live.flv", configuration: Self.configuration(retries: 3))
        let codes = recording.codes
        let disconnect = try #require(codes.firstIndex(of: 3004))
        #expect(codes[disconnect + 1] == 2103)
        #expect(recording.events[disconnect + 1].parameters["reason"] == .string("server_closed"))
        #expect(codes.filter { $0 == 2001 }.count == 2)
        #expect(codes.contains(2107), "the second body restarts at 0: a discontinuity")
        #expect(codes.last == 2006)
        #expect(!codes.contains(-2301))
    }

    @Test(arguments: ["file:///etc/passwd", "http+unix://%2Ftmp%2Fliveplay.sock/live.flv", "ftp://127.0.0.1/x.flv"])
    func aRedirectOffHTTPIsNeverFollowed(_ location: String) async throws {
        let server = try ScriptedHTTPServer { _, _ in
            .init(status: 302, reason: "Found", headers: [("Location", location)])
        }
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(server.port)/live.flv", configuration: Self.configuration(retries: 0))
        #expect(recording.codes == [3002, -2301], "the 302 is a failed response, not a new source")
        #expect(recording.first(.serverConnectFailed)?.parameters["http_status"] == .int(302))
        #expect(recording.summary?.parameters["bytes"] == .int(0))
        #expect(server.receivedRequests.count == 1)
    }

    @Test func redirectsStopAfterFive() async throws {
        let server = try ScriptedHTTPServer { path, _ in
            let hop = Int(path.dropFirst().prefix { $0.isNumber }) ?? 0
            return .init(status: 302, reason: "Found", headers: [("Location", "/\(hop + 1).flv")])
        }
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(server.port)/0.flv", configuration: Self.configuration(retries: 0))
        #expect(recording.codes.last == -2301)
        #expect(server.receivedRequests.count <= 6, "the first request and at most 5 redirects")
    }

    @Test func aSilentServerIsDetectedWithinTheReadTimeout() async throws {
        let body = try Self.fixtureBytes()
        let server = try ScriptedHTTPServer { _, _ in
            // Headers and the first 4 KB, then silence with the connection open.
            .init(body: Array(body.prefix(8192)), pacing: (4096, .seconds(30)), contentLength: false)
        }
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(server.port)/live.flv",
            configuration: Self.configuration(retries: 0, readTimeout: .seconds(1)))
        let lags = recording.events.filter { $0.code == .receiveDataLag }
        // Half a second without media is beyond what auto's 1 s cache tolerates: a warning first, then
        // the read timeout declares the connection lost.
        #expect(lags.map { $0.parameters["reason"] } == [.string("arrival_gap"), .string("no_data")])
        let gap = try #require(lags.first)
        if case .int(let milliseconds) = gap.parameters["gap_ms"] { #expect(milliseconds >= 500 && milliseconds < 1000) }
        let lag = try #require(lags.last)
        let connected = try #require(recording.first(.connectSucceeded))
        // Detected after about one read timeout: generous bounds.
        #expect(lag.elapsedMilliseconds - connected.elapsedMilliseconds >= 500)
        #expect(lag.elapsedMilliseconds - connected.elapsedMilliseconds < 4000)
        #expect(recording.codes.last == -2301)
    }

    @Test func aTrickleBelowTheBitrateIsReportedAsLagThenLost() async throws {
        let body = try Self.fixtureBytes()
        // About 45 KB/s of media sent at 8 KB/s: under a fifth of real time.
        let server = try ScriptedHTTPServer { _, _ in
            .init(body: body, pacing: (800, .milliseconds(100)), contentLength: false)
        }
        var configuration = Self.configuration(retries: 0)
        configuration.lagWindow = .seconds(1)
        configuration.transport.minimumGoodput = 0.5
        configuration.transport.goodputWindow = .seconds(3)
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(server.port)/live.flv", configuration: configuration)
        let codes = recording.codes
        #expect(codes.contains(2104))
        let lost = try #require(recording.events.last { $0.code == .receiveDataLag })
        #expect(lost.parameters["reason"] == .string("too_slow"))
        #expect(codes.last == -2301)
    }

    @Test func aRefusedPortIsAServerConnectionFailure() async throws {
        let port = try LoopbackPort.free()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: Self.configuration(retries: 1))
        #expect(recording.codes == [3002, 2103, 3002, -2301])
    }

    @Test func ffmpegAsAnHTTPServerPlays() async throws {
        let port = try LoopbackPort.free()
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: try #require(ExternalTool.find("ffmpeg")))
        ffmpeg.arguments = [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-i", try Fixture.h264AAC.path(), "-c", "copy",
            "-f", "flv", "-listen", "1", "http://127.0.0.1:\(port)/live.flv",
        ]
        try ffmpeg.run()
        defer { kill(ffmpeg.processIdentifier, SIGKILL) }
        var configuration = Self.configuration(retries: 10)
        configuration.connectRetryInterval = .milliseconds(100)
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: configuration, limit: .seconds(15)
        ) { $0.code == .playBegin }
        let codes = recording.codes.filter { $0 != 3002 && $0 != 2103 }
        #expect(Array(codes.prefix(1)) == [2001])
        #expect(codes.contains(2003) && codes.contains(2004))
    }
}

/// Counts requests across server threads.
final class RequestCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func next() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }
}
