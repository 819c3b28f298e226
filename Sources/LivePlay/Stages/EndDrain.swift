import LivePlayCore

/// The play-out of a stream's end, once the engine ran dry: the last pictures (reordered past the last decode time)
/// and sound are shown at their times on a clock of their own, from where the engine stopped, then playback ends.
struct EndDrain {
    /// The longest an end is played out for.
    static let longest: Duration = .seconds(2)
    /// When the engine ran dry, on the session clock.
    let since: Duration
    /// Where the engine stopped.
    let from: MediaTimestamp

    /// The media position at `now`, moving at 1.0× from where the engine stopped.
    func position(at now: Duration) -> MediaTimestamp {
        from + (now - since).milliseconds
    }

    /// Played out: no picture left to show, or the end has run its longest.
    func isOver(at now: Duration, queuedPictures: Int) -> Bool {
        queuedPictures == 0 || now - since > Self.longest
    }
}
