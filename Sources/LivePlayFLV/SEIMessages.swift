public import LivePlayCore

/// A "user data unregistered" SEI message (H.264 §D.1.7 / H.265 §D.2.7, payload type 5): how encoders and
/// streaming tools put their own messages into the video (lyrics, quiz questions, timing stamps).
public struct UserDataMessage: Sendable, Hashable {
    /// The 16-byte UUID naming whose message it is.
    public var uuid: [UInt8]
    public var payload: [UInt8]

    /// The UUID as `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    public var uuidString: String { SEIMessage.uuidString(uuid) }
}

/// Finds SEI messages in a video packet's length-prefixed NAL units.
///
/// Bounded by the packet: lengths and sizes that run past it end the scan, never an allocation beyond the
/// bytes present. Emulation-prevention bytes (`00 00 03`) are removed before the SEI syntax is read.
public enum SEIMessages {
    static let userDataUnregistered = 5

    /// The user-data messages in `packet` (AVCC / HVCC framing with `nalLengthSize`-byte lengths).
    public static func userData(in packet: EncodedPacket, codec: VideoCodec, nalLengthSize: Int) -> [UserDataMessage] {
        userData(messages(in: packet, codec: codec, nalLengthSize: nalLengthSize, types: [userDataUnregistered]))
    }

    /// The messages of the payload `types` in `packet` (AVCC / HVCC framing with `nalLengthSize`-byte lengths),
    /// in stream order.
    public static func messages(in packet: EncodedPacket, codec: VideoCodec, nalLengthSize: Int, types: Set<Int>)
        -> [SEIMessage]
    {
        guard (1...4).contains(nalLengthSize), !types.isEmpty, codec.usesNALUnits else { return [] }
        var messages: [SEIMessage] = []
        var reader = ByteReader(packet.payload)
        while reader.remaining > nalLengthSize {
            var length = 0
            for _ in 0..<nalLengthSize { length = length << 8 | Int(reader.readUInt8()!) }
            guard length > 0, length <= reader.remaining, let unit = reader.readBytes(length) else { break }
            let headerLength = codec == .hevc ? 2 : 1
            guard unit.count > headerLength, let header = unit.first, isSEI(header, codec: codec) else { continue }
            messages += Self.messages(inRBSP: removingEmulationPrevention(unit.dropFirst(headerLength)), types: types)
        }
        return messages
    }

    private static func isSEI(_ header: UInt8, codec: VideoCodec) -> Bool {
        switch codec {
        case .hevc:
            let type = (header >> 1) & 0x3F
            return type == 39 || type == 40  // PREFIX_SEI_NUT, SUFFIX_SEI_NUT
        default:
            return header & 0x1F == 6
        }
    }

    /// `sei_rbsp`: the messages of `types` until the trailing bits. A type-5 message shorter than its UUID is
    /// left out.
    static func messages(inRBSP rbsp: [UInt8], types: Set<Int>) -> [SEIMessage] {
        var messages: [SEIMessage] = []
        var index = 0
        while index < rbsp.count, rbsp[index] != 0x80 {
            guard let type = readValue(rbsp, &index), let size = readValue(rbsp, &index), size <= rbsp.count - index
            else { break }
            if types.contains(type) {
                if type == userDataUnregistered {
                    if size >= 16 {
                        messages.append(
                            SEIMessage(
                                payloadType: type, payload: Array(rbsp[index + 16..<index + size]),
                                uuid: Array(rbsp[index..<index + 16])))
                    }
                } else {
                    messages.append(SEIMessage(payloadType: type, payload: Array(rbsp[index..<index + size])))
                }
            }
            index += size
        }
        return messages
    }

    static func userData(inRBSP rbsp: [UInt8]) -> [UserDataMessage] {
        userData(messages(inRBSP: rbsp, types: [userDataUnregistered]))
    }

    private static func userData(_ messages: [SEIMessage]) -> [UserDataMessage] {
        messages.compactMap { message in message.uuid.map { UserDataMessage(uuid: $0, payload: message.payload) } }
    }

    /// A `payloadType` or `payloadSize`: 0xFF bytes add 255 each, the first other byte ends it.
    private static func readValue(_ bytes: [UInt8], _ index: inout Int) -> Int? {
        var value = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            value += Int(byte)
            if byte != 0xFF { return value }
        }
        return nil
    }

    static func removingEmulationPrevention(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var zeros = 0
        for byte in bytes {
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            output.append(byte)
        }
        return output
    }
}
