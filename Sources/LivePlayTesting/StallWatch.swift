import Foundation

/// Watches for moments when this machine did not run the process: on each CPU a thread of its own, pinned to
/// it, wakes every `tick` and records each wake that came more than `threshold` late. A thread that only sleeps
/// is woken ahead of busy ones, so a late wake means that CPU was taken from the virtual machine (steal) or the
/// kernel held it; no player can keep time through that, so real-time tests leave such moments out of their
/// measures (and bound how much they leave out). One thread per CPU, because a virtual machine loses one CPU
/// at a time: an unpinned watcher moves to the other and sees nothing.
///
/// Threads of its own, not tasks: the cooperative pool's threads are among those being measured.
/// `@unchecked Sendable`: every mutable field is read and written under `condition`.
public final class StallWatch: @unchecked Sendable {
    /// A stretch of wall time a CPU did not run the process.
    public struct Stall: Sendable, CustomStringConvertible {
        public var cpu: Int
        public var from: ContinuousClock.Instant
        public var to: ContinuousClock.Instant
        public var duration: Duration { to - from }
        public var description: String { "\(duration.milliseconds) ms on CPU \(cpu)" }
    }

    private let condition = NSCondition()
    private var found: [Stall] = []
    private var stopped = false
    private var running = 0

    /// Starts watching: a wake more than `threshold` after its `tick` is a stall.
    public init(tick: Duration = .milliseconds(2), threshold: Duration = .milliseconds(30)) {
        let cpus = ProcessInfo.processInfo.activeProcessorCount
        running = cpus
        for cpu in 0..<cpus {
            Thread.detachNewThread { [self] in
                Self.pin(to: cpu)
                var last = ContinuousClock.now
                condition.lock()
                while !stopped {
                    condition.unlock()
                    Thread.sleep(forTimeInterval: tick / .seconds(1))
                    let now = ContinuousClock.now
                    condition.lock()
                    if now - last > tick + threshold { found.append(Stall(cpu: cpu, from: last, to: now)) }
                    last = now
                }
                running -= 1
                condition.broadcast()
                condition.unlock()
            }
        }
    }

    /// Keeps the calling thread on one CPU. glibc's `sched_setaffinity` (thread 0 is the caller) is looked up at
    /// run time: Swift's Glibc module leaves out what needs `_GNU_SOURCE`.
    private static func pin(to cpu: Int) {
        typealias SetAffinity = @convention(c) (pid_t, Int, UnsafeRawPointer) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_setaffinity") else { return }
        var mask = [UInt8](repeating: 0, count: 128)  // glibc's cpu_set_t: 1,024 bits
        guard cpu / 8 < mask.count else { return }
        mask[cpu / 8] |= UInt8(1) << (cpu % 8)
        _ = mask.withUnsafeBytes { unsafeBitCast(symbol, to: SetAffinity.self)(0, $0.count, $0.baseAddress!) }
    }

    /// The stalls seen so far.
    public var stalls: [Stall] { condition.withLock { found } }

    /// Stops watching (the thread runs until then) and returns the stalls seen.
    @discardableResult
    public func stop() -> [Stall] {
        condition.lock()
        defer { condition.unlock() }
        stopped = true
        while running > 0 { condition.wait() }
        return found
    }

    /// Whether a stall overlaps `from...to`, widened by `margin` on each side.
    public func stalled(from: ContinuousClock.Instant, to: ContinuousClock.Instant, margin: Duration = .zero) -> Bool {
        stalls.contains { $0.to > from - margin && $0.from < to + margin }
    }
}
