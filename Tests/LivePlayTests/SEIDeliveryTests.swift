import Foundation
import LivePlay
import LivePlayTesting
import Testing

/// SEI messages of the asked-for payload types (TXLivePlayer V2's `enableReceiveSeiMessage`) reach the listener
/// (9018) and the sink each with the picture it came in: in presentation order though the stream has B-frames,
/// the payload exact, the types not asked for left out.
@Suite struct SEIDeliveryTests {
    static let x264 = "dc45e9bd-e6d9-48b7-962c-d820d923eeef"

    @Test func eachPictureBringsItsOwnMessages() async throws {
        let fixture = try SEIFixture.make()
        let sink = RecordingSink()
        var configuration = LivePlayConfiguration()
        configuration.seiPayloadTypes = [5, 242]
        let recording = await SessionRecording.record(
            fixture.path, configuration: configuration, limit: .seconds(20), sink: sink)
        let pictures = sink.pictures
        #expect(pictures.count == fixture.pictures)
        // x264's own message (its version and options) comes with the first picture, once.
        let x264 = pictures.map { $0.timing.seiMessages.filter { $0.uuidString == Self.x264 } }
        #expect(x264.first?.count == 1 && x264.dropFirst().allSatisfy(\.isEmpty))
        #expect(x264.first?.first.map { String(decoding: $0.payload, as: UTF8.self).hasPrefix("x264 - core") } == true)
        // Pictures were decoded out of order (B-frames): each still carries its own.
        #expect(pictures.map(\.timing.pts) == pictures.map(\.timing.pts).sorted())
        for picture in pictures {
            let pts = String(picture.timing.pts.milliseconds)
            let messages = picture.timing.seiMessages.filter { $0.uuidString != Self.x264 }
            #expect(messages.map(\.payloadType) == [5, 242], "\(picture.timing.pts): \(messages)")
            #expect(messages.first?.uuid == SEIFixture.uuid)
            #expect(messages.map { String(decoding: $0.payload, as: UTF8.self) } == ["pts=" + pts, pts])
        }
        // The listener has each of them once, as its picture is shown: in presentation order.
        let events = recording.events.filter { $0.code == .seiMessage && $0.parameters["uuid"] != .string(Self.x264) }
        #expect(events.count == 2 * pictures.count)
        let stamps = events.compactMap { event -> Int64? in
            if case .int(let pts) = event.parameters["pts_ms"] { pts } else { nil }
        }
        #expect(stamps == stamps.sorted())
        #expect(stamps.count == events.count)
        for event in events {
            guard case .string(let base64) = event.parameters["payload"], case .int(let pts) = event.parameters["pts_ms"],
                let payload = Data(base64Encoded: base64)
            else {
                Issue.record("\(event.parameters)")
                continue
            }
            let text = String(decoding: payload, as: UTF8.self)
            switch event.parameters["payload_type"] {
            case .int(5):
                #expect(text == "pts=\(pts)")
                #expect(event.parameters["uuid"] == .string("01020304-0506-0708-090a-0b0c0d0e0f10"))
            case .int(242):
                #expect(text == "\(pts)")
            default:
                Issue.record("a type not asked for: \(event.parameters)")
            }
        }
        // Not asked for, not delivered.
        let plain = RecordingSink()
        let quiet = await SessionRecording.record(fixture.path, configuration: LivePlayConfiguration(), sink: plain)
        #expect(!quiet.codes.contains(PlayEventCode.seiMessage.rawValue))
        #expect(!plain.pictures.isEmpty)
        #expect(plain.pictures.allSatisfy { $0.timing.seiMessages.isEmpty })
    }
}
