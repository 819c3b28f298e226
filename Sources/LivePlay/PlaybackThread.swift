import Foundation

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
final class PlaybackThread: TaskExecutor, @unchecked Sendable {
    private struct Timer {
        var id: UInt64
        var deadline: ContinuousClock.Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    /// A wait on the condition never outlasts this, so a step of the wall clock (which `NSCondition`
    /// measures its deadline in) delays a timer by at most this much.
    private static let longestWait = 0.25

    private let condition = NSCondition()
    private var queued: [UnownedJob] = []
    private var timers: [Timer] = []
    private var cancelledTimers: Set<UInt64> = []
    private var nextTimer: UInt64 = 0
    private var isStopping = false
    private var isStopped = false

    /// Starts the thread; `name` (Linux keeps 15 bytes of it) is what `top -H` and crash dumps show.
    init(name: String) {
        let thread = Thread { [self] in
            // Set from inside the thread: Foundation passes a name on to the OS only for the current thread.
            Thread.current.name = name
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
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Checked under the lock the cancellation handler also takes, so a cancellation that arrives
                // before the timer is registered cannot be missed.
                let cancelled = condition.withLock {
                    if cancelledTimers.remove(id) != nil || Task.isCancelled { return true }
                    timers.append(Timer(id: id, deadline: deadline, continuation: continuation))
                    condition.signal()
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let timer: Timer? = condition.withLock {
                guard let index = timers.firstIndex(where: { $0.id == id }) else {
                    cancelledTimers.insert(id)
                    return nil
                }
                return timers.remove(at: index)
            }
            timer?.continuation.resume(throwing: CancellationError())
        }
        _ = condition.withLock { cancelledTimers.remove(id) }
    }

    /// Lets the thread finish what is queued and exit. Call once the work that prefers this executor is done.
    func stop() {
        condition.withLock {
            isStopping = true
            condition.signal()
        }
    }

    private func runJobs() {
        var batch: [UnownedJob] = []
        var due: [Timer] = []
        while true {
            condition.withLock {
                while true {
                    let now = ContinuousClock.now
                    due.append(contentsOf: timers.lazy.filter { $0.deadline <= now })
                    timers.removeAll { $0.deadline <= now }
                    if !queued.isEmpty || !due.isEmpty { break }
                    if timers.isEmpty {
                        if isStopping {
                            isStopped = true
                            break
                        }
                        condition.wait()
                    } else {
                        let next = timers.lazy.map(\.deadline).min()!
                        let seconds = Self.seconds(now.duration(to: next))
                        _ = condition.wait(until: Date(timeIntervalSinceNow: min(seconds, Self.longestWait)))
                    }
                }
                swap(&batch, &queued)
            }
            if batch.isEmpty, due.isEmpty { return }
            for timer in due { timer.continuation.resume() }
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

/// The threads of playbacks that ended, kept for the next: a session takes one (or starts one when none waits) and
/// gives it back when it ends. A process that starts and stops many sessions so keeps as many threads as it ever ran
/// sessions at once, and their glibc malloc arenas: each new thread may get an arena of its own, whose high-water mark
/// stays when the thread ends, so a new thread per session made RSS climb from plateau to plateau.
///
/// Process-wide, like SwiftNIO's shared event loops: the pool holds threads, not playback state. At most
/// ``idleLimit`` wait; a thread given back beyond that ends.
enum PlaybackThreads {
    static let idleLimit = 16
    /// `@unchecked Sendable`: `threads` is read and written under `lock`.
    private final class Idle: @unchecked Sendable {
        let lock = NSLock()
        var threads: [PlaybackThread] = []
    }

    private static let idle = Idle()

    /// A waiting thread, or a new one.
    static func take() -> PlaybackThread {
        idle.lock.withLock { idle.threads.popLast() } ?? PlaybackThread(name: "liveplay-play")
    }

    /// `thread`'s session has ended (its play loop and transport tasks are done): keeps it for the next.
    static func giveBack(_ thread: PlaybackThread) {
        let kept = idle.lock.withLock {
            guard idle.threads.count < idleLimit else { return false }
            idle.threads.append(thread)
            return true
        }
        if !kept { thread.stop() }
    }

    /// How many threads wait now.
    static var idleCount: Int { idle.lock.withLock { idle.threads.count } }
}
