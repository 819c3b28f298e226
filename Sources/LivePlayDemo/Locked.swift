import Synchronization

/// A value behind a `Mutex`, for the little state shared between event loops and callers (the lab's too): a class,
/// so the servers' handlers can share one.
package final class Locked<Value>: Sendable {
    private let mutex: Mutex<Value>

    package init(_ value: sending Value) {
        mutex = Mutex(value)
    }

    package func withLock<Result: Sendable>(_ body: (inout sending Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { try body(&$0) }
    }
}
