public import LivePlayFLV

/// Turns RTMP media messages into FLV tags (FLV file format, Video File Format Specification v10, annex E):
/// as ``FLVTag`` values for the demuxer's tag parser (what the player uses), or as an FLV byte stream.
///
/// Audio (8), video (9) and data (18) messages carry exactly an FLV tag body; an aggregate message (22)
/// carries whole FLV tags whose timestamps are rebased onto the message's own (RTMP specification 1.0,
/// §7.1.6). The first output starts with the FLV header.
public struct FLVTagWriter: Sendable {
    private var wroteHeader = false

    public init() {}

    /// The FLV header with both audio and video flagged (the demuxer goes by the tags) and PreviousTagSize0.
    public static let header: [UInt8] = [0x46, 0x4C, 0x56, 0x01, 0x05, 0, 0, 0, 9, 0, 0, 0, 0]

    /// Appends the tags for one checked media message to `output`, as FLV bytes.
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
        var media: [(type: UInt8, timestamp: UInt32)] = []
        Self.forEachTag(type: type, timestamp: timestamp, body: body) { type, timestamp, body in
            Self.appendTag(type: type, timestamp: timestamp, body: body, to: &output)
            if type != RTMPMessageType.amf0Data.rawValue { media.append((type, timestamp)) }
        }
        return media
    }

    /// Appends the tags for one checked media message to `output` as they are, for
    /// ``FLVDemuxer/append(tag:)``: what a player does, with no FLV bytes made only to be parsed again. The audio
    /// and video tags' types and timestamps are the media's, for goodput accounting; nothing else is allocated than
    /// each tag's body (and `output`'s growth).
    public static func appendTags(
        type: UInt8, timestamp: UInt32, body: UnsafeRawBufferPointer, to output: inout [FLVTag]
    ) {
        forEachTag(type: type, timestamp: timestamp, body: body) { type, timestamp, body in
            output.append(FLVTag(type: type, timestamp: timestamp, body: Array(body)))
        }
    }

    /// Calls `visit` with each tag one media message carries: the message itself, or each tag of an aggregate
    /// rebased onto the message's timestamp; `@setDataFrame` wrappers taken off data.
    private static func forEachTag(
        type: UInt8, timestamp: UInt32, body: UnsafeRawBufferPointer,
        _ visit: (UInt8, UInt32, Slice<UnsafeRawBufferPointer>) -> Void
    ) {
        switch RTMPMessageType(rawValue: type) {
        case .audio, .video:
            visit(type, timestamp, body[...])
        case .amf0Data:
            visit(type, timestamp, strippingSetDataFrame(body[...]))
        case .aggregate:
            forEachAggregated(timestamp: timestamp, body: body, visit)
        default:
            break
        }
    }

    private static func forEachAggregated(
        timestamp: UInt32, body: UnsafeRawBufferPointer, _ visit: (UInt8, UInt32, Slice<UnsafeRawBufferPointer>) -> Void
    ) {
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
                visit(type, rebased, subBody)
            case .amf0Data:
                visit(type, rebased, strippingSetDataFrame(subBody))
            default:
                break
            }
            offset += 11 + size + 4
        }
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
