import Foundation

/// A value behind a lock, for the little state shared between event loops and callers (the lab's too).
///
/// `@unchecked Sendable`: the value is read and written only under `lock`.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
