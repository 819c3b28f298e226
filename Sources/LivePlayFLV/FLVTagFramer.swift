/// Cuts an FLV byte stream into whole tags without parsing their bodies: what a time-shift ring stores, as the
/// tags arrived (FLV v10.1 §E.3 header, §E.4.1 tags).
///
/// Incremental (STYLE.md §1): short input is "need more", never an error. The file header is skipped; a tag
/// header that cannot be one (an unknown type, a body over ``maximumTagSize``) throws, as the stream is then
/// not FLV or has lost its framing.
public struct FLVTagFramer: Sendable {
    public let maximumTagSize: Int
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var headerSkipped = false

    public init(maximumTagSize: Int = 16 << 20) {
        self.maximumTagSize = maximumTagSize
    }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        if readIndex > 0, readIndex * 2 >= buffer.count {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole tag, or `nil` until more bytes arrive.
    public mutating func nextTag() throws(FLVError) -> FLVTag? {
        if !headerSkipped {
            guard buffer.count - readIndex >= 9 else { return nil }
            guard buffer[readIndex] == 0x46, buffer[readIndex + 1] == 0x4C, buffer[readIndex + 2] == 0x56 else {
                throw FLVError(.invalidHeader, "missing FLV signature", offset: 0)
            }
            let dataOffset = Int(buffer[readIndex + 5]) << 24 | Int(buffer[readIndex + 6]) << 16
                | Int(buffer[readIndex + 7]) << 8 | Int(buffer[readIndex + 8])
            guard dataOffset >= 9, dataOffset <= 9 + maximumTagSize else {
                throw FLVError(.invalidHeader, "implausible header DataOffset \(dataOffset)", offset: 5)
            }
            // The header, its padding and the first PreviousTagSize.
            guard buffer.count - readIndex >= dataOffset + 4 else { return nil }
            readIndex += dataOffset + 4
            headerSkipped = true
        }
        guard let header = FLVTagHeader(buffer, at: readIndex) else { return nil }
        guard header.isPlausible(maximumTagSize: maximumTagSize) else {
            throw FLVError(
                .malformedTag, "not an FLV tag header (type \(header.typeByte), size \(header.dataSize))", offset: 0)
        }
        let size = header.dataSize
        guard buffer.count - readIndex >= FLVTagHeader.size + size + 4 else { return nil }
        let body = Array(buffer[(readIndex + FLVTagHeader.size)..<(readIndex + FLVTagHeader.size + size)])
        readIndex += FLVTagHeader.size + size + 4
        return FLVTag(type: header.typeByte & 0x1F, timestamp: header.timestamp, body: body)
    }

    /// The type, body size and 32-bit timestamp of the tag header in `bytes[start..<start + 11]`; nil when those
    /// bytes are not one (an unknown type, reserved bits set, a body over `maximumTagSize`).
    public static func header(
        _ bytes: [UInt8], at start: Int, maximumTagSize: Int
    ) -> (type: UInt8, size: Int, timestamp: UInt32)? {
        guard let header = FLVTagHeader(bytes, at: start), header.isPlausible(maximumTagSize: maximumTagSize) else {
            return nil
        }
        return (header.typeByte & 0x1F, header.dataSize, header.timestamp)
    }
}

extension FLVTag {
    /// The tag as an FLV byte stream carries it: header, body and PreviousTagSize.
    public var framedBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(framedSize)
        let size = UInt32(body.count)
        bytes += [
            type, UInt8(truncatingIfNeeded: size >> 16), UInt8(truncatingIfNeeded: size >> 8),
            UInt8(truncatingIfNeeded: size),
        ]
        bytes += [
            UInt8(truncatingIfNeeded: timestamp >> 16), UInt8(truncatingIfNeeded: timestamp >> 8),
            UInt8(truncatingIfNeeded: timestamp), UInt8(truncatingIfNeeded: timestamp >> 24), 0, 0, 0,
        ]
        bytes += body
        let previous = size + 11
        bytes += [
            UInt8(truncatingIfNeeded: previous >> 24), UInt8(truncatingIfNeeded: previous >> 16),
            UInt8(truncatingIfNeeded: previous >> 8), UInt8(truncatingIfNeeded: previous),
        ]
        return bytes
    }

    /// A video tag that starts a GOP: frame type 1 in the first byte's high nibble, legacy or Enhanced RTMP alike
    /// (the ExHeader bit does not change it), and not a sequence header or end of sequence.
    public var isVideoKeyframe: Bool {
        guard type == FLVTagType.video.rawValue, let first = body.first, (first >> 4) & 0x07 == 1 else { return false }
        if first & 0x80 != 0 { return [1, 3, 6].contains(first & 0x0F) }
        return body.count > 1 && (first & 0x0F != 7 && first & 0x0F != 12 || body[1] == 1)
    }

    /// A sequence header (legacy AVC/HEVC packet type 0, Enhanced RTMP SequenceStart) or AAC's AudioSpecificConfig:
    /// what a decoder needs before the tags that follow, kept to start each segment of a ring with.
    public var isSequenceHeader: Bool {
        guard let first = body.first else { return false }
        if type == FLVTagType.video.rawValue {
            if first & 0x80 != 0 { return first & 0x0F == 0 }
            return (first & 0x0F == 7 || first & 0x0F == 12) && body.count > 1 && body[1] == 0
        }
        if type == FLVTagType.audio.rawValue {
            if first >> 4 == 9 { return first & 0x0F == 0 }
            return first >> 4 == 10 && body.count > 1 && body[1] == 0
        }
        return false
    }
}
