/// What a preloaded stream (``PreloadPool``) may hold and read while it waits to be shown.
public struct PreloadBudget: Sendable, Hashable {
    /// What a preloaded stream does once its first GOP is in.
    public enum Reading: String, Sendable, Hashable, CaseIterable {
        /// Keeps reading and drops each GOP as a newer one arrives: the poster stays current and a switch starts
        /// at the live edge; it costs the stream's bitrate.
        case newestGroup = "newest-gop"
        /// Stops reading once its first keyframe is in (TCP backpressure): nothing more is received until a player
        /// switches to it, which then reads the backlog the connection held and skips it to the newest keyframe.
        case pauseAfterFirstGroup = "pause"
    }

    public var reading: Reading
    /// The most one preloaded stream buffers; reading waits while it holds this much.
    public var bytesPerStream: Int
    /// The most all of a pool's streams buffer together: each gets at most its share.
    public var totalBytes: Int

    public init(reading: Reading = .newestGroup, bytesPerStream: Int = 4 << 20, totalBytes: Int = 32 << 20) {
        self.reading = reading
        self.bytesPerStream = bytesPerStream
        self.totalBytes = totalBytes
    }

    /// One stream's budget when `streams` share the pool.
    func share(among streams: Int) -> PreloadBudget {
        var share = self
        share.bytesPerStream = min(bytesPerStream, totalBytes / max(1, streams))
        return share
    }
}
