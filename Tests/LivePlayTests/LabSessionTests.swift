import Foundation
import LivePlay
import LivePlayLab
import LivePlayTesting
import Logging
import Testing

/// HTTP-FLV through the stream lab: a live server with a GOP cache, and faults made by stopping it or by
/// the impairment proxy.
@Suite struct LabSessionTests {
    static func quiet() -> Logger {
        var logger = Logger(label: "lab")
        logger.logLevel = .critical
        return logger
    }

    static func server(port: Int = 0) async throws -> (LiveFLVServer, Int) {
        let server = try LiveFLVServer(
            path: try Fixture.h264AAC.path(), configuration: .init(port: port, threads: 1), logger: quiet())
        return (server, try await server.start())
    }

    static func configuration(retries: Int) -> LivePlayConfiguration {
        LivePlayConfiguration(
            connectRetryCount: retries, connectRetryInterval: .milliseconds(300),
            transport: TransportOptions(connectTimeout: .seconds(2), handshakeTimeout: .seconds(2), noDataTimeout: .seconds(1)))
    }

    @Test func aGOPCachedServerGivesAKeyframeAtOnce() async throws {
        let (server, port) = try await Self.server()
        defer { Task { await server.stop() } }
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: Self.configuration(retries: 0)
        ) { $0.code == .playBegin }
        let connected = try #require(recording.first(.connectSucceeded))
        let keyframe = try #require(recording.first(.receivedFirstKeyframe))
        #expect(Array(recording.codes.prefix(1)) == [2001])
        // The cache starts at a keyframe: it is the first video packet, well under a GOP (1 s) later.
        #expect(keyframe.elapsedMilliseconds - connected.elapsedMilliseconds < 1500)
        #expect(recording.codes.last == 2004)
        print("HTTP-FLV lab timing: startPlay→2001 \(connected.elapsedMilliseconds) ms, →2003 \(keyframe.elapsedMilliseconds) ms")
    }

    @Test func aServerThatComesBackWithinTheRetryWindowResumesPlayback() async throws {
        let (first, port) = try await Self.server()
        let replacement = Locked<LiveFLVServer?>(nil)
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: Self.configuration(retries: 3),
            stopWhen: { $0.code == .playBegin && ($0.parameters["connection"] ?? .int(0)) != .int(1) },
            script: { probe in
                await probe.wait(for: .playBegin)
                await first.stop()
                await probe.wait(for: .reconnect)
                // Back on the same port before the retries run out.
                if let (server, _) = try? await Self.server(port: port) { replacement.set(server) }
            })
        if let server = replacement.get() { await server.stop() }
        let codes = recording.codes
        #expect(codes.contains(2103))
        #expect(!codes.contains(-2301))
        #expect(codes.filter { $0 == 2004 }.count == 2, "\(codes)")
        let lost = try #require(codes.firstIndex(of: 2103))
        #expect([3004, 3005].contains(codes[lost - 1]), "the loss says why: \(codes)")
    }

    @Test func aServerThatNeverComesBackEndsInDisconnect() async throws {
        let (server, port) = try await Self.server()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: Self.configuration(retries: 3),
            script: { probe in
                await probe.wait(for: .playBegin)
                await server.stop()
            })
        let codes = recording.codes
        #expect(codes.filter { $0 == 2103 }.count == 3, "\(codes)")
        #expect(codes.last == -2301)
        #expect(recording.outcome == .failed(.networkDisconnected))
        let attempts = recording.events.filter { $0.code == .reconnect }.map { $0.parameters["EVT_PARAM1"] }
        #expect(attempts == [.int(1), .int(2), .int(3)])
    }

    @Test func aStallLongerThanTheReadTimeoutIsALostConnectionAndPlaybackResumes() async throws {
        let (server, port) = try await Self.server()
        let proxy = ImpairmentProxy(
            upstreamPort: port, timeline: try ImpairmentTimeline.parse("at=1s stall=3s"), logger: Self.quiet())
        let proxyPort = try await proxy.start()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(proxyPort)/live.flv", configuration: Self.configuration(retries: 3),
            stopWhen: { $0.code == .playBegin && ($0.parameters["connection"] ?? .int(0)) != .int(1) })
        await proxy.stop()
        await server.stop()
        let codes = recording.codes
        let lag = try #require(recording.events.first { $0.code == .receiveDataLag && $0.parameters["reason"] == .string("no_data") })
        let begin = try #require(recording.first(.playBegin))
        // Stalled at about 1 s, detected about 1 s later: generous bounds.
        #expect(lag.elapsedMilliseconds - begin.elapsedMilliseconds < 5000)
        #expect(codes.contains(2103) && !codes.contains(-2301))
        #expect(codes.filter { $0 == 2004 }.count == 2)
    }
}

/// A lock-protected value for test scripts.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}
