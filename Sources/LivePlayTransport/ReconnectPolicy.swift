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
    public var retryInterval: Duration
    /// Media time one connection must deliver before the count of failures starts again.
    public var stableMedia: Duration
    /// Consecutive failed connections since one delivered ``stableMedia``.
    public private(set) var failedAttempts = 0

    public init(retryCount: Int = 3, retryInterval: Duration = .seconds(3), stableMedia: Duration = .seconds(10)) {
        self.retryCount = retryCount
        self.retryInterval = retryInterval
        self.stableMedia = stableMedia
    }

    public enum Action: Sendable, Hashable {
        /// Wait `after`, then make attempt number `attempt` (1-based).
        case retry(attempt: Int, after: Duration)
        /// Every attempt failed: report the disconnect and stop.
        case giveUp(attempts: Int)
    }

    /// The connection failed or was lost.
    public mutating func connectionLost() -> Action {
        guard failedAttempts < retryCount else { return .giveUp(attempts: failedAttempts) }
        failedAttempts += 1
        return .retry(attempt: failedAttempts, after: retryInterval)
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
