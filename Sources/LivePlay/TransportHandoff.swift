import Foundation

/// A bounded queue between the transport task and the play loop: the sender waits when it is full (bytes
/// keep their backpressure, nothing is dropped), and the play loop waits for an item *or* its next tick.
///
/// `@unchecked Sendable`: items, waiting senders and the doorbell are read and written under `lock`.
final class TransportHandoff<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private let capacity: Int
    private var items: [Element] = []
    private var senders: [CheckedContinuation<Void, Never>] = []
    private var doorbell: CheckedContinuation<Void, Never>?
    private var closed = false

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Queues `item`, waiting while the queue is full; returns `false` once closed.
    func send(_ item: Element) async -> Bool {
        while true {
            let ring: CheckedContinuation<Void, Never>?
            let accepted: Bool? = lock.withLock {
                if closed { return false }
                guard items.count < capacity else { return nil }
                items.append(item)
                return true
            }
            if let accepted {
                if accepted {
                    ring = lock.withLock {
                        defer { doorbell = nil }
                        return doorbell
                    }
                    ring?.resume()
                }
                return accepted
            }
            if Task.isCancelled { return false }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    // Checked under the lock the cancellation handler also takes, so a cancellation that
                    // arrives before this continuation is registered cannot be missed.
                    let resumeNow = lock.withLock {
                        if closed || items.count < capacity || Task.isCancelled { return true }
                        senders.append(continuation)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                self.wakeSenders()
            }
        }
    }

    /// Everything queued now (possibly nothing).
    func takeAll() -> [Element] {
        let (taken, waiting) = lock.withLock {
            defer {
                items.removeAll(keepingCapacity: true)
                senders.removeAll()
            }
            return (items, senders)
        }
        for sender in waiting { sender.resume() }
        return taken
    }

    /// The oldest item queued, if any: for a receiver that takes only what it has room for.
    func takeFirst() -> Element? {
        let (taken, waiting): (Element?, [CheckedContinuation<Void, Never>]) = lock.withLock {
            guard !items.isEmpty else { return (nil, []) }
            defer { senders.removeAll() }
            return (items.removeFirst(), senders)
        }
        for sender in waiting { sender.resume() }
        return taken
    }

    /// Waits until an item is queued or `sleep` returns (the caller's clock), whichever is first.
    func wait(sleeping sleep: @escaping @Sendable () async -> Void) async {
        guard lock.withLock({ items.isEmpty && !closed }) else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let resumeNow = self.lock.withLock {
                            if !self.items.isEmpty || self.closed || Task.isCancelled { return true }
                            self.doorbell = continuation
                            return false
                        }
                        if resumeNow { continuation.resume() }
                    }
                } onCancel: {
                    self.ringDoorbell()
                }
            }
            group.addTask { await sleep() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Waits until an item is queued or `deadline` passes on `timer` (the session's thread), whichever is first:
    /// one continuation, no tasks, for a loop that waits a hundred times a second.
    func wait(until deadline: ContinuousClock.Instant, timer: PlaybackThread) async {
        guard lock.withLock({ items.isEmpty && !closed }) else { return }
        var token: UInt64?
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = lock.withLock {
                    if !items.isEmpty || closed || Task.isCancelled { return true }
                    doorbell = continuation
                    return false
                }
                if resumeNow { return continuation.resume() }
                token = timer.schedule(at: deadline) { [weak self] in self?.ringDoorbell() }
            }
        } onCancel: {
            self.ringDoorbell()
        }
        // The timer calls back on this same thread, so it has either run or not started: cancelled, it cannot
        // ring a later wait's doorbell.
        if let token { timer.cancelTimer(token) }
    }

    /// Wakes the receiver waiting now, if any, as an item would (a control request that should not wait a tick).
    func wake() {
        ringDoorbell()
    }

    /// No more items are accepted; waiting senders and the waiting receiver wake.
    func close() {
        lock.withLock { closed = true }
        wakeSenders()
        ringDoorbell()
    }

    private func ringDoorbell() {
        let ring = lock.withLock {
            defer { doorbell = nil }
            return doorbell
        }
        ring?.resume()
    }

    private func wakeSenders() {
        let waiting = lock.withLock {
            defer { senders.removeAll() }
            return senders
        }
        for sender in waiting { sender.resume() }
    }
}
