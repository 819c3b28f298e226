import LivePlayFLV

/// Turns RTMP media messages into FLV tags (FLV file format, Video File Format Specification v10, annex E),
/// so RTMP ends in the same byte stream as HTTP-FLV and one demuxer serves both.
///
/// Audio (8), video (9) and data (18) messages carry exactly an FLV tag body; an aggregate message (22)
/// carries whole FLV tags whose timestamps are rebased onto the message's own (RTMP specification 1.0,
/// §7.1.6). The first output starts with the FLV header.
public struct FLVTagWriter: Sendable {
    private var wroteHeader = false

    public init() {}

    /// The FLV header with both audio and video flagged (the demuxer goes by the tags) and PreviousTagSize0.
    public static let header: [UInt8] = [0x46, 0x4C, 0x56, 0x01, 0x05, 0, 0, 0, 9, 0, 0, 0, 0]

    /// Appends the tags for one checked media message to `output`.
    ///
    /// - Returns: the media timestamps (type, milliseconds) of the audio and video tags written, for
    ///   goodput accounting.
    @discardableResult
    public mutating func append(
        type: UInt8, timestamp: UInt32, body: UnsafeRawBufferPointer, to output: inout [UInt8]
    ) -> [(type: UInt8, timestamp: UInt32)] {
        if !wroteHeader {
            output += Self.header
            wroteHeader = true
        }
        switch RTMPMessageType(rawValue: type) {
        case .audio, .video:
            Self.appendTag(type: type, timestamp: timestamp, body: body[...], to: &output)
            return [(type, timestamp)]
        case .amf0Data:
            Self.appendTag(type: type, timestamp: timestamp, body: Self.strippingSetDataFrame(body[...]), to: &output)
            return []
        case .aggregate:
            return Self.appendAggregate(timestamp: timestamp, body: body, to: &output)
        default:
            return []
        }
    }

    private static func appendAggregate(
        timestamp: UInt32, body: UnsafeRawBufferPointer, to output: inout [UInt8]
    ) -> [(type: UInt8, timestamp: UInt32)] {
        var media: [(type: UInt8, timestamp: UInt32)] = []
        var first: UInt32?
        var offset = 0
        // The guard checked the layout; this stops quietly at anything short.
        while offset + 11 <= body.count {
            let type = body[offset]
            let size = Int(body[offset + 1]) << 16 | Int(body[offset + 2]) << 8 | Int(body[offset + 3])
            guard offset + 11 + size + 4 <= body.count else { break }
            let subTimestamp = UInt32(body[offset + 4]) << 16 | UInt32(body[offset + 5]) << 8
                | UInt32(body[offset + 6]) | UInt32(body[offset + 7]) << 24
            let base = first ?? subTimestamp
            first = base
            let rebased = timestamp &+ (subTimestamp &- base)
            let subBody = body[(offset + 11)..<(offset + 11 + size)]
            switch RTMPMessageType(rawValue: type) {
            case .audio, .video:
                appendTag(type: type, timestamp: rebased, body: subBody, to: &output)
                media.append((type, rebased))
            case .amf0Data:
                appendTag(type: type, timestamp: rebased, body: strippingSetDataFrame(subBody), to: &output)
            default:
                break
            }
            offset += 11 + size + 4
        }
        return media
    }

    /// One tag: type, 24-bit size, 24-bit timestamp and its 8-bit extension, stream id 0, body,
    /// PreviousTagSize.
    static func appendTag(
        type: UInt8, timestamp: UInt32, body: Slice<UnsafeRawBufferPointer>, to output: inout [UInt8]
    ) {
        let size = UInt32(body.count)
        output += [
            type, UInt8(truncatingIfNeeded: size >> 16), UInt8(truncatingIfNeeded: size >> 8),
            UInt8(truncatingIfNeeded: size),
            UInt8(truncatingIfNeeded: timestamp >> 16), UInt8(truncatingIfNeeded: timestamp >> 8),
            UInt8(truncatingIfNeeded: timestamp), UInt8(truncatingIfNeeded: timestamp >> 24),
            0, 0, 0,
        ]
        output += body
        let previous = size + 11
        output += [
            UInt8(truncatingIfNeeded: previous >> 24), UInt8(truncatingIfNeeded: previous >> 16),
            UInt8(truncatingIfNeeded: previous >> 8), UInt8(truncatingIfNeeded: previous),
        ]
    }

    /// Publishers send metadata as `@setDataFrame("onMetaData", …)`; some servers pass the wrapper on to
    /// players. A script tag starts with the handler name, so the wrapper's name goes.
    static func strippingSetDataFrame(_ body: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        let name = Array("@setDataFrame".utf8)
        let start = body.startIndex
        guard body.count > 3 + name.count, body[start] == AMF0Marker.string.rawValue,
            Int(body[start + 1]) << 8 | Int(body[start + 2]) == name.count,
            body[(start + 3)..<(start + 3 + name.count)].elementsEqual(name)
        else { return body }
        return body[(start + 3 + name.count)...]
    }
}
