import Foundation
import LivePlay
import LivePlayTesting
import Testing

/// RTMP end to end through ``LiveSession`` against Debian's nginx with its RTMP module, ffmpeg publishing.
@Suite(.serialized) struct RTMPSessionTests {
    /// nginx-rtmp and a publisher, or `nil` with the reason recorded (a failure under CI).
    static func start() throws -> (NginxRTMPServer, FFmpegPublisher, String)? {
        if let reason = NginxRTMPServer.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("nginx-rtmp is required under CI: \(reason)")
            }
            return nil
        }
        let server = try NginxRTMPServer()
        let url = "rtmp://127.0.0.1:\(server.port)/live/test-\(UUID().uuidString.prefix(8))"
        let publisher = try FFmpegPublisher(file: try Fixture.h264AAC.path(), url: url)
        return (server, publisher, url)
    }

    static let configuration = LivePlayConfiguration(
        connectRetryCount: 10, connectRetryInterval: .milliseconds(200),
        transport: TransportOptions(connectTimeout: .seconds(2), handshakeTimeout: .seconds(5), noDataTimeout: .seconds(3)))

    @Test func eventsArriveInTheDocumentedOrderAndFramesDecode() async throws {
        guard let (server, publisher, url) = try Self.start() else { return }
        defer {
            publisher.stop()
            server.stop()
        }
        // Retries cover the moment before ffmpeg has published.
        let recording = await SessionRecording.record(url, configuration: Self.configuration, limit: .seconds(20)) {
            $0.code == .playBegin
        }
        let codes = recording.codes.filter { ![2103, 3002, 3003, 3004, 2104].contains($0) }
        let order = [2001, 2002, 2003, 2004].compactMap { codes.firstIndex(of: $0) }
        #expect(order.count == 4, "\(recording.codes)")
        #expect(order == order.sorted(), "documented order 2001, 2002, 2003, 2004: \(recording.codes)")
        #expect(recording.first(.changeResolution)?.parameters["EVT_PARAM1"] == .int(320))
        let connected = try #require(recording.events.last { $0.code == .connectSucceeded })
        let keyframe = try #require(recording.first(.receivedFirstKeyframe))
        // nginx has no GOP cache: the first keyframe comes within one GOP (1 s) plus margin.
        #expect(keyframe.elapsedMilliseconds - connected.elapsedMilliseconds < 10_000)
        print("RTMP timing: startPlay→2001 \(connected.elapsedMilliseconds) ms, →2003 \(keyframe.elapsedMilliseconds) ms")
    }

    @Test(arguments: LatencyMode.allCases)
    func everyModePlaysPacedFromNginx(mode: LatencyMode) async throws {
        guard let (server, publisher, url) = try Self.start() else { return }
        defer {
            publisher.stop()
            server.stop()
        }
        var configuration = Self.configuration
        configuration.latency = .preset(mode)
        configuration.latency.cacheTime = min(configuration.latency.cacheTime, .seconds(2))
        let sink = RecordingSink()
        let recording = await SessionRecording.record(
            url, configuration: configuration, limit: .seconds(30), sink: sink,
            script: { probe in
                await probe.wait(for: .playBegin, timeout: .seconds(20))
                // About 3 s of playing at 25 fps.
                _ = await eventually { sink.pictures.count >= 75 }
                probe.stop()
            })
        let begin = try #require(recording.first(.playBegin), "\(mode): \(recording.codes)")
        #expect(begin.parameters["startup_handshake_ms"] != nil && begin.parameters["startup_resolved_ms"] != nil)
        let figures = PacingSessionTests.figures(sink)
        // 25 fps for about 3 s after the begin.
        #expect(figures.pictures >= 50, "\(mode): \(figures)")
        #expect(figures.lateP95 <= 40, "\(mode): \(figures)")
        #expect(figures.avOffsetP95 <= 40, "\(mode): \(figures)")
    }

    @Test func thePublisherStoppingIsPlayEnd() async throws {
        guard let (server, publisher, url) = try Self.start() else { return }
        defer { server.stop() }
        let recording = await SessionRecording.record(
            url, configuration: Self.configuration, limit: .seconds(20),
            script: { probe in
                await probe.wait(for: .playBegin, timeout: .seconds(15))
                publisher.stop()
            })
        #expect(recording.codes.contains(2004))
        #expect(recording.codes.last == 2006, "\(recording.codes)")
        #expect(recording.outcome == .ended)
    }

    @Test func nginxKilledMidStreamIsADisconnectNotAnEnd() async throws {
        guard let (server, publisher, url) = try Self.start() else { return }
        defer { publisher.stop() }
        var configuration = Self.configuration
        configuration.connectRetryCount = 2
        let recording = await SessionRecording.record(
            url, configuration: configuration, limit: .seconds(20),
            script: { probe in
                await probe.wait(for: .playBegin, timeout: .seconds(15))
                server.kill()
            })
        let codes = recording.codes
        let afterBegin = Array(codes.drop { $0 != 2004 })
        #expect(afterBegin.contains(3004), "\(codes)")
        #expect(!afterBegin.contains(2006))
        #expect(codes.last == -2301)
    }
}

/// RTMP faults as the player reports them: each attempt's warning, the retries, then the final error.
@Suite struct RTMPFaultSessionTests {
    static func configuration(retries: Int = 1) -> LivePlayConfiguration {
        LivePlayConfiguration(
            connectRetryCount: retries, connectRetryInterval: .milliseconds(100),
            transport: TransportOptions(
                connectTimeout: .seconds(1), handshakeTimeout: .seconds(2), noDataTimeout: .seconds(2)))
    }

    @Test func garbageInsteadOfTheHandshakeIsAHandshakeFailure() async throws {
        let server = try MisbehavingServer(.garbage(Array(repeating: 0x5A, count: 4096)))
        defer { server.stop() }
        let recording = await SessionRecording.record(
            "rtmp://127.0.0.1:\(server.port)/live/x", configuration: Self.configuration())
        // TCP connects (2001), then the handshake fails (3003), on each attempt.
        #expect(recording.codes == [2001, 3003, 2103, 2001, 3003, -2301])
        #expect(recording.events[2].parameters["EVT_PARAM1"] == .int(1))
    }

    @Test func aTrickledHandshakeFailsAtTheHandshakeDeadline() async throws {
        let server = try MisbehavingServer(.trickle(interval: .seconds(2)))
        defer { server.stop() }
        let recording = await SessionRecording.record(
            "rtmp://127.0.0.1:\(server.port)/live/x", configuration: Self.configuration(retries: 0))
        #expect(recording.codes == [2001, 3003, -2301])
        let failure = try #require(recording.first(.handshakeFailed))
        #expect(failure.elapsedMilliseconds >= 1500 && failure.elapsedMilliseconds < 5000)
    }

    @Test func anAMFBombIsACleanErrorNotACrash() async throws {
        let server = try MisbehavingServer(.handshakeThen(RTMPChunkWriter.amfBomb(depth: 100_000)))
        defer { server.stop() }
        let recording = await SessionRecording.record(
            "rtmp://127.0.0.1:\(server.port)/live/x", configuration: Self.configuration(retries: 0))
        #expect(recording.codes == [2001, 3003, -2301])
        let failure = try #require(recording.first(.handshakeFailed))
        #expect(failure.parameters["reason"] == .string("protocol_violation"))
        // 100,000 nested objects exceed the command size cap before any AMF is decoded.
        #expect(failure.message.contains("limit"), "\(failure.message)")
    }

    @Test func aDeepCommandUnderTheSizeCapStopsAtTheAMFDepthLimit() async throws {
        let server = try MisbehavingServer(.handshakeThen(RTMPChunkWriter.amfBomb(depth: 2_000)))
        defer { server.stop() }
        let recording = await SessionRecording.record(
            "rtmp://127.0.0.1:\(server.port)/live/x", configuration: Self.configuration(retries: 0))
        #expect(recording.codes == [2001, 3003, -2301])
        #expect(recording.first(.handshakeFailed)?.parameters["reason"] == .string("protocol_violation"))
    }

    @Test func aRefusedPortIsAServerConnectionFailure() async throws {
        let port = try LoopbackPort.free()
        let recording = await SessionRecording.record(
            "rtmp://127.0.0.1:\(port)/live/x", configuration: Self.configuration())
        #expect(recording.codes == [3002, 2103, 3002, -2301])
    }
}
