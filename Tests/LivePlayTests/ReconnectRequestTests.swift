import Foundation
import LivePlay
import LivePlayFLV
import LivePlayTesting
import Testing

/// Enhanced RTMP's `NetConnection.Connect.ReconnectRequest` from a scripted server: the player reads on to the next
/// keyframe and moves (to the `tcUrl` given, or back to the same application) as a planned move: 9017, no 2103 or
/// −2301, and the pictures go on without a gap.
@Suite struct ReconnectRequestTests {
    /// Tags of an FLV file: type, timestamp, body.
    static func tags(_ bytes: [UInt8]) -> [(type: UInt8, timestamp: UInt32, body: [UInt8])] {
        var tags: [(UInt8, UInt32, [UInt8])] = []
        var offset = 13
        while offset + 11 <= bytes.count {
            let size = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let timestamp = UInt32(bytes[offset + 4]) << 16 | UInt32(bytes[offset + 5]) << 8 | UInt32(bytes[offset + 6])
            guard offset + 11 + size <= bytes.count else { break }
            tags.append((bytes[offset], timestamp, Array(bytes[offset + 11..<offset + 11 + size])))
            offset += 11 + size + 4
        }
        return tags
    }

    @Test(arguments: [true, false])
    func aReconnectRequestIsAPlannedMoveToTheNextKeyframe(_ namesApplication: Bool) async throws {
        let tags = Self.tags(try Fixtures.bytes(try Fixture.longH264AAC.path()))
        let keyframes = Set(tags.indices.filter { tags[$0].type == 9 && tags[$0].body.first.map { $0 >> 4 == 1 } == true })
        // The script data and the sequence headers, which a server sends every new player first.
        let headers = tags.indices.filter {
            tags[$0].timestamp == 0 && (tags[$0].type == 18 || tags[$0].body.count > 1 && tags[$0].body[1] == 0)
        }
        let connects = Locked<[String]>([])
        // Where the second connection starts: the first keyframe the first one wrote after its request.
        let resume = Locked<Int?>(nil)
        let portBox = Locked<Int>(0)
        let server = try MisbehavingServer(
            .script { peer in
                try peer.acceptRTMPHandshake()
                let command = try peer.readCommand()
                let tcUrl = command.count > 2 ? command[2]["tcUrl"]?.stringValue ?? "" : ""
                let number = connects.withLock {
                    $0.append(tcUrl)
                    return $0.count
                }
                try peer.write(RTMPChunkWriter.onStatus("NetStream.Play.Start"))
                let send = { (index: Int) throws in
                    let tag = tags[index]
                    try peer.write(
                        RTMPChunkWriter.message(
                            type: tag.type, body: tag.body, timestamp: tag.timestamp, messageStreamID: 1,
                            chunkStreamID: tag.type == 8 ? 4 : 6))
                }
                let start = number == 1 ? 0 : (resume.get() ?? 0)
                if number > 1 { for index in headers { try send(index) } }
                var requested = false
                for index in start..<tags.count {
                    // Real time, roughly: 2 s of media a second is what a server's GOP cache bursts.
                    if index % 12 == 11, !peer.sleep(.milliseconds(200)) { return }
                    if number == 1, !requested, tags[index].timestamp >= 1500 {
                        requested = true
                        var info: [AMF0Property] = [
                            AMF0Property("level", .string("status")),
                            AMF0Property("code", .string("NetConnection.Connect.ReconnectRequest")),
                            AMF0Property("description", .string("edge maintenance")),
                        ]
                        if namesApplication {
                            info.append(AMF0Property("tcUrl", .string("rtmp://127.0.0.1:\(portBox.get())/moved")))
                        }
                        try peer.write(RTMPChunkWriter.command([.string("onStatus"), .number(0), .null, .object(info)]))
                    }
                    if number == 1, requested, resume.get() == nil, keyframes.contains(index) { resume.set(index) }
                    try send(index)
                }
                peer.holdOpen()
            })
        portBox.set(Int(server.port))
        defer { server.stop() }
        let sink = RecordingSink()
        let recording = await SessionRecording.record(
            "rtmp://127.0.0.1:\(server.port)/live/stream?token=secret", configuration: LivePlayConfiguration(),
            limit: .seconds(20), sink: sink,
            script: { probe in
                _ = await probe.wait(for: .reconnectRequested, timeout: .seconds(10))
                _ = await probe.wait(for: .playProgress, count: 4, timeout: .seconds(10))
                probe.stop()
            })
        let moved = try #require(recording.events.first { $0.code == .reconnectRequested }, "\(recording.codes)")
        #expect(!recording.codes.contains(2103) && !recording.codes.contains(-2301), "\(recording.codes)")
        let received = connects.get()
        #expect(received.count == 2, "\(received)")
        #expect(received.first == "rtmp://127.0.0.1:\(server.port)/live")
        if namesApplication {
            #expect(received.last == "rtmp://127.0.0.1:\(server.port)/moved")
            #expect(moved.parameters["tc_url"] == .string("rtmp://127.0.0.1:\(server.port)/moved"))
        } else {
            #expect(received.last == received.first)
        }
        // The pictures go on across the move: every step between shown pictures is a frame or two.
        let shown = sink.pictures.map(\.timing.pts.milliseconds)
        #expect(shown.count > 100, "\(shown.count) pictures")
        let steps = zip(shown, shown.dropFirst()).map { $1 - $0 }
        #expect(steps.allSatisfy { $0 > 0 && $0 <= 80 }, "\(steps.filter { $0 <= 0 || $0 > 80 })")
    }
}
