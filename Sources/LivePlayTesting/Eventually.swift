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
