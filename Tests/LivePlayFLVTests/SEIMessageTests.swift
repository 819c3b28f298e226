import LivePlayCore
@testable import LivePlayFLV
import LivePlayTesting
import Testing

/// User-data SEI messages, on x264's own: every x264 stream's first keyframe carries its version and options
/// in one (UUID dc45e9bd-e6d9-48b7-962c-d820d923eeef).
@Suite struct SEIMessageTests {
    @Test func x264sUserDataIsFoundInTheFirstKeyframe() throws {
        var demuxer = FLVDemuxer()
        demuxer.append(try Fixtures.bytes(try Fixture.h264AAC.path()))
        demuxer.finish()
        var configuration: VideoCodecConfiguration?
        var messages: [UserDataMessage] = []
        while let element = try demuxer.nextElement() {
            if case .videoConfiguration(let video) = element { configuration = video }
            if case .packet(let packet) = element, packet.kind == .video, let video = configuration {
                messages += SEIMessages.userData(in: packet, codec: video.codec, nalLengthSize: video.nalLengthSize)
            }
        }
        let x264 = try #require(messages.first)
        #expect(x264.uuidString == "dc45e9bd-e6d9-48b7-962c-d820d923eeef")
        #expect(String(decoding: x264.payload, as: UTF8.self).hasPrefix("x264 - core"))
    }

    @Test func emulationPreventionAndHostileSizesAreHandled() {
        #expect(SEIMessages.removingEmulationPrevention([0, 0, 3, 1, 0, 0, 3, 0, 0, 3][...]) == [0, 0, 1, 0, 0, 0, 0])
        // Type 5 claiming 300 bytes with 20 present: nothing, and no read past the end.
        let claimsTooMuch: [UInt8] = [5, 0xFF, 45] + Array(repeating: 7, count: 20)
        #expect(SEIMessages.userData(inRBSP: claimsTooMuch).isEmpty)
        // A NAL length past the packet, and a length size out of range.
        let packet = EncodedPacket(
            kind: .video, dts: .zero, pts: .zero, isKeyframe: true, payload: [0, 0, 0xFF, 0xFF, 6, 5, 16])
        #expect(SEIMessages.userData(in: packet, codec: .h264, nalLengthSize: 4).isEmpty)
        #expect(SEIMessages.userData(in: packet, codec: .h264, nalLengthSize: 7).isEmpty)
        // One well-formed message among two.
        let rbsp: [UInt8] = [1, 2, 0xAA, 0xBB, 5, 18] + Array(0..<16) + [0x68, 0x69, 0x80]
        let found = SEIMessages.userData(inRBSP: rbsp)
        #expect(found.count == 1 && found[0].payload == Array("hi".utf8))
    }

    @Test func anyAskedForPayloadTypeIsFoundAndNoOther() {
        // Type 242 (3 bytes), type 5 (UUID + "ok"), a type of 300 coded 0xFF 0x2D (1 byte), then the trailing bits.
        let rbsp: [UInt8] = [242, 3, 7, 8, 9, 5, 18] + Array(0..<16) + [0x6F, 0x6B] + [0xFF, 45, 1, 0x42] + [0x80]
        let all = SEIMessages.messages(inRBSP: rbsp, types: [5, 242, 300])
        #expect(all.map(\.payloadType) == [242, 5, 300])
        #expect(all[0].payload == [7, 8, 9] && all[0].uuid == nil)
        #expect(all[1].payload == Array("ok".utf8) && all[1].uuid == Array(0..<16))
        #expect(all[2].payload == [0x42])
        #expect(SEIMessages.messages(inRBSP: rbsp, types: [242]).map(\.payloadType) == [242])
        // A size past the end stops the scan; a type-5 message shorter than its UUID is left out.
        #expect(SEIMessages.messages(inRBSP: [242, 200, 1, 2], types: [242]).isEmpty)
        #expect(SEIMessages.messages(inRBSP: [5, 3, 1, 2, 3, 0x80], types: [5]).isEmpty)
    }
}
