import Foundation
import LivePlayCore
import NIOConcurrencyHelpers
import NIOCore

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
///
/// `@unchecked Sendable`: the scheduled tasks are read and written under `lock`.
final class EventLoopTimer: DeadlineTimer, @unchecked Sendable {
    let eventLoop: any EventLoop
    private let lock = NIOLock()
    private var scheduled: [UInt64: Scheduled<Void>] = [:]
    private var next: UInt64 = 0

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        lock.withLock {
            defer { next &+= 1 }
            let token = next
            scheduled[token] = eventLoop.scheduleTask(in: .nanoseconds(delay.nanoseconds)) { [weak self] in
                self?.cancelTimer(token)
                action()
            }
            return token
        }
    }

    func cancelTimer(_ token: UInt64) {
        lock.withLock { scheduled.removeValue(forKey: token) }?.cancel()
    }
}
