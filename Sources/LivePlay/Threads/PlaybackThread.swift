import Foundation
import HeapModule
import LivePlayTransport
import Synchronization

/// A task executor with one thread of its own, on which a playback's play loop, transport task and decoders
/// run instead of on Swift's cooperative pool, and which also serves the play loop's tick sleeps.
///
/// Decoding is a stream of C calls of a few milliseconds each, and the play loop wakes a hundred times a
/// second. On the cooperative pool that load competes with the host application's tasks, every tick's
/// `Task.sleep` is a libdispatch timer plus a hop through a pool thread, and libdispatch's pool monitor
/// (which adds a worker when it samples work queued while a worker is not runnable) grows the pool now and
/// then and keeps the extra thread. One thread per playback keeps the player's thread count, and what each
/// thread holds in memory, the same from a session's first second to its last. Across sessions the threads are
/// reused (``PlaybackThreads``).
///
/// `@unchecked Sendable`: jobs and timers are read and written under `condition`; the thread is the only one that runs
/// them.
final class PlaybackThread: TaskExecutor, DeadlineTimer, @unchecked Sendable {
    /// A timer's place in the queue: its deadline, then the order timers were made in.
    private struct Deadline: Comparable {
        var instant: ContinuousClock.Instant
        var id: UInt64

        static func < (lhs: Deadline, rhs: Deadline) -> Bool {
            (lhs.instant, lhs.id) < (rhs.instant, rhs.id)
        }
    }

    /// What a timer does when it is due: resume a sleeping task, or call back on this thread.
    private enum Waiter {
        case sleeper(UnsafeContinuation<Void, any Error>)
        case action(@Sendable () -> Void)
    }

    /// A wait on the condition never outlasts this, so a step of the wall clock (which `NSCondition`
    /// measures its deadline in) delays a timer by at most this much.
    private static let longestWait = 0.25

    private let condition = NSCondition()
    private var queued: [UnownedJob] = []
    /// Every timer's deadline, soonest first; a cancelled timer stays until it comes up and is skipped (its
    /// waiter is gone), so cancelling costs no search. Many sessions share a thread of a
    /// ``PlaybackThreadGroup``, each with its ticks and read deadlines.
    private var deadlines = Heap<Deadline>()
    private var waiters: [UInt64: Waiter] = [:]
    private var cancelledTimers: Set<UInt64> = []
    private var nextTimer: UInt64 = 0
    private var isStopping = false
    private var isStopped = false

    /// Starts the thread; `name` (Linux keeps 15 bytes of it) is what `top -H` and crash dumps show.
    init(name: String) {
        let thread = Thread { [self] in
            nameCurrentThread(name)
            runJobs()
        }
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = condition.withLock {
            guard !isStopped else { return false }
            queued.append(job)
            condition.signal()
            return true
        }
        // A job that arrives after `stop()` (none should) still runs, on the shared pool.
        if !accepted { globalConcurrentExecutor.enqueue(job) }
    }

    /// Suspends until `deadline`, woken by this thread; throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: ContinuousClock.Instant) async throws {
        let id = condition.withLock {
            defer { nextTimer &+= 1 }
            return nextTimer
        }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                // Checked under the lock the cancellation handler also takes, so a cancellation that arrives
                // before the timer is registered cannot be missed.
                let cancelled = condition.withLock {
                    if cancelledTimers.remove(id) != nil || Task.isCancelled { return true }
                    add(.sleeper(continuation), id: id, at: deadline)
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let waiter: Waiter? = condition.withLock {
                guard let waiter = waiters.removeValue(forKey: id) else {
                    cancelledTimers.insert(id)
                    return nil
                }
                return waiter
            }
            if case .sleeper(let continuation) = waiter { continuation.resume(throwing: CancellationError()) }
        }
        _ = condition.withLock { cancelledTimers.remove(id) }
    }

    /// Calls `action` on this thread at `deadline`, unless ``cancelTimer(_:)`` comes first: a timer for code
    /// that waits on a continuation of its own, with no task to sleep.
    func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        condition.withLock {
            defer { nextTimer &+= 1 }
            add(.action(action), id: nextTimer, at: deadline)
            return nextTimer
        }
    }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        schedule(at: .now + delay, action)
    }

    /// A timer of ``schedule(at:_:)`` will not call back (it may be running now, or have run).
    func cancelTimer(_ id: UInt64) {
        _ = condition.withLock { waiters.removeValue(forKey: id) }
    }

    /// Lets the thread finish what is queued and exit. Call once the work that prefers this executor is done.
    func stop() {
        condition.withLock {
            isStopping = true
            condition.signal()
        }
    }

    /// Under `condition`'s lock.
    private func add(_ waiter: Waiter, id: UInt64, at deadline: ContinuousClock.Instant) {
        waiters[id] = waiter
        let soonest = deadlines.min?.instant
        deadlines.insert(Deadline(instant: deadline, id: id))
        // The thread waits for the soonest deadline it knew of; only a sooner one needs to wake it.
        if soonest.map({ deadline < $0 }) ?? true { condition.signal() }
    }

    private func runJobs() {
        var batch: [UnownedJob] = []
        var due: [Waiter] = []
        while true {
            condition.withLock {
                while true {
                    let now = ContinuousClock.now
                    // A cancelled timer's deadline stays in the heap until it comes up: it is let go here, not
                    // waited for (the play loop cancels its turn's deadline whenever a read comes first, and each
                    // such deadline woke the thread for nothing, some 70 times a second).
                    while let soonest = deadlines.min, soonest.instant <= now || waiters[soonest.id] == nil {
                        deadlines.removeMin()
                        if let waiter = waiters.removeValue(forKey: soonest.id) { due.append(waiter) }
                    }
                    if !queued.isEmpty || !due.isEmpty { break }
                    if waiters.isEmpty {
                        // Only cancelled timers are left: nothing will come of them. Taken out one by one, so the
                        // heap keeps its storage (a new heap regrew it a few times a second).
                        while deadlines.popMin() != nil {}
                        if isStopping {
                            isStopped = true
                            break
                        }
                        condition.wait()
                    } else if let next = deadlines.min?.instant {
                        let seconds = Self.seconds(now.duration(to: next))
                        _ = condition.wait(until: Date(timeIntervalSinceNow: min(seconds, Self.longestWait)))
                    }
                }
                swap(&batch, &queued)
            }
            if batch.isEmpty, due.isEmpty { return }
            for waiter in due {
                switch waiter {
                case .sleeper(let continuation): continuation.resume()
                case .action(let action): action()
                }
            }
            due.removeAll(keepingCapacity: true)
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            batch.removeAll(keepingCapacity: true)
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}

/// A fixed set of playback threads that many sessions share, each session on one of them (in turn): for a
/// process that plays hundreds of streams at once (`liveplay monitor`), where a thread per session would spend
/// the cores on switching between threads and the memory on their stacks. Like SwiftNIO's `EventLoopGroup`: give
/// the same group to every player's ``LivePlayConfiguration/threads``; its threads end when the group is released
/// and their sessions have ended.
///
/// A session's play loop, transport and decoders run on its thread between suspensions, so the sessions of one
/// thread take turns: in probe mode a turn is a few microseconds; decoding sessions should have a thread each
/// (no group), or a group no larger than the cores they may use.
public final class PlaybackThreadGroup: Sendable {
    /// How many threads the group has.
    public var count: Int { threads.count }
    private let threads: [PlaybackThread]
    private let turn = Mutex(0)

    /// - Parameters:
    ///   - count: threads, at least 1 (the cores the sessions may use, typically).
    ///   - name: the threads' name, as `top -H` shows it.
    public init(threads count: Int, name: String = "liveplay-play") {
        threads = (0..<max(1, count)).map { _ in PlaybackThread(name: name) }
    }

    deinit {
        for thread in threads { thread.stop() }
    }

    /// The thread the next session runs on.
    func take() -> PlaybackThread {
        threads[turn.withLock { turn in
            defer { turn = (turn + 1) % threads.count }
            return turn
        }]
    }
}

/// The threads of playbacks that ended, kept for the next: a session takes one (or starts one when none waits) and
/// gives it back when it ends. A process that starts and stops many sessions so keeps as many threads as it ever ran
/// sessions at once, and their glibc malloc arenas: each new thread may get an arena of its own, whose high-water mark
/// stays when the thread ends, so a new thread per session made RSS climb from plateau to plateau.
///
/// Process-wide, like SwiftNIO's shared event loops: the pool holds threads, not playback state. At most
/// ``idleLimit`` wait; a thread given back beyond that ends.
enum PlaybackThreads {
    static let idleLimit = 16
    private static let idle = Mutex<[PlaybackThread]>([])

    /// A waiting thread, or a new one.
    static func take() -> PlaybackThread {
        idle.withLock { $0.popLast() } ?? PlaybackThread(name: "liveplay-play")
    }

    /// `thread`'s session has ended (its play loop and transport tasks are done): keeps it for the next.
    static func giveBack(_ thread: PlaybackThread) {
        let kept = idle.withLock {
            guard $0.count < idleLimit else { return false }
            $0.append(thread)
            return true
        }
        if !kept { thread.stop() }
    }

    /// How many threads wait now.
    static var idleCount: Int { idle.withLock { $0.count } }
}

/// For the front-end modules and the CLI, which import `LivePlay` only: their threads name themselves the way the
/// library's do (`nameCurrentThread`, LivePlayTransport).
package func nameThread(_ name: String) {
    nameCurrentThread(name)
}
