import Foundation

/// Asks one running task to stop, with a reason, and lets it race its work against that: how a download is paused
/// or cancelled and a monitored stream stopped without waiting for a read to time out. The first reason given wins.
///
/// `@unchecked Sendable`: `stored` and `waiters` are read and written under `lock`.
public final class StopRequest<Reason: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Reason?
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init() {}

    /// Why the task was asked to stop, once it was.
    public var reason: Reason? { lock.withLock { stored } }

    public var isRequested: Bool { reason != nil }

    public func request(_ reason: Reason) {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            guard stored == nil else { return [] }
            stored = reason
            defer { waiters.removeAll() }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    /// `work`'s result, or `nil` when the stop came first (the work is cancelled then, and awaited).
    public func race<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T? {
        await withTaskGroup(of: T?.self) { group in
            group.addTask { await work() }
            group.addTask {
                await self.wait()
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Returns once a stop is requested, or when the waiting task is cancelled.
    public func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = lock.withLock { () -> Bool in
                    if stored != nil || Task.isCancelled { return true }
                    waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                defer { waiters.removeAll() }
                return waiters
            }
            for waiter in waiting { waiter.resume() }
        }
    }
}

extension StopRequest where Reason == Void {
    public func request() { request(()) }
}
