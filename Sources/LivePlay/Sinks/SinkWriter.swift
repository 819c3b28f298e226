import Foundation
import LivePlayCore
import LivePlayTransport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A bounded hand-off from the play loop to one dedicated writer thread, so a sink never blocks the play
/// loop on I/O (STYLE.md rule 8); when the queue is full the newest item is dropped and counted.
///
/// The thread blocks `SIGPIPE` for itself: a write to a pipe whose reader left then fails with `EPIPE`,
/// which becomes the sink's ``LivePlayError/Code/outputClosed`` error, instead of the signal killing
/// the process (`SIGPIPE` from a write is sent to the writing thread, so the mask is enough).
///
/// `@unchecked Sendable`: the queue and its flags are read and written under `condition`; the output is touched only by
/// the writer thread.
final class SinkWriter<Output: QueuedOutput>: @unchecked Sendable {
    enum Submission: Equatable {
        case accepted
        /// The queue was full: the item was dropped and counted.
        case dropped
        /// The writer failed or is finishing: the item was ignored.
        case stopped
    }

    struct Counters: Sendable {
        var written = 0
        var skipped = 0
        var dropped = 0
    }

    let limits: WriteQueueLimits
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var queue: [(item: Output.Item, bytes: Int)] = []
    private var head = 0
    private var queuedBytes = 0
    private var isFinishing = false
    private var isAbandoned = false
    private var isExited = false
    private var counters = Counters()
    private var storedError: LivePlayError?
    /// Used only on the writer thread.
    private let output: Output

    /// Told once, on the writer thread, when a write fails or the reader of a pipe goes away: the caller can stop
    /// (an output that cannot be written is not something to play on for).
    private let onFailure: (@Sendable (LivePlayError) -> Void)?

    init(
        name: String, output: Output, limits: WriteQueueLimits,
        onFailure: (@Sendable (LivePlayError) -> Void)? = nil
    ) {
        self.output = output
        self.limits = limits
        self.onFailure = onFailure
        let thread = Thread { [self] in
            nameCurrentThread(name)
            run()
        }
        thread.start()
    }

    /// Play loop: queues `item` (whose payload is `bytes`) without ever waiting.
    func submit(_ item: Output.Item, bytes: Int) -> Submission {
        condition.withLock {
            guard storedError == nil, !isFinishing else { return .stopped }
            let waiting = queue.count - head
            if waiting > 0, waiting >= limits.items || queuedBytes + bytes > limits.bytes {
                counters.dropped += 1
                return .dropped
            }
            queue.append((item, bytes))
            queuedBytes += bytes
            condition.signal()
            return .accepted
        }
    }

    var snapshot: Counters { condition.withLock { counters } }

    /// The error that stopped the writer, if any.
    var error: LivePlayError? { condition.withLock { storedError } }

    /// Stops taking items and lets the thread write what is queued and close the output, without waiting.
    func stopTaking() {
        condition.withLock {
            isFinishing = true
            condition.broadcast()
        }
    }

    /// Whether the thread has closed the output (or given up on it) and exited.
    var isFinished: Bool { condition.withLock { isExited } }

    /// Stops taking items, lets the thread write what is queued and close the output, and waits for it.
    ///
    /// After `timeout` the rest is abandoned (counted as dropped) and the error is
    /// ``LivePlayError/Code/outputStalled``; the thread notices within 100 ms even while a reader is
    /// stalled. Calling it again returns the same result at once.
    func finish(timeout: Duration) -> LivePlayError? {
        condition.lock()
        defer { condition.unlock() }
        isFinishing = true
        condition.broadcast()
        let deadline = Date(timeIntervalSinceNow: timeout.seconds)
        while !isExited, condition.wait(until: deadline) {}
        if !isExited {
            isAbandoned = true
            if storedError == nil {
                storedError = LivePlayError(
                    .outputStalled,
                    "the output was not drained within \(timeout); \(queue.count - head) items abandoned")
            }
            condition.broadcast()
            while !isExited { condition.wait() }
        }
        return storedError
    }

    private func run() {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        let isAbandoned = { [self] in condition.withLock { self.isAbandoned } }
        var failed = false
        while let item = next() {
            do {
                record(try output.write(item, isAbandoned: isAbandoned))
            } catch {
                fail(error)
                failed = true
                // An item cut off by abandonment is one more dropped; after a real error counts stop mattering.
                if isAbandoned() { condition.withLock { counters.dropped += 1 } }
                break
            }
        }
        if !failed, !isAbandoned() {
            do {
                record(try output.close(isAbandoned: isAbandoned))
            } catch {
                fail(error)
                failed = true
            }
        }
        if failed || isAbandoned() { output.abort() }
        condition.withLock {
            if self.isAbandoned { counters.dropped += queue.count - head }
            queue.removeAll()
            head = 0
            queuedBytes = 0
            isExited = true
            condition.broadcast()
        }
    }

    /// The next item to write, waiting for one; `nil` once finishing with nothing left, or on an error.
    /// How often an idle writer looks whether the reader of its pipe has gone.
    private static var readerCheckInterval: TimeInterval { 0.2 }

    private func next() -> Output.Item? {
        let watched = output.watchedFile.flatMap { $0.isRegularFile ? nil : $0 }
        while true {
            let waited: Output.Item?? = condition.withLock {
                if head == queue.count, !isFinishing, storedError == nil {
                    if watched == nil {
                        condition.wait()
                    } else {
                        _ = condition.wait(until: Date(timeIntervalSinceNow: Self.readerCheckInterval))
                    }
                    if head == queue.count, !isFinishing, storedError == nil { return .none }
                }
                guard head < queue.count, storedError == nil, !isAbandoned else { return .some(nil) }
                let (item, bytes) = queue[head]
                head += 1
                queuedBytes -= bytes
                if head == queue.count || head >= 64 {
                    queue.removeFirst(head)
                    head = 0
                }
                return .some(item)
            }
            if let waited { return waited }
            // Nothing queued: a reader that left is seen now, not at the next write (which may never come).
            if let watched, watched.readerIsGone {
                fail(LivePlayError(.outputClosed, "the reader of \(watched.name) went away"))
                return nil
            }
        }
    }

    private func record(_ outcome: WriteOutcome) {
        condition.withLock {
            counters.written += outcome.written
            counters.skipped += outcome.skipped
        }
    }

    private func fail(_ error: LivePlayError) {
        let first = condition.withLock {
            defer { condition.broadcast() }
            guard storedError == nil else { return false }
            storedError = error
            return true
        }
        if first { onFailure?(error) }
    }
}
