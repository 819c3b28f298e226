import Foundation

/// Hands updates from the play loop to the listener through a bounded queue, so the loop never waits for
/// a listener. Deliveries run one at a time on a serial dispatch queue (no thread of its own: hundreds of
/// players share the system's pool). When the queue is full, net status is dropped first, then the oldest
/// events, and the count is reported in a `LIVEPLAY_EVT_LISTENER_OVERFLOW` event once the listener catches up.
///
/// `@unchecked Sendable`: the queue and its counters are read and written under `lock`; callbacks run on one serial
/// queue.
final class UpdateDelivery: @unchecked Sendable {
    static let capacity = 512

    private let lock = NSLock()
    private var queue: [PlayerUpdate] = []
    private var dropped = 0
    private var draining = false
    private let finished = DispatchGroup()
    private let dispatch = DispatchQueue(label: "liveplay.listener")
    private let deliver: @Sendable (PlayerUpdate) -> Void

    init(deliver: @escaping @Sendable (PlayerUpdate) -> Void) {
        self.deliver = deliver
    }

    /// Never blocks.
    func post(_ update: PlayerUpdate) {
        let start: Bool = lock.withLock {
            if queue.count >= Self.capacity {
                let victim = queue.firstIndex { if case .netStatus = $0 { true } else { false } } ?? 0
                queue.remove(at: victim)
                dropped += 1
            }
            queue.append(update)
            guard !draining else { return false }
            draining = true
            finished.enter()
            return true
        }
        if start { dispatch.async { [self] in drain() } }
    }

    /// Returns when everything posted so far has been delivered.
    func finish() {
        finished.wait()
    }

    private func drain() {
        while true {
            let batch: [PlayerUpdate]? = lock.withLock {
                guard !queue.isEmpty else {
                    draining = false
                    return nil
                }
                var batch = queue
                queue.removeAll(keepingCapacity: true)
                if dropped > 0 {
                    let overflow = PlayEvent(
                        .listenerOverflow, "the listener fell behind; \(dropped) updates were dropped",
                        elapsedMilliseconds: batch.first.map(Self.elapsed) ?? 0,
                        parameters: ["dropped_updates": .int(Int64(dropped))])
                    batch.insert(.event(overflow), at: 0)
                    dropped = 0
                }
                return batch
            }
            guard let batch else { break }
            for update in batch { deliver(update) }
        }
        finished.leave()
    }

    private static func elapsed(_ update: PlayerUpdate) -> Int64 {
        switch update {
        case .event(let event): event.elapsedMilliseconds
        case .netStatus(let status): status.elapsedMilliseconds
        }
    }
}

/// Where a session's updates go: a pool while it preloads, then a player's delivery once switched to.
///
/// `@unchecked Sendable`: the destination is read and written under `lock`.
final class UpdateRoute: @unchecked Sendable {
    private let lock = NSLock()
    private var destination: @Sendable (PlayerUpdate) -> Void = { _ in }

    func post(_ update: PlayerUpdate) {
        lock.withLock { destination }(update)
    }

    func redirect(to destination: @escaping @Sendable (PlayerUpdate) -> Void) {
        lock.withLock { self.destination = destination }
    }
}
