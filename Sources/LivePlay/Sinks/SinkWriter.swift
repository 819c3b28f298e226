import Foundation
import LivePlayCore
import LivePlayTransport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension LivePlayError.Code {
    /// An output sink could not open or write its file (the message has the path and `strerror`).
    public static let outputFailed = LivePlayError.Code(rawValue: "output_failed")
    /// The reader of an output pipe went away (`EPIPE`): `liveplay … | head -c 1000` ends this way.
    public static let outputClosed = LivePlayError.Code(rawValue: "output_closed")
    /// An output sink's reader stopped reading and `finish` gave up waiting for it.
    public static let outputStalled = LivePlayError.Code(rawValue: "output_stalled")
    /// A sink was handed pictures or sound its file format cannot hold.
    public static let unsupportedOutputFormat = LivePlayError.Code(rawValue: "unsupported_output_format")
    /// A sink was configured with something it cannot use (a snapshot file pattern without a placeholder).
    public static let invalidOutput = LivePlayError.Code(rawValue: "invalid_output")
    /// A snapshot was asked for before any picture was presented.
    public static let noPicture = LivePlayError.Code(rawValue: "no_picture")
}

/// Where a file-writing sink puts its bytes.
public enum SinkOutput: Sendable, Hashable, CustomStringConvertible {
    /// The process's standard output (file descriptor 1), left open when the sink finishes.
    case standardOutput
    /// A file, created or truncated.
    case file(String)
    /// A descriptor the caller opened and closes (a pipe, a socket); the sink never closes it.
    case descriptor(Int32)

    /// The command-line convention: `-` is standard output, anything else a file path.
    public init(argument: String) {
        self = argument == "-" ? .standardOutput : .file(argument)
    }

    public var description: String {
        switch self {
        case .standardOutput: "standard output"
        case .file(let path): path
        case .descriptor(let descriptor): "file descriptor \(descriptor)"
        }
    }
}

/// How much a sink's writer queue holds before the play loop's newest item is dropped instead.
///
/// Both bounds apply; an item is always accepted into an empty queue, so one picture larger than `bytes`
/// is not dropped for ever.
public struct WriteQueueLimits: Sendable, Hashable {
    /// Items (frames, blocks of sound, snapshots) waiting to be written.
    public var items: Int
    /// Their payload bytes.
    public var bytes: Int

    public init(items: Int, bytes: Int) {
        self.items = max(1, items)
        self.bytes = max(1, bytes)
    }

    /// 32 frames or 64 MiB: about a second of 720p, two thirds of a second of 1080p (3 MiB a frame).
    public static let video = WriteQueueLimits(items: 32, bytes: 64 << 20)
    /// 256 blocks or 8 MiB: about six seconds of 44.1 kHz stereo in the player's 1024-sample blocks.
    public static let audio = WriteQueueLimits(items: 256, bytes: 8 << 20)
    /// 4 pictures or 64 MiB: periodic snapshots come seconds apart, so a backlog means a stuck disk.
    public static let snapshots = WriteQueueLimits(items: 4, bytes: 64 << 20)
}

/// What one call of a ``QueuedOutput`` did: items written to the output, or skipped because the format
/// cannot hold them.
struct WriteOutcome: Sendable {
    var written = 0
    var skipped = 0
}

/// The writer-thread half of a sink: everything it does may block on I/O. Its methods run only on the
/// ``SinkWriter``'s thread, one at a time, so it needs no lock of its own.
protocol QueuedOutput: AnyObject, SendableMetatype {
    associatedtype Item: Sendable

    /// Writes one item. `isAbandoned` turns true when ``SinkWriter/finish(timeout:)`` gives up; a write
    /// blocked on a stalled reader checks it and stops.
    func write(_ item: Item, isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome
    /// After the last item: writes what is still held, patches headers, closes.
    func close(isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome
    /// After an error or abandonment: releases the output without writing more.
    func abort()
    /// The pipe or socket the output writes to, watched while nothing is queued so that a reader who leaves is
    /// noticed without a write (`--captions-out - | head -1` before the first cue); nil (the default) for none.
    var watchedFile: OutputFile? { get }
}

extension QueuedOutput {
    var watchedFile: OutputFile? { nil }
}

/// The writer-thread half of a sink that writes each item as bytes of its own to one file (a JSON line of the
/// arrival trace, a WebVTT cue), in order, with nothing to patch at the end.
final class EncodedItemsOutput<Item: Sendable>: QueuedOutput {
    private let file: OutputFile
    private let encode: (Item) throws(LivePlayError) -> [UInt8]

    init(file: OutputFile, encode: @escaping (Item) throws(LivePlayError) -> [UInt8]) {
        self.file = file
        self.encode = encode
    }

    func write(_ item: Item, isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome {
        try file.append(try encode(item), isAbandoned: isAbandoned)
        return WriteOutcome(written: 1)
    }

    func close(isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome {
        try file.close()
        return WriteOutcome()
    }

    func abort() {
        file.abort()
    }

    var watchedFile: OutputFile? { file }
}

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
