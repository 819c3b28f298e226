import Foundation
import Synchronization

/// Asks one running task to stop, with a reason, and lets it race its work against that: how a download is paused
/// or cancelled and a monitored stream stopped without waiting for a read to time out. The first reason given wins.
///
public final class StopRequest<Reason: Sendable>: Sendable {
    private struct Request {
        var reason: Reason?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(Request())

    public init() {}

    /// Why the task was asked to stop, once it was.
    public var reason: Reason? { state.withLock { $0.reason } }

    public var isRequested: Bool { reason != nil }

    public func request(_ reason: Reason) {
        let waiting = state.withLock { request -> [CheckedContinuation<Void, Never>] in
            guard request.reason == nil else { return [] }
            request.reason = reason
            defer { request.waiters.removeAll() }
            return request.waiters
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
                let now = state.withLock {
                    if $0.reason != nil || Task.isCancelled { return true }
                    $0.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiting = state.withLock { request in
                defer { request.waiters.removeAll() }
                return request.waiters
            }
            for waiter in waiting { waiter.resume() }
        }
    }
}

extension StopRequest where Reason == Void {
    public func request() { request(()) }
}
