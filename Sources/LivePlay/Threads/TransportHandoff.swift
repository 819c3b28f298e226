import Foundation
import LivePlayTransport
import Synchronization

/// A bounded queue between the transport task and the play loop: the sender waits when it is full (bytes
/// keep their backpressure, nothing is dropped), and the play loop waits for an item *or* the next thing due.
///
/// Its waits use unsafe continuations, as the session's thread and the HTTP and RTMP hand-offs do: a checked one
/// allocates on every wait, and the loop waits dozens of times a second. Each is resumed exactly once: whoever
/// takes it from under the `Mutex` (the doorbell, a sender's slot) resumes it.
final class TransportHandoff<Element: Sendable>: Sendable {
    private struct Queue {
        var items: [Element] = []
        var senders: [UnsafeContinuation<Void, Never>] = []
        var doorbell: UnsafeContinuation<Void, Never>?
        var closed = false
        /// The play loop's track choices, for the transport to take before it demuxes its next read.
        var trackRequests: [TrackSelection] = []
    }

    private let queue = Mutex(Queue())
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Queues `item`, waiting while the queue is full; returns `false` once closed.
    func send(_ item: Element) async -> Bool {
        while true {
            let ring: UnsafeContinuation<Void, Never>?
            let accepted: Bool? = queue.withLock { [capacity] queue in
                if queue.closed { return false }
                guard queue.items.count < capacity else { return nil }
                queue.items.append(item)
                return true
            }
            if let accepted {
                if accepted {
                    ring = queue.withLock { queue in
                        defer { queue.doorbell = nil }
                        return queue.doorbell
                    }
                    ring?.resume()
                }
                return accepted
            }
            if Task.isCancelled { return false }
            await withTaskCancellationHandler {
                await withUnsafeContinuation { continuation in
                    // Checked under the lock the cancellation handler also takes, so a cancellation that
                    // arrives before this continuation is registered cannot be missed.
                    let resumeNow = queue.withLock { [capacity] queue in
                        if queue.closed || queue.items.count < capacity || Task.isCancelled { return true }
                        queue.senders.append(continuation)
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
        let (taken, waiting) = queue.withLock { queue in
            defer {
                queue.items.removeAll(keepingCapacity: true)
                queue.senders.removeAll()
            }
            return (queue.items, queue.senders)
        }
        for sender in waiting { sender.resume() }
        return taken
    }

    /// The oldest item queued, if any: for a receiver that takes only what it has room for.
    func takeFirst() -> Element? {
        let (taken, waiting): (Element?, [UnsafeContinuation<Void, Never>]) = queue.withLock { queue in
            guard !queue.items.isEmpty else { return (nil, []) }
            defer { queue.senders.removeAll() }
            return (queue.items.removeFirst(), queue.senders)
        }
        for sender in waiting { sender.resume() }
        return taken
    }

    /// Waits until an item is queued or `sleep` returns (the caller's clock), whichever is first.
    func wait(sleeping sleep: @escaping @Sendable () async -> Void) async {
        guard queue.withLock({ $0.items.isEmpty && !$0.closed }) else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withUnsafeContinuation { continuation in
                        let resumeNow = self.queue.withLock {
                            if !$0.items.isEmpty || $0.closed || Task.isCancelled { return true }
                            $0.doorbell = continuation
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
        guard queue.withLock({ $0.items.isEmpty && !$0.closed }) else { return }
        var token: UInt64?
        await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                let resumeNow = queue.withLock {
                    if !$0.items.isEmpty || $0.closed || Task.isCancelled { return true }
                    $0.doorbell = continuation
                    return false
                }
                if resumeNow { return continuation.resume() }
                token = timer.schedule(at: deadline) { self.ringDoorbell() }
            }
        } onCancel: {
            self.ringDoorbell()
        }
        // The timer calls back on this same thread, so it has either run or not started: cancelled, it cannot
        // ring a later wait's doorbell.
        if let token { timer.cancelTimer(token) }
    }

    /// Hands a track choice back to the transport (the one thing that flows that way): taken with
    /// ``takeTrackRequests()`` before the transport demuxes its next read.
    func request(_ selection: TrackSelection) {
        queue.withLock { $0.trackRequests.append(selection) }
    }

    func takeTrackRequests() -> [TrackSelection] {
        queue.withLock { queue in
            guard !queue.trackRequests.isEmpty else { return [] }
            defer { queue.trackRequests.removeAll() }
            return queue.trackRequests
        }
    }

    /// Who waits now: the senders held by a full queue, and whether the receiver waits (what a test of the waits
    /// observes instead of sleeping).
    var waiting: (senders: Int, receiver: Bool) {
        queue.withLock { ($0.senders.count, $0.doorbell != nil) }
    }

    /// Wakes the receiver waiting now, if any, as an item would (a control request, which should not wait for the media).
    func wake() {
        ringDoorbell()
    }

    /// No more items are accepted; waiting senders and the waiting receiver wake.
    func close() {
        queue.withLock { $0.closed = true }
        wakeSenders()
        ringDoorbell()
    }

    private func ringDoorbell() {
        let ring = queue.withLock { queue in
            defer { queue.doorbell = nil }
            return queue.doorbell
        }
        ring?.resume()
    }

    private func wakeSenders() {
        let waiting = queue.withLock { queue in
            defer { queue.senders.removeAll() }
            return queue.senders
        }
        for sender in waiting { sender.resume() }
    }
}
