import Foundation
import LivePlayFLV
import LivePlayTesting
import Testing

@testable import LivePlayTransport

/// The `connect` command as a server receives it: librtmp's fields, and Enhanced RTMP v2's capabilities.
@Suite struct RTMPConnectTests {
    @Test func connectAdvertisesEveryFourCCLiveplayDecodesAndItsExtendedCapabilities() async throws {
        let received = Locked<[AMF0Value]?>(nil)
        let server = try MisbehavingServer(
            .script { peer in
                try peer.acceptRTMPHandshake()
                received.set(try peer.readCommand())
                peer.shutDown()
            })
        defer { server.stop() }
        let connection = RTMPTest.connection("rtmp://127.0.0.1:\(server.port)/live/x?token=1", options: RTMPTest.options())
        _ = try await RTMPTest.drain(connection, within: .seconds(10))
        let command = try #require(received.get())
        #expect(command.first == .string("connect"))
        #expect(command.count >= 3 && command[1] == .number(1))
        let object = try #require(command.count >= 3 ? command[2] : nil)
        #expect(object["app"]?.stringValue == "live")
        #expect(object["tcUrl"]?.stringValue?.hasPrefix("rtmp://127.0.0.1:\(server.port)/live") == true)
        #expect(object["capabilities"] == .number(15) && object["videoFunction"] == .number(1))
        var entries: [AMF0Value] = []
        if case .strictArray(let values)? = object["fourCcList"] { entries = values }
        #expect(Set(entries.compactMap(\.stringValue)) == ["avc1", "hvc1", "av01", "vp09", "vp08", "Opus", "fLaC", "ac-3", "ec-3", "mp4a", ".mp3"])
        let video = try #require(object["videoFourCcInfoMap"]?.properties)
        #expect(Dictionary(uniqueKeysWithValues: video.map { ($0.key, $0.value) }) == [
            "avc1": .number(1), "hvc1": .number(1), "av01": .number(1), "vp09": .number(1), "vp08": .number(1),
        ])
        #expect(video.allSatisfy { $0.key != "vvc1" }, "no VVC decoder here")
        let audio = try #require(object["audioFourCcInfoMap"]?.properties)
        #expect(audio.count == 6 && audio.allSatisfy { $0.value == .number(1) })
        // Reconnect, Multitrack, ModEx and TimestampNanoOffset.
        #expect(object["capsEx"] == .number(15))
    }
}
