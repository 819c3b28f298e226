/// Asks one running task to stop, with a reason, and lets it race its work against that: how a download is paused
/// or cancelled and a monitored stream stopped without waiting for a read to time out. The first reason given wins.
public final class StopRequest<Reason: Sendable>: Sendable {
    private let latch = Latch<Reason>()

    public init() {}

    /// Why the task was asked to stop, once it was.
    public var reason: Reason? { latch.value }

    public var isRequested: Bool { reason != nil }

    public func request(_ reason: Reason) {
        latch.set(reason)
    }

    /// `work`'s result, or `nil` when the stop came first (the work is cancelled then, and awaited).
    public func race<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T? {
        let (value, stoppedFirst) = await runUntilStopped(work)
        return stoppedFirst ? nil : value
    }

    /// `work`'s result; a stop requested before it ends cancels it, and what it returns then is the result (a
    /// playback stopped reports `.stopped`).
    public func cancelling<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T {
        await runUntilStopped(work).value
    }

    private func runUntilStopped<T: Sendable>(
        _ work: @escaping @Sendable () async -> T
    ) async -> (value: T, stoppedFirst: Bool) {
        await withTaskGroup(of: T?.self) { group in
            group.addTask { await work() }
            group.addTask {
                await self.wait()
                return nil
            }
            var (value, stoppedFirst) = (T?.none, false)
            while let next = await group.next() {
                if let next { value = next } else if value == nil { stoppedFirst = true }
                group.cancelAll()
            }
            // Both children have ended, so the work has returned.
            return (value!, stoppedFirst)
        }
    }

    /// Returns once a stop is requested, or when the waiting task is cancelled.
    public func wait() async {
        await latch.wait()
    }
}

extension StopRequest where Reason == Void {
    public func request() { request(()) }
}
