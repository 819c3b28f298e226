/// Decides what to do when a connection is lost, as TXLivePlayConfig's `connectRetryCount` and
/// `connectRetryInterval` describe: retry a fixed number of times at a fixed interval, then give up.
///
/// A value type that returns actions; the play loop does the waiting with its own clock (STYLE.md,
/// rule 2). Attempts count consecutive failures: a connection counts as a success, and the count starts again,
/// only once it has delivered ``stableMedia`` of media (10 s). A server that accepts and closes, one that sends a
/// GOP and closes, or one that trickles uses up the budget instead of being retried for ever.
public struct ReconnectPolicy: Sendable, Hashable {
    /// Attempts after a loss before giving up (TXLivePlayConfig default 3, range 1–10).
    public var retryCount: Int
    /// Wait before each attempt (TXLivePlayConfig default 3 s, range 3–30 s; liveplay allows shorter).
    public var retryInterval: Duration {
        get { backoff.initial }
        set { backoff = Backoff(fixed: newValue) }
    }
    /// TXLivePlayer's waits are all the same: a backoff that does not grow.
    private var backoff: Backoff
    /// Media time one connection must deliver before the count of failures starts again.
    public var stableMedia: Duration
    /// Consecutive failed connections since one delivered ``stableMedia``.
    public private(set) var failedAttempts = 0

    public init(retryCount: Int = 3, retryInterval: Duration = .seconds(3), stableMedia: Duration = .seconds(10)) {
        self.retryCount = retryCount
        backoff = Backoff(fixed: retryInterval)
        self.stableMedia = stableMedia
    }

    public enum Action: Sendable, Hashable {
        /// Wait `after`, then make attempt number `attempt` (1-based).
        case retry(attempt: Int, after: Duration)
        /// Every attempt failed: report the disconnect and stop.
        case giveUp(attempts: Int)
        /// Another of the playback's sources (``SourceRotation``; 0 the URL, 1… its backups) after `after`.
        case nextSource(Int, after: Duration)
    }

    /// The connection failed or was lost.
    public mutating func connectionLost() -> Action {
        guard failedAttempts < retryCount else { return .giveUp(attempts: failedAttempts) }
        failedAttempts += 1
        return .retry(attempt: failedAttempts, after: backoff.failed())
    }

    /// The connection has delivered `media` of media time so far: from ``stableMedia`` on, it was a success and
    /// the next loss starts counting from zero.
    public mutating func connectionDelivered(media: Duration) {
        if media >= stableMedia { failedAttempts = 0 }
    }

    /// Progress that counts whatever its amount (a download's response that continues the file): the next loss
    /// starts counting from zero.
    public mutating func mediaReceived() {
        failedAttempts = 0
    }
}

/// The wait before the next attempt of anything that retries (a reconnect, a preloaded stream, a monitored one):
/// `initial`, doubled after each failure up to `maximum`, and `initial` again after a success. Equal bounds: a fixed
/// interval. A value that returns waits; whoever retries waits on its own clock.
public struct Backoff: Sendable, Hashable {
    public let initial: Duration
    public let maximum: Duration
    /// The wait the next failure gets.
    public private(set) var next: Duration

    public init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = max(initial, maximum)
        next = initial
    }

    /// The same wait every time.
    public init(fixed interval: Duration) {
        self.init(initial: interval, maximum: interval)
    }

    /// An attempt failed: the wait before the next one; the one after is twice as long, up to ``maximum``.
    public mutating func failed() -> Duration {
        defer { next = min(next * 2, maximum) }
        return next
    }

    /// An attempt worked: the next failure waits ``initial`` again.
    public mutating func succeeded() {
        next = initial
    }
}
