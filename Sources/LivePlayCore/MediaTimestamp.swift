/// A media timestamp in milliseconds, the unit FLV and RTMP carry on the wire.
///
/// FLV stores 32 bits (24 + an 8-bit extension) that wrap after about 49.7 days; this type holds the
/// *unwrapped* value, so it stays monotonic across a wrap. ``Unwrapper`` turns wire values into it.
public struct MediaTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since the start of the stream's timeline (may be negative only after a signed offset).
    public var milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    public static let zero = MediaTimestamp(milliseconds: 0)

    public static func < (lhs: MediaTimestamp, rhs: MediaTimestamp) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    /// The media duration between two timestamps.
    public static func - (lhs: MediaTimestamp, rhs: MediaTimestamp) -> Duration {
        .milliseconds(lhs.milliseconds - rhs.milliseconds)
    }

    public static func + (lhs: MediaTimestamp, rhs: Int64) -> MediaTimestamp {
        MediaTimestamp(milliseconds: lhs.milliseconds + rhs)
    }

    public var description: String { "\(milliseconds)ms" }
}

extension MediaTimestamp {
    /// Extends 32-bit wire timestamps to a monotonic 64-bit timeline.
    ///
    /// A new value far below the previous one (more than half the 32-bit range) is taken as a wrap
    /// and moves to the next epoch; a value far above it right after a wrap is a late packet from the
    /// previous epoch. Small backward steps (B-frame reordering, jitter) stay in the current epoch.
    public struct Unwrapper: Sendable {
        private static let range: Int64 = 1 << 32
        private static let halfRange: Int64 = 1 << 31
        private var last: Int64?

        public init() {}

        public mutating func unwrap(_ wire: UInt32) -> MediaTimestamp {
            guard let last else {
                self.last = Int64(wire)
                return MediaTimestamp(milliseconds: Int64(wire))
            }
            let epochBase = last - (last & (Self.range - 1))
            var candidate = epochBase + Int64(wire)
            if candidate < last - Self.halfRange {
                candidate += Self.range
            } else if candidate > last + Self.halfRange, candidate >= Self.range {
                candidate -= Self.range
            }
            self.last = max(last, candidate)
            return MediaTimestamp(milliseconds: candidate)
        }
    }
}
