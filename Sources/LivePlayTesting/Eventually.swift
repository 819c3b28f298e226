/// Waits until `condition` holds, or `timeout` passes; returns whether it held. The one place a test waits on
/// something it cannot be told about (a sink's pictures, a pool's status, a file's contents): it looks every 10 ms,
/// so the test waits as long as the behaviour takes and no longer, instead of a fixed sleep that is too short on a
/// loaded machine and too long everywhere else.
public func eventually(
    within timeout: Duration = .seconds(10), _ condition: () throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// A bound on a test step ran out.
public struct DeadlinePassed: Error, CustomStringConvertible {
    public var limit: Duration
    public init(limit: Duration) { self.limit = limit }
    public var description: String { "no result within \(limit)" }
}

/// Runs `body` with a deadline; past it the body's task is cancelled (which stops its connection) and
/// ``DeadlinePassed`` is thrown.
public func withDeadline<T: Sendable>(
    _ limit: Duration, _ body: @Sendable @escaping () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            // Not a wait for a condition: the deadline racing `body`, which ends the group first when it returns.
            try await Task.sleep(for: limit)
            throw DeadlinePassed(limit: limit)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
