import Synchronization

/// A value set once and awaited by any number of tasks: the first value given wins, later ones are ignored. How a
/// stop is asked for (``StopRequest``) and how a task a player owns says how it ended.
public final class Latch<Value: Sendable>: Sendable {
    private struct Settled {
        var value: Value?
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(Settled())

    public init() {}

    /// The value, once it is set.
    public var value: Value? { state.withLock { $0.value } }

    /// Tasks waiting now.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Sets the value, unless it is set already; wakes every waiter.
    public func set(_ value: Value) {
        let waiting = state.withLock { settled -> [CheckedContinuation<Void, Never>] in
            guard settled.value == nil else { return [] }
            settled.value = value
            defer { settled.waiters.removeAll() }
            return Array(settled.waiters.values)
        }
        for waiter in waiting { waiter.resume() }
    }

    /// The value, once it is set. A cancelled task waits on too, as `Task.value` does.
    public var settled: Value {
        get async {
            await waitForValue(id: newWaiter())
            return state.withLock { $0.value! }
        }
    }

    /// Returns once the value is set, or when the waiting task is cancelled.
    public func wait() async {
        let id = newWaiter()
        await withTaskCancellationHandler {
            await waitForValue(id: id, unlessCancelled: true)
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    private func newWaiter() -> Int {
        state.withLock { settled in
            settled.nextWaiter += 1
            return settled.nextWaiter
        }
    }

    private func waitForValue(id: Int, unlessCancelled: Bool = false) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock {
                if $0.value != nil || (unlessCancelled && Task.isCancelled) { return true }
                $0.waiters[id] = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}
