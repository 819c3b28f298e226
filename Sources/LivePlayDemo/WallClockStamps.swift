import LivePlayCore
import Foundation
public import LivePlayFLV
import NIOCore

extension WallClockStamp {
    /// The whole FLV tag (type 18, timestamp `streamMs`) with its PreviousTagSize.
    func tag(allocator: ByteBufferAllocator) -> ByteBuffer {
        let body = ByteBuffer(bytes: body)
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
