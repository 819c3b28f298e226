/// One FLV tag that arrived already framed: RTMP's audio (8), video (9) and data (18) messages each carry
/// exactly an FLV tag body, with the tag header's type and timestamp in the message header (Video File
/// Format Specification v10, annex E; RTMP specification 1.0, §7.1.5). ``FLVDemuxer/append(tag:)`` parses it
/// with the same tag parser as FLV bytes, without a round trip through the byte format.
public struct FLVTag: Sendable, Hashable {
    /// The FLV tag type (8 audio, 9 video, 18 script data); others are ignored.
    public var type: UInt8
    /// The 32-bit FLV timestamp (24 bits and the extension byte, joined).
    public var timestamp: UInt32
    public var body: [UInt8]

    public init(type: UInt8, timestamp: UInt32, body: [UInt8]) {
        self.type = type
        self.timestamp = timestamp
        self.body = body
    }

    /// What the tag takes in an FLV byte stream: header, body and PreviousTagSize.
    public var framedSize: Int { body.count + 15 }
}
