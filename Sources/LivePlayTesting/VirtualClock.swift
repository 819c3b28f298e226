import Foundation
public import LivePlay

/// A clock for driving a whole ``LiveSession`` in virtual time: when the play loop sleeps between ticks,
/// time jumps forward at once, and sources waiting for a virtual instant (``wait(until:)``) are woken as
/// time passes them. A session of minutes runs in a moment, with the same figures every run.
///
/// `@unchecked Sendable`: time, waiters and participants are read and written under `lock`.
public final class VirtualClock: Clock, @unchecked Sendable {
    public struct Instant: InstantProtocol, Sendable {
        public var offset: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var waiters: [(id: UUID, deadline: Instant, continuation: CheckedContinuation<Void, Never>)] = []
    /// Tasks that feed the session and wait on this clock (``join()``).
    private var participants = 0

    public init() {}

    public var now: Instant { lock.withLock { current } }
    public var minimumResolution: Duration { .milliseconds(1) }

    /// Counts one more task that feeds the session and waits on this clock (a source's connection): time
    /// moves only while every participant is waiting in ``wait(until:)``, so how busy the machine is cannot
    /// let time run ahead of a source that has not been scheduled yet.
    public func join() {
        lock.withLock { participants += 1 }
    }

    /// The play loop's sleep: once every participant waits, time moves to `deadline`, waking every waiter it
    /// passes, and the sleep returns when they wait again — what became due has been handed over, as it would
    /// have been long before the next tick in real time.
    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        await settle()
        advance(to: deadline)
        await settle()
    }

    /// Moves time on to `deadline` at once, waking the waiters it passes: for a driver that steps time itself
    /// (the latency-mode simulator), not a play loop that sleeps.
    public func advance(to deadline: Instant) {
        let woken: [CheckedContinuation<Void, Never>] = lock.withLock {
            current = max(current, deadline)
            let due = waiters.filter { $0.deadline <= current }
            waiters.removeAll { $0.deadline <= current }
            return due.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Yields until every participant waits on the clock. A participant that cannot get there (its task
    /// ended, or it waits on the play loop itself, as a sender into a full queue does) is let go after a
    /// bounded number of yields.
    private func settle() async {
        var yields = 0
        repeat {
            await Task.yield()
            yields += 1
        } while yields < 100_000 && lock.withLock({ waiters.count < participants })
    }

    /// Suspends until virtual time reaches `deadline` or the task is cancelled (a source pacing its media),
    /// without moving time.
    public func wait(until deadline: Instant) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: Bool = lock.withLock {
                    if current >= deadline || Task.isCancelled { return true }
                    waiters.append((id, deadline, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let cancelled = lock.withLock {
                defer { waiters.removeAll { $0.id == id } }
                return waiters.first { $0.id == id }?.continuation
            }
            cancelled?.resume()
        }
    }
}

/// An FLV file served as a live stream in virtual time: each tag is handed over when the clock reaches its
/// timestamp (after `lead` of it at once, like a GOP cache), and after the last tag the connection stays open
/// and silent, as a live server's would.
public struct VirtualLiveSource: ByteSource {
    let tags: [(timestamp: Duration, bytes: [UInt8])]
    let header: [UInt8]
    let clock: VirtualClock
    let lead: Duration

    public init(flv bytes: [UInt8], clock: VirtualClock, lead: Duration = .zero) {
        self.clock = clock
        self.lead = lead
        clock.join()
        header = Array(bytes.prefix(13))
        var tags: [(Duration, [UInt8])] = []
        var offset = 13
        while offset + 15 <= bytes.count {
            let size = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let timestamp = Int(bytes[offset + 7]) << 24 | Int(bytes[offset + 4]) << 16
                | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6])
            let end = offset + 11 + size + 4
            guard end <= bytes.count else { break }
            tags.append((.milliseconds(timestamp), Array(bytes[offset..<end])))
            offset = end
        }
        self.tags = tags
    }

    public func makeConnection() -> any ByteConnection {
        VirtualLiveConnection(source: self)
    }
}

private final class VirtualLiveConnection: ByteConnection {
    private let source: VirtualLiveSource
    private var next = -2

    init(source: VirtualLiveSource) {
        self.source = source
    }

    func next() async throws(TransportError) -> TransportEvent? {
        defer { next += 1 }
        if next == -2 { return .connected(serverAddress: "127.0.0.1:1935") }
        if next == -1 { return .bytes(source.header) }
        guard next < source.tags.count else {
            // Live and silent: the session stops it by cancelling.
            await source.clock.wait(until: VirtualClock.Instant(offset: .seconds(1_000_000)))
            throw TransportError(.noData, "silent")
        }
        let tag = source.tags[next]
        await source.clock.wait(until: VirtualClock.Instant(offset: max(.zero, tag.timestamp - source.lead)))
        return .bytes(tag.bytes)
    }

    func close() async {}
}

/// A session on a virtual clock sleeps on it: time moves when the play loop waits.
extension VirtualClock: SessionClock {
    /// Moves time to `deadline` or to the first waiter's instant before it, whichever is first, and returns once
    /// every participant waits again: a source's read that falls due ends the play loop's wait at its own instant,
    /// as an arrival does in real time, instead of being stamped with the end of a long wait.
    public func sleepForTurn(until deadline: Instant) async throws {
        try Task.checkCancellation()
        await settle()
        let first = lock.withLock { waiters.map(\.deadline).min() }
        advance(to: first.map { min($0, deadline) } ?? deadline)
        await settle()
    }
}
