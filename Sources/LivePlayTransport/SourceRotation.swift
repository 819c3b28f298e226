/// Which of a playback's sources it reads: the URL, then its backups (``ConnectionSupervisor``), each with a reconnect
/// budget of its own (``ReconnectPolicy``). A value that returns actions; the supervisor waits and connects.
///
/// A source that refuses the connection, answers with an HTTP error status, or ends a live stream has failed for
/// now: the next source is tried at once. Any other loss (a reset, silence, a handshake that never finishes) is
/// retried on the same source as TXLivePlayer's policy says, and the next source is tried once that source's budget
/// is spent. Every failure spends one attempt of its source's budget; a source whose budget is spent is passed over,
/// and once every source's is, playback gives up (−2301), each having had its retries. A source that delivers
/// ``ReconnectPolicy/stableMedia`` gives every source its budget back. With one source this is ``ReconnectPolicy``.
public struct SourceRotation: Sendable, Hashable {
    /// The source read now: 0 is the URL, 1… its backups in order.
    public private(set) var current = 0
    private var policies: [ReconnectPolicy]
    /// Sources whose budget is spent.
    private var spent: Set<Int> = []
    private let fresh: ReconnectPolicy

    public init(policy: ReconnectPolicy, sources: Int) {
        fresh = policy
        policies = Array(repeating: policy, count: max(1, sources))
    }

    public var count: Int { policies.count }

    /// Failures that end a source's turn at once: what another try of the same source would meet again.
    public static func endsTurn(_ error: TransportError) -> Bool {
        error.code == .connectFailed || error.code == .httpStatus || error.code == .notFound
    }

    /// The source read now was lost with `error` (`ended`: it finished a live stream); what to do.
    public mutating func connectionLost(_ error: TransportError, ended: Bool = false) -> ReconnectPolicy.Action {
        let action = policies[current].connectionLost()
        if case .giveUp = action { spent.insert(current) }
        guard count > 1 else { return action }
        if case .retry = action, !ended, !Self.endsTurn(error) { return action }
        // This source's turn is over: the next one with budget left, after it in order and round again.
        for step in 1..<count {
            let candidate = (current + step) % count
            guard !spent.contains(candidate) else { continue }
            // A source not tried since it last played is tried at once; one that failed before waits the interval.
            let delay = policies[candidate].failedAttempts == 0 ? Duration.zero : policies[candidate].retryInterval
            current = candidate
            return .nextSource(candidate, after: delay)
        }
        // No other source is left: this one's own retries, if it has any.
        if case .retry = action { return action }
        return .giveUp(attempts: policies.reduce(0) { $0 + $1.failedAttempts })
    }

    /// Playback moved back to the first source, which answered a probe (``SupervisorEvent/firstSourceBack``): a
    /// planned move, outside every budget.
    public mutating func backToFirst() {
        current = 0
    }

    /// The source read now has delivered `media` of media time on this connection: from
    /// ``ReconnectPolicy/stableMedia`` on it is playing, and every source has its budget back.
    public mutating func connectionDelivered(media: Duration) {
        guard media >= fresh.stableMedia else { return }
        if spent.isEmpty, policies.allSatisfy({ $0.failedAttempts == 0 }) { return }
        policies = Array(repeating: fresh, count: policies.count)
        spent = []
    }
}
