import Foundation
import Synchronization

/// Hands updates from the play loop to the listener through a bounded queue, so the loop never waits for
/// a listener. Deliveries run one at a time on a ``PlaybackThread`` the playback takes for its listener (from the
/// idle threads, or its ``PlaybackThreadGroup``), never on the play loop's. When the queue is full, the oldest net
/// status or state (a later one tells the same) is dropped first, then the oldest events, and the count is reported in
/// a `LIVEPLAY_EVT_LISTENER_OVERFLOW` event once the listener catches up.
final class UpdateDelivery: Sendable {
    static let capacity = 512

    private struct Queue {
        var updates: [PlayerUpdate] = []
        /// The last batch delivered, emptied: the next batch's storage, so a drain allocates no array.
        var spare: [PlayerUpdate] = []
        var dropped = 0
        var draining = false
    }

    private let queue = Mutex(Queue())
    private let thread: PlaybackThread
    private let deliver: @Sendable (PlayerUpdate) -> Void

    /// - Parameter thread: where the listener is called; the caller gives it back after ``finish()``.
    init(on thread: PlaybackThread, deliver: @escaping @Sendable (PlayerUpdate) -> Void) {
        self.thread = thread
        self.deliver = deliver
    }

    /// Never blocks.
    func post(_ update: PlayerUpdate) {
        let start = queue.withLock { queue in
            if queue.updates.count >= Self.capacity {
                let victim = queue.updates.firstIndex { if case .event = $0 { false } else { true } } ?? 0
                queue.updates.remove(at: victim)
                queue.dropped += 1
            }
            queue.updates.append(update)
            guard !queue.draining else { return false }
            queue.draining = true
            return true
        }
        if start { _ = thread.schedule(after: .zero) { [self] in drain() } }
    }

    /// Returns when everything posted so far has been delivered. The thread runs what it is given in order, so
    /// this runs after any drain already asked for.
    func finish() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            _ = thread.schedule(after: .zero) { [self] in
                drain()
                continuation.resume()
            }
        }
    }

    private func drain() {
        while true {
            // Bound straight to a `var`: a second binding would hold the batch too, and emptying it would copy.
            guard
                var batch = queue.withLock({ queue -> [PlayerUpdate]? in
                    guard !queue.updates.isEmpty else {
                        queue.draining = false
                        return nil
                    }
                    var batch = queue.spare
                    swap(&batch, &queue.updates)
                    queue.spare = []
                    if queue.dropped > 0 {
                        let overflow = PlayEvent(
                            .listenerOverflow, "the listener fell behind; \(queue.dropped) updates were dropped",
                            elapsedMilliseconds: batch.lazy.compactMap(Self.elapsed).first ?? 0,
                            parameters: ["dropped_updates": .int(Int64(queue.dropped))])
                        batch.insert(.event(overflow), at: 0)
                        queue.dropped = 0
                    }
                    return batch
            })
            else { break }
            for update in batch { deliver(update) }
            batch.removeAll(keepingCapacity: true)
            queue.withLock { $0.spare = batch }
        }
    }

    private static func elapsed(_ update: PlayerUpdate) -> Int64? {
        switch update {
        case .event(let event): event.elapsedMilliseconds
        case .netStatus(let status): status.elapsedMilliseconds
        case .state: nil
        }
    }
}

/// Where a session's updates go: a pool while it preloads, then a player's delivery once switched to.
final class UpdateRoute: Sendable {
    private let destination = Mutex<@Sendable (PlayerUpdate) -> Void>({ _ in })

    func post(_ update: PlayerUpdate) {
        destination.withLock { $0 }(update)
    }

    func redirect(to destination: @escaping @Sendable (PlayerUpdate) -> Void) {
        self.destination.withLock { $0 = destination }
    }
}
