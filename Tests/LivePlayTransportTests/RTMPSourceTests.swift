import Foundation
import LivePlayFLV
import LivePlayTesting
import LivePlayWire
import Testing

@testable import LivePlayTransport

/// RTMPSource against real nginx-rtmp fed by ffmpeg, and against loopback servers that misbehave.
///
/// Every wait is for an event, bounded generously; the bounds that matter (deadline + margin) are
/// asserted on the measured time.
@Suite("RTMPSource", .serialized)
struct RTMPSourceTests {
    // MARK: - nginx-rtmp

    @Test("nginx-rtmp: connected, streamBegin, then FLV tags that demux to a configured keyframe")
    func playsFromNginx() async throws {
        guard let nginx = try RTMPTest.nginx() else { return }
        let publisher = try FFmpegPublisher(file: Fixture.h264AAC.path(), url: nginx.url(stream: "play"))
        try RTMPTest.waitUntilPublishing(nginx, publisher)
        let connection = RTMPTest.connection(nginx.url(stream: "play"), options: RTMPTest.options())
        let start = ContinuousClock.now
        let report = try await withDeadline(.seconds(15)) {
            var kinds: [String] = []
            var connectedAfter: Duration?
            var keyframeAfter: Duration?
            var firstTypes: [UInt8] = []
            var demuxer = FLVDemuxer()
            var hasVideoConfiguration = false
            while keyframeAfter == nil, let event = try await connection.next() {
                switch event {
                case .connected(let address):
                    kinds.append("connected \(address)")
                    connectedAfter = .now - start
                case .streamBegin:
                    kinds.append("streamBegin")
                case .resolved:
                    kinds.append("resolved")
                case .handshakeDone:
                    kinds.append("handshakeDone")
                case .onDemand:
                    kinds.append("onDemand")
                case .remoteFile:
                    kinds.append("remoteFile")
                case .serverStatus:
                    break
                case .moveRequested:
                    kinds.append("moveRequested")
                case .enhancedConnectRefused:
                    kinds.append("enhancedConnectRefused")
                case .bytes(let bytes):
                    if kinds.last != "bytes" { kinds.append("bytes") }
                    demuxer.append(bytes)
                case .tags(let tags):
                    if kinds.last != "tags" { kinds.append("tags") }
                    if firstTypes.isEmpty { firstTypes = tags.map(\.type) }
                    for tag in tags { demuxer.append(tag: tag) }
                }
                while let element = try demuxer.nextElement() {
                    if case .videoConfiguration = element { hasVideoConfiguration = true }
                    if case .packet(let packet) = element, packet.kind == .video, packet.isKeyframe,
                        hasVideoConfiguration
                    {
                        keyframeAfter = .now - start
                    }
                }
            }
            let threads = ThreadNames.inProcess()
            await connection.close()
            return (kinds, connectedAfter, keyframeAfter, firstTypes, threads)
        }
        // librtmp's reader carries its name to the OS (top -H, crash dumps). The watchdog's name is not
        // checked: a fresh-clone CI run did not list it at this point once, which is not yet understood.
        #expect(report.4.contains("liveplay-rtmp"))
        // Media arrives as tags, never as FLV bytes to parse again.
        #expect(report.0 == ["resolved", "connected 127.0.0.1:\(nginx.port)", "handshakeDone", "streamBegin", "tags"])
        #expect(report.3.allSatisfy { [8, 9, 18].contains($0) } && !report.3.isEmpty, "\(report.3)")
        let connected = try #require(report.1)
        let keyframe = try #require(report.2)
        print(
            "RTMP nginx: connected after \(connected.milliseconds) ms, "
                + "first keyframe after \(keyframe.milliseconds) ms")
        // One GOP (1 s) after ffmpeg has started publishing; generous for a loaded machine.
        #expect(keyframe < .seconds(15))
        publisher.stop()
    }

    @Test("nginx-rtmp: the publisher stopping ends the stream by design (next() returns nil)")
    func publisherStopEndsTheStream() async throws {
        guard let nginx = try RTMPTest.nginx() else { return }
        let publisher = try FFmpegPublisher(file: Fixture.h264AAC.path(), url: nginx.url(stream: "stop"))
        try RTMPTest.waitUntilPublishing(nginx, publisher)
        let connection = RTMPTest.connection(nginx.url(stream: "stop"), options: RTMPTest.options())
        try await waitForMedia(connection)
        publisher.kill()
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        let statuses = outcome.events.compactMap { event -> String? in
            if case .serverStatus(let code) = event { return code }
            return nil
        }
        print("RTMP nginx: what the server said after the publisher died: \(statuses)")
        #expect(outcome.error == nil, "ended with \(String(describing: outcome.error))")
        // nginx-rtmp's default (publish_notify off): StreamEOF alone, no UnpublishNotify.
        #expect(statuses.last == "StreamEOF")
    }

    @Test("nginx-rtmp: the server killed mid-stream is serverClosed, not an end by design")
    func serverKilledIsServerClosed() async throws {
        guard let nginx = try RTMPTest.nginx() else { return }
        let publisher = try FFmpegPublisher(file: Fixture.h264AAC.path(), url: nginx.url(stream: "kill"))
        try RTMPTest.waitUntilPublishing(nginx, publisher)
        let connection = RTMPTest.connection(nginx.url(stream: "kill"), options: RTMPTest.options())
        try await waitForMedia(connection)
        nginx.kill()
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .serverClosed, "ended with \(String(describing: outcome.error))")
        publisher.kill()
    }

    @Test("nginx-rtmp: a silent publisher (SIGSTOP) is noData within noDataTimeout + margin")
    func stalledPublisherIsNoData() async throws {
        guard let nginx = try RTMPTest.nginx() else { return }
        let publisher = try FFmpegPublisher(file: Fixture.h264AAC.path(), url: nginx.url(stream: "stall"))
        try RTMPTest.waitUntilPublishing(nginx, publisher)
        let options = RTMPTest.options(noData: .seconds(2))
        let connection = RTMPTest.connection(nginx.url(stream: "stall"), options: options)
        try await waitForMedia(connection)
        publisher.suspend()
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .noData, "ended with \(String(describing: outcome.error))")
        // Bytes already in flight arrive first, then exactly the no-data timeout passes.
        #expect(outcome.elapsed < .seconds(2) + .seconds(2))
        publisher.kill()
    }

    /// Reads until the first media arrived.
    private func waitForMedia(_ connection: RTMPConnection) async throws {
        try await withDeadline(.seconds(10)) {
            while let event = try await connection.next() {
                if case .tags(let tags) = event, !tags.isEmpty { return }
            }
            throw DeadlinePassed(limit: .zero)
        }
    }

    // MARK: - Resolving and connecting

    @Test("an unresolvable host is dnsFailed, fast")
    func unknownHostIsDNSFailed() async throws {
        // A label over 63 bytes cannot be put in a DNS query, so glibc fails it locally after /etc/hosts:
        // no packet leaves the machine.
        let host = String(repeating: "a", count: 64) + ".invalid"
        let connection = RTMPTest.connection("rtmp://\(host)/live/x", options: RTMPTest.options())
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .dnsFailed, "ended with \(String(describing: outcome.error))")
        #expect(outcome.events.isEmpty)
        #expect(outcome.elapsed < .seconds(2) + .seconds(1))
    }

    @Test("a resolver that never answers is abandoned at resolveTimeout")
    func slowResolverIsAbandoned() async throws {
        // The misbehaviour under test: a resolver that hangs until the test is over, far past resolveTimeout.
        let answer = DispatchSemaphore(value: 0)
        defer { answer.signal() }
        let source = RTMPSource(
            url: "rtmp://stuck.example/live/x", options: RTMPTest.options(resolve: .milliseconds(500)),
            logger: RTMPTest.logger, limits: .init(),
            resolver: { _, _ in
                answer.wait()
                return .failure(TransportError(.dnsFailed, "late"))
            })
        let outcome = try await RTMPTest.drain(source.makeConnection() as! RTMPConnection, within: .seconds(5))
        #expect(outcome.code == .dnsFailed)
        #expect(outcome.elapsed < .milliseconds(500) + .seconds(1))
    }

    @Test("a refused port is connectFailed")
    func refusedPortIsConnectFailed() async throws {
        let port = try LoopbackPort.free()
        let connection = RTMPTest.connection("rtmp://127.0.0.1:\(port)/live/x", options: RTMPTest.options())
        let outcome = try await RTMPTest.drain(connection, within: .seconds(5))
        #expect(outcome.code == .connectFailed, "ended with \(String(describing: outcome.error))")
        #expect(outcome.error?.message.contains("refused") == true)
        #expect(outcome.events == [.resolved(addresses: ["127.0.0.1:\(port)"])], "resolved, never connected")
    }

    @Test("a host that never answers the TCP handshake is connectFailed at connectTimeout")
    func unansweredSYNIsConnectFailed() async throws {
        let server = try MisbehavingServer(.unreachable)
        let connection = RTMPTest.connection(
            "rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options(connect: .seconds(1)))
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .connectFailed, "ended with \(String(describing: outcome.error))")
        #expect(outcome.elapsed >= .milliseconds(900))
        #expect(outcome.elapsed < .seconds(1) + .seconds(1))
        server.stop()
    }

    @Test("an IPv6 literal connects over IPv6 (refused on [::1] here, as nothing listens)")
    func ipv6LiteralIsUsed() async throws {
        let port = try LoopbackPort.free()
        let connection = RTMPTest.connection("rtmp://[::1]:\(port)/live/x", options: RTMPTest.options())
        let outcome = try await RTMPTest.drain(connection, within: .seconds(5))
        #expect(outcome.code == .connectFailed)
        #expect(outcome.error?.message.contains("[::1]:\(port)") == true)
    }

    // MARK: - Handshake

    @Test("garbage instead of a handshake is handshakeFailed")
    func garbageIsHandshakeFailed() async throws {
        let server = try MisbehavingServer(.garbage(Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8)))
        let connection = RTMPTest.connection("rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options())
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .handshakeFailed, "ended with \(String(describing: outcome.error))")
        #expect(
            outcome.events == [
                .resolved(addresses: ["127.0.0.1:\(server.port)"]), .connected(serverAddress: "127.0.0.1:\(server.port)"),
            ], "the handshake never completed")
        server.stop()
    }

    @Test("a server trickling one byte a second is handshakeFailed at handshakeTimeout")
    func trickleIsHandshakeFailed() async throws {
        let server = try MisbehavingServer(.trickle(interval: .milliseconds(500)))
        let connection = RTMPTest.connection(
            "rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options(handshake: .seconds(2)))
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .handshakeFailed, "ended with \(String(describing: outcome.error))")
        #expect(outcome.elapsed >= .milliseconds(1900))
        #expect(outcome.elapsed < .seconds(2) + .seconds(1))
        server.stop()
    }

    @Test("a server that accepts and stays silent is handshakeFailed at handshakeTimeout")
    func silentServerIsHandshakeFailed() async throws {
        let server = try MisbehavingServer(.silent)
        let connection = RTMPTest.connection(
            "rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options(handshake: .seconds(1)))
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .handshakeFailed, "ended with \(String(describing: outcome.error))")
        #expect(outcome.elapsed < .seconds(1) + .seconds(1))
        server.stop()
    }

    // MARK: - Hostile messages

    @Test("an AMF bomb of 100,000 nested objects is a protocolViolation, not a crash")
    func amfBombIsRejected() async throws {
        let server = try MisbehavingServer(.handshakeThen(RTMPChunkWriter.amfBomb(depth: 100_000)))
        let connection = RTMPTest.connection("rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options())
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .protocolViolation, "ended with \(String(describing: outcome.error))")
        server.stop()
    }

    @Test("a small command nested deeper than the AMF depth cap is a protocolViolation")
    func deepCommandIsRejected() async throws {
        let server = try MisbehavingServer(.handshakeThen(RTMPChunkWriter.amfBomb(depth: 1_000)))
        let connection = RTMPTest.connection("rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options())
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .protocolViolation, "ended with \(String(describing: outcome.error))")
        #expect(outcome.error?.message.contains("nesting") == true)
        server.stop()
    }

    @Test("a message announcing 16 MiB is refused before librtmp allocates it")
    func hugeMessageIsRefused() async throws {
        let header = RTMPChunkWriter.header(type: 9, length: 0xFF_FFFF, messageStreamID: 1, chunkStreamID: 6)
        let server = try MisbehavingServer(.handshakeThen(header + [UInt8](repeating: 0x17, count: 100)))
        let connection = RTMPTest.connection("rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options())
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .protocolViolation, "ended with \(String(describing: outcome.error))")
    }

    @Test("messages held unfinished on many chunk streams are capped in total")
    func unfinishedMessagesAreCapped() async throws {
        // Seven 2 MiB video messages, each only started: 14 MiB promised, 8 MiB allowed.
        var bytes: [UInt8] = []
        for stream in UInt8(4)..<11 {
            bytes += RTMPChunkWriter.header(type: 9, length: 2 << 20, messageStreamID: 1, chunkStreamID: stream)
            bytes += [UInt8](repeating: 0x17, count: 128)
        }
        let server = try MisbehavingServer(.handshakeThen(bytes))
        let connection = RTMPTest.connection("rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options())
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .protocolViolation, "ended with \(String(describing: outcome.error))")
        #expect(outcome.error?.message.contains("unfinished") == true)
    }

    @Test("a new message header on a chunk stream with an unfinished message is a protocolViolation")
    func interleavedHeaderIsRefused() async throws {
        // librtmp 2.4 would read the second (larger) message into the first one's buffer.
        var bytes = RTMPChunkWriter.header(type: 9, length: 1000, messageStreamID: 1, chunkStreamID: 5)
        bytes += [UInt8](repeating: 0x17, count: 128)
        bytes += [0x45, 0, 0, 0, 0x01, 0x00, 0x00, 9] + [UInt8](repeating: 0x17, count: 128)
        let server = try MisbehavingServer(.handshakeThen(bytes))
        let connection = RTMPTest.connection("rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options())
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .protocolViolation, "ended with \(String(describing: outcome.error))")
    }

    @Test("a zero chunk size is a protocolViolation (librtmp would spin)")
    func zeroChunkSizeIsRefused() async throws {
        let server = try MisbehavingServer(.handshakeThen(RTMPChunkWriter.setChunkSize(0)))
        let connection = RTMPTest.connection("rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options())
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .protocolViolation, "ended with \(String(describing: outcome.error))")
    }

    // MARK: - Streaming from a scripted server

    @Test("Play.Start, media, then Play.Stop: events in order, the audio as tags, then nil")
    func scriptedStreamEndsByDesign() async throws {
        let script = RTMPChunkWriter.onStatus("NetStream.Play.Start")
            + audio(timestamp: 0) + audio(timestamp: 23) + RTMPChunkWriter.onStatus("NetStream.Play.Stop")
        let server = try MisbehavingServer(.handshakeThen(script))
        let connection = RTMPTest.connection("rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options())
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.error == nil, "ended with \(String(describing: outcome.error))")
        #expect(outcome.events.count >= 7)
        // What the server said comes in order with the rest: Play.Start begins the stream, Play.Stop ends it.
        #expect(
            Array(outcome.events.prefix(5)) == [
                .resolved(addresses: ["127.0.0.1:\(server.port)"]), .connected(serverAddress: "127.0.0.1:\(server.port)"),
                .handshakeDone, .serverStatus("NetStream.Play.Start"), .streamBegin,
            ])
        #expect(outcome.events.last == .serverStatus("NetStream.Play.Stop"))
        if case .tags(let tags)? = outcome.events.dropFirst(5).first {
            #expect(tags.first?.type == 8 && tags.first?.timestamp == 0, "\(tags)")
        } else {
            Issue.record("no tags after streamBegin: \(outcome.events)")
        }
    }

    /// librtmp closes the connection itself when a read fails on a closed socket, freeing the body of an
    /// unfinished message; the body of a message just begun is the reader's to free. Either way exactly
    /// once: a double free aborts the process (glibc), a leak fails LeakSanitizer.
    @Test(
        "a server closing inside a message's first or a later chunk is serverClosed, the body freed once",
        arguments: [("first chunk", 40), ("continuation chunk", 128 + 1 + 50)])
    func closeInsideAMessageIsServerClosed(_ place: (name: String, bodyBytes: Int)) async throws {
        let message = RTMPChunkWriter.message(
            type: 8, body: [0xAF, 0x01] + [UInt8](repeating: 0x21, count: 298), messageStreamID: 1, chunkStreamID: 4)
        let server = try MisbehavingServer(
            .script { peer in
                try peer.acceptRTMPHandshake()
                try peer.write(RTMPChunkWriter.onStatus("NetStream.Play.Start") + audio(timestamp: 0))
                try peer.write(Array(message.prefix(12 + place.bodyBytes)))
                // The misbehaviour under test, a server stalling inside a message: long enough for the player to
                // read what came and wait inside the body (which it does not tell), then the close.
                peer.sleep(.milliseconds(300))
                peer.shutDown()
            })
        let connection = RTMPTest.connection("rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options())
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .serverClosed, "\(place.name): ended with \(String(describing: outcome.error))")
        #expect(outcome.events.contains(.streamBegin))
        server.stop()
    }

    @Test("a server that goes silent after Play.Start is noData at noDataTimeout")
    func silenceAfterStartIsNoData() async throws {
        let server = try MisbehavingServer(.handshakeThen(RTMPChunkWriter.onStatus("NetStream.Play.Start")))
        let connection = RTMPTest.connection(
            "rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options(noData: .seconds(1)))
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .noData, "ended with \(String(describing: outcome.error))")
        #expect(outcome.events.contains(.streamBegin))
    }

    @Test("media trickling far below real time is tooSlow over the goodput window")
    func trickleOfMediaIsTooSlow() async throws {
        let server = try MisbehavingServer(
            .script { peer in
                try peer.acceptRTMPHandshake()
                try peer.write(RTMPChunkWriter.onStatus("NetStream.Play.Start"))
                // The trickle under test, paced by the peer: 20 ms of audio every 200 ms, 0.1 media seconds per
                // second, below the 0.5 asked for.
                try peer.trickle(every: .milliseconds(200)) { index in audio(timestamp: UInt32(index) * 20) }
            })
        let options = RTMPTest.options(noData: .seconds(5), goodputWindow: .seconds(2), minimumGoodput: 0.5)
        let connection = RTMPTest.connection("rtmp://127.0.0.1:\(server.port)/live/x", options: options)
        let outcome = try await RTMPTest.drain(connection, within: .seconds(10))
        #expect(outcome.code == .tooSlow, "ended with \(String(describing: outcome.error))")
        #expect(outcome.elapsed < .seconds(4))
        server.stop()
    }

    // MARK: - Stopping

    @Test("close() during a hanging handshake returns promptly and frees the connection")
    func closeInterruptsTheHandshake() async throws {
        let server = try MisbehavingServer(.silent)
        let connection = RTMPTest.connection(
            "rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options(handshake: .seconds(30)))
        let resolved = try await withDeadline(.seconds(5)) { try await connection.next() }
        #expect(resolved == .resolved(addresses: ["127.0.0.1:\(server.port)"]))
        let connected = try await withDeadline(.seconds(5)) { try await connection.next() }
        #expect(connected == .connected(serverAddress: "127.0.0.1:\(server.port)"))
        let start = ContinuousClock.now
        try await withDeadline(.seconds(5)) { await connection.close() }
        #expect(ContinuousClock.now - start < .seconds(1))
        await #expect(throws: TransportError.self) { try await connection.next() }
        server.stop()
    }

    @Test("cancelling the task waiting in next() stops the connection promptly")
    func cancellationInterruptsNext() async throws {
        let server = try MisbehavingServer(.silent)
        let connection = RTMPTest.connection(
            "rtmp://127.0.0.1:\(server.port)/live/x", options: RTMPTest.options(handshake: .seconds(30)))
        let task = Task {
            var events: [TransportEvent] = []
            do throws(TransportError) {
                while let event = try await connection.next() { events.append(event) }
                return (events, TransportError?.none)
            } catch {
                return (events, error)
            }
        }
        let connected = LoopbackPort.wait(timeout: .seconds(5)) { server.accepted > 0 }
        #expect(connected)
        let start = ContinuousClock.now
        task.cancel()
        let result = try await withDeadline(.seconds(5)) { await task.value }
        #expect(ContinuousClock.now - start < .seconds(1))
        #expect(result.1?.code == .readFailed)
        try await withDeadline(.seconds(5)) { await connection.close() }
        server.stop()
    }
}

/// An AAC raw frame message (type 8) on message stream 1.
private func audio(timestamp: UInt32) -> [UInt8] {
    RTMPChunkWriter.message(
        type: 8, body: [0xAF, 0x01] + [UInt8](repeating: 0x21, count: 20), timestamp: timestamp, messageStreamID: 1,
        chunkStreamID: 4)
}
