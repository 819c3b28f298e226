/// One wall-clock stamp: the `onLivePlayClock` script-data tag a live server (the stream lab's) puts into
/// the stream so a player can measure end-to-end latency (docs/wall-clock-tags.md).
///
/// It says "stream time `streamMs` was due on the server's real-time schedule at Unix time `wallClockMs`";
/// a frame with timestamp `pts` was therefore sent at `wallClockMs + (pts − streamMs)`.
public struct WallClockStamp: Sendable, Equatable {
    /// The AMF0 handler name, the first value of the tag.
    public static let name = "onLivePlayClock"
    /// The `source` field's value the stream lab writes.
    public static let source = "liveplay-lab"

    /// Unix epoch milliseconds when the server sent the tag.
    public var wallClockMs: Int64
    /// The stream timestamp due at that instant; also the tag's FLV timestamp.
    public var streamMs: UInt32

    public init(wallClockMs: Int64, streamMs: UInt32) {
        self.wallClockMs = wallClockMs
        self.streamMs = streamMs
    }

    /// Reads a stamp from a demuxed data message; `nil` if it is not a well-formed `onLivePlayClock`, or if
    /// its numbers are no timestamps (fractional, negative, NaN, infinite, out of range): never a trap.
    public init?(_ message: FLVDataMessage) {
        guard message.name == Self.name, let fields = message.arguments.first,
            let wallClock = fields["wallClockMs"]?.numberValue, let stream = fields["streamMs"]?.numberValue,
            let wallClockMs = Int64(exactly: wallClock), let streamMs = UInt32(exactly: stream)
        else { return nil }
        self.init(wallClockMs: wallClockMs, streamMs: streamMs)
    }

    /// The script-data tag body (§E.4.4.1): the name as an AMF0 string, then an ECMA array with
    /// `wallClockMs`, `streamMs` (both Numbers, milliseconds) and `source`.
    public var body: [UInt8] {
        var encoder = AMF0Encoder()
        encoder.encode(.string(Self.name))
        encoder.encode(
            .ecmaArray([
                AMF0Property("wallClockMs", .number(Double(wallClockMs))),
                AMF0Property("streamMs", .number(Double(streamMs))),
                AMF0Property("source", .string(Self.source)),
            ]))
        return encoder.bytes
    }
}
