import Foundation
import LivePlayCore
import LivePlayFLV

/// H.264 with SEI messages in every picture, for SEI delivery: x264's stream with two B-frames (so decode order is
/// not presentation order; ``EnhancedFixture``'s H.264 source) with one SEI NAL unit put first in each access unit,
/// carrying three messages: user data unregistered (type 5: ``uuid``, then `pts=N`), type 242 (`N`) and type 1
/// (`N`, a type a player is not asked for), where N is the picture's presentation time in milliseconds. x264's own
/// user-data message (its version and options) is in the first keyframe as well.
public enum SEIFixture {
    /// A UUID with no zero byte, so the NAL unit needs no emulation prevention.
    public static let uuid: [UInt8] = Array(1...16)

    /// The FLV file (video only, legacy H.264 tags) and how many pictures it has.
    public static func make() throws -> (path: String, pictures: Int) {
        let (_, source) = try EnhancedFixture.elementary(.h264, seconds: 3)
        var writer = FLVWriter(hasAudio: false)
        writer.writeVideo(codecID: 7, packetType: .sequenceHeader, keyframe: true, timestamp: 0, payload: source.extradata)
        let shift = -(source.packets.map(\.dts).min() ?? 0)
        for packet in source.packets {
            let pts = Array(String(packet.pts + shift).utf8)
            let unit = [UInt8(6)] + message(5, uuid + Array("pts=".utf8) + pts) + message(242, pts) + message(1, pts) + [0x80]
            writer.writeVideo(
                codecID: 7, packetType: .nalu, keyframe: packet.isKeyframe, timestamp: UInt32(packet.dts + shift),
                compositionTime: Int32(packet.pts - packet.dts), payload: lengthPrefixed(unit) + packet.data)
        }
        return (try Fixtures.write(writer.bytes, name: "sei"), source.packets.count)
    }

    /// One `sei_message`: its type and size (each under 255 here), then the payload.
    private static func message(_ type: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [type, UInt8(payload.count)] + payload
    }

    /// x264's NAL units have 4-byte lengths.
    static func lengthPrefixed(_ unit: [UInt8]) -> [UInt8] {
        (0..<4).reversed().map { UInt8(truncatingIfNeeded: unit.count >> (8 * $0)) } + unit
    }
}
