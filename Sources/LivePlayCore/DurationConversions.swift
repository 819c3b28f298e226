extension Duration {
    /// Whole milliseconds, rounded toward zero.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Whole nanoseconds, rounded toward zero.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// Seconds as a `Double`.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension MediaTimestamp {
    /// The timestamp `rhs` earlier, in whole milliseconds.
    public static func - (lhs: MediaTimestamp, rhs: Duration) -> MediaTimestamp {
        MediaTimestamp(milliseconds: lhs.milliseconds - rhs.milliseconds)
    }

    /// The timestamp `rhs` later, in whole milliseconds.
    public static func + (lhs: MediaTimestamp, rhs: Duration) -> MediaTimestamp {
        MediaTimestamp(milliseconds: lhs.milliseconds + rhs.milliseconds)
    }
}
