import Foundation

/// The last thing a connection reports.
enum ConnectionEnd: Sendable, Hashable {
    /// The stream finished by design: `next()` returns `nil`.
    case finished
    case failed(TransportError)
}

/// A small bounded queue from the connection's own thread to the one async consumer.
///
/// The producer blocks while the queue is full, so a slow consumer slows the reading (and, through TCP,
/// the server) instead of bytes being dropped or piling up (STYLE.md rule 8). Consecutive byte chunks, and
/// consecutive tags, are coalesced while they wait.
///
/// `@unchecked Sendable`: items, the end and the waiter are read and written under `condition`.
final class ByteHandoff: @unchecked Sendable {
    enum Item: Sendable {
        case event(TransportEvent)
        case end(ConnectionEnd)
    }

    /// Queued bytes above which the producer waits.
    let capacity: Int
    private let condition = NSCondition()
    // All below guarded by `condition`.
    private var items: [TransportEvent] = []
    private var queuedBytes = 0
    private var end: ConnectionEnd?
    private var isClosed = false
    private var waiter: UnsafeContinuation<Item, Never>?

    init(capacity: Int = 1 << 20) {
        self.capacity = capacity
    }

    /// Producer: queues an event, waiting while the queue is full.
    ///
    /// - Parameter onWait: called (without the lock) before and after a wait, with `true` and `false`.
    /// - Returns: `false` if the consumer went away; the producer should stop.
    func send(_ event: TransportEvent, onWait: (Bool) -> Void = { _ in }) -> Bool {
        condition.lock()
        var waited = false
        while !isClosed, !items.isEmpty, queuedBytes >= capacity || items.count >= 64 {
            if !waited {
                waited = true
                condition.unlock()
                onWait(true)
                condition.lock()
                continue
            }
            condition.wait()
        }
        guard !isClosed else {
            condition.unlock()
            if waited { onWait(false) }
            return false
        }
        if let waiter {
            self.waiter = nil
            condition.unlock()
            if waited { onWait(false) }
            waiter.resume(returning: .event(event))
            return true
        }
        switch (event, items.last) {
        case (.bytes(let new), .bytes(let last)?) where last.count < 64 << 10:
            items[items.count - 1] = .bytes(last + new)
        case (.tags(let new), .tags(let last)?) where last.count < 256:
            items[items.count - 1] = .tags(last + new)
        default:
            items.append(event)
        }
        queuedBytes += event.mediaByteCount
        condition.unlock()
        if waited { onWait(false) }
        return true
    }

    /// Producer: the final report; never waits.
    func finish(_ end: ConnectionEnd) {
        condition.lock()
        if self.end == nil { self.end = end }
        let waiter = items.isEmpty ? self.waiter : nil
        if waiter != nil { self.waiter = nil }
        condition.unlock()
        waiter?.resume(returning: .end(end))
    }

    /// Consumer: the next event, or the end once everything before it was taken.
    func receive() async -> Item {
        await withUnsafeContinuation { continuation in
            condition.lock()
            if let item = takeLocked() {
                condition.unlock()
                continuation.resume(returning: item)
            } else if waiter != nil {
                condition.unlock()
                continuation.resume(
                    returning: .end(.failed(TransportError(.readFailed, "next() called again while one was pending"))))
            } else {
                waiter = continuation
                condition.unlock()
            }
        }
    }

    /// Consumer gone (close, cancellation): wakes the producer and any pending ``receive()`` with `end`.
    func close(reporting end: ConnectionEnd) {
        condition.lock()
        isClosed = true
        items.removeAll()
        queuedBytes = 0
        if self.end == nil { self.end = end }
        let waiter = self.waiter
        self.waiter = nil
        condition.broadcast()
        condition.unlock()
        waiter?.resume(returning: .end(end))
    }

    private func takeLocked() -> Item? {
        if !items.isEmpty {
            let event = items.removeFirst()
            queuedBytes -= event.mediaByteCount
            condition.broadcast()
            return .event(event)
        }
        if let end { return .end(end) }
        return nil
    }
}
