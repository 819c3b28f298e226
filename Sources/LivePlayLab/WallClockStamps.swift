import LivePlayCore
import Foundation
public import LivePlayFLV
public import NIOCore

/// One wall-clock stamp: the `onLivePlayClock` script-data tag the live server puts into the stream so a
/// player can measure end-to-end latency (docs/wall-clock-tags.md).
///
/// It says "stream time `streamMs` was due on the server's real-time schedule at Unix time `wallClockMs`";
/// a frame with timestamp `pts` was therefore sent at `wallClockMs + (pts − streamMs)`.
public struct WallClockStamp: Sendable, Equatable {
    /// The AMF0 handler name, the first value of the tag.
    public static let name = "onLivePlayClock"
    /// The `source` field's value.
    public static let source = "liveplay-lab"

    /// Unix epoch milliseconds when the server sent the tag.
    public var wallClockMs: Int64
    /// The stream timestamp (after loop rewriting) due at that instant; also the tag's FLV timestamp.
    public var streamMs: UInt32

    public init(wallClockMs: Int64, streamMs: UInt32) {
        self.wallClockMs = wallClockMs
        self.streamMs = streamMs
    }

    /// Reads a stamp from a demuxed data message; `nil` if it is not a well-formed `onLivePlayClock`.
    public init?(_ message: FLVDataMessage) {
        guard message.name == Self.name, let fields = message.arguments.first,
            let wallClock = fields["wallClockMs"]?.numberValue, let stream = fields["streamMs"]?.numberValue,
            let wallClockMs = Int64(exactly: wallClock), let streamMs = UInt32(exactly: stream)
        else { return nil }
        self.init(wallClockMs: wallClockMs, streamMs: streamMs)
    }

    /// The script-data tag body (§E.4.4.1): the name as an AMF0 string, then an ECMA array with
    /// `wallClockMs`, `streamMs` (both Numbers, milliseconds) and `source`.
    public var body: ByteBuffer {
        var encoder = AMF0Encoder()
        encoder.encode(.string(Self.name))
        encoder.encode(
            .ecmaArray([
                AMF0Property("wallClockMs", .number(Double(wallClockMs))),
                AMF0Property("streamMs", .number(Double(streamMs))),
                AMF0Property("source", .string(Self.source)),
            ]))
        return ByteBuffer(bytes: encoder.bytes)
    }

    /// The whole FLV tag (type 18, timestamp `streamMs`) with its PreviousTagSize.
    func tag(allocator: ByteBufferAllocator) -> ByteBuffer {
        let body = body
        var buffer = allocator.buffer(capacity: FLVTagWriter.byteCount(bodySize: body.readableBytes))
        FLVTagWriter.write(type: 18, timestamp: streamMs, body: body, into: &buffer)
        return buffer
    }

    /// The system's real-time clock (`CLOCK_REALTIME`) in Unix epoch milliseconds: the default wall clock.
    public static func systemMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

/// Decides when wall-clock stamps go out: the first when the stream starts, then one per `interval` of
/// stream time. After a stall the next one goes out at once and the grid resumes, with no burst.
///
/// The caller reads its monotonic and wall clocks together once per tick and passes both in, so the
/// pair in a stamp describes one instant. Every tick's pair is kept as ``latest``: a client that joins
/// between stamps gets that one first (the GOP cache holds no stamps, see ``LiveChunk``).
public struct WallClockSchedule: Sendable {
    /// Time between stamps; at least 1 ms.
    public let interval: Duration
    /// When the next stamp is due, measured from the start of the stream.
    public private(set) var nextDue: Duration = .zero
    /// The pairing of the latest tick, whether or not it went out.
    public private(set) var latest: WallClockStamp?

    public init(interval: Duration) {
        self.interval = max(interval, .milliseconds(1))
    }

    /// Records this tick's pairing and returns it when a stamp is due at `elapsed`.
    public mutating func tick(at elapsed: Duration, streamMs: UInt32, wallClockMs: Int64) -> WallClockStamp? {
        let stamp = WallClockStamp(wallClockMs: wallClockMs, streamMs: streamMs)
        latest = stamp
        guard elapsed >= nextDue else { return nil }
        let missed = (elapsed - nextDue).nanoseconds / interval.nanoseconds
        nextDue += interval * (missed + 1)
        return stamp
    }
}
