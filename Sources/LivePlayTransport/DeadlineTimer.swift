import Foundation
import LivePlayCore
import NIOCore
import Synchronization

/// Calls back once at a deadline, unless cancelled first: the timer a body read waits with.
///
/// A player passes its playback thread, so a wait arms no libdispatch or event-loop timer and the callback runs
/// where the reader runs; without one, the request's event loop times the wait.
public protocol DeadlineTimer: Sendable {
    /// Calls `action` after `delay`; the token cancels it.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> UInt64
    /// The timer `token` names will not call back (it may have already).
    func cancelTimer(_ token: UInt64)
}

/// The request's event loop as a ``DeadlineTimer``, for a reader without a thread of its own.
final class EventLoopTimer: DeadlineTimer, Sendable {
    private struct Timers {
        var scheduled: [UInt64: Scheduled<Void>] = [:]
        var next: UInt64 = 0
    }

    let eventLoop: any EventLoop
    private let timers = Mutex(Timers())

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        timers.withLock { [eventLoop] timers in
            defer { timers.next &+= 1 }
            let token = timers.next
            timers.scheduled[token] = eventLoop.scheduleTask(in: .nanoseconds(delay.nanoseconds)) { [weak self] in
                self?.cancelTimer(token)
                action()
            }
            return token
        }
    }

    func cancelTimer(_ token: UInt64) {
        timers.withLock { $0.scheduled.removeValue(forKey: token) }?.cancel()
    }
}
