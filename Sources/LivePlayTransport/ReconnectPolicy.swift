/// Decides what to do when a connection is lost, as TXLivePlayConfig's `connectRetryCount` and
/// `connectRetryInterval` describe: retry a fixed number of times at a fixed interval, then give up.
///
/// A value type that returns actions; the play loop does the waiting with its own clock (STYLE.md,
/// rule 2). Attempts count consecutive failures: a connection that delivers media resets the count.
public struct ReconnectPolicy: Sendable, Hashable {
    /// Attempts after a loss before giving up (TXLivePlayConfig default 3, range 1–10).
    public var retryCount: Int
    /// Wait before each attempt (TXLivePlayConfig default 3 s, range 3–30 s; liveplay allows shorter).
    public var retryInterval: Duration
    /// Consecutive failed connections since media last flowed.
    public private(set) var failedAttempts = 0

    public init(retryCount: Int = 3, retryInterval: Duration = .seconds(3)) {
        self.retryCount = retryCount
        self.retryInterval = retryInterval
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

    /// Media is flowing again: the next loss starts counting from zero.
    public mutating func mediaReceived() {
        failedAttempts = 0
    }
}
