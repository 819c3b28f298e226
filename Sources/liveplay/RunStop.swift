import Foundation
import LivePlay
import Synchronization

/// Why `liveplay URL` stopped.
enum StopReason: Sendable {
    case played(PlaybackOutcome)
    case duration
    case frames
    case interrupted
    /// stdout, or a media output's pipe, was closed by its reader (`| head`): stop at once, quietly.
    case outputClosed
    /// A media output (--video-out, --audio-out, --captions-out) could not be written: stop, and exit 74.
    case outputFailed

    /// The documented exit status. A run that ends by its own limit or by the stream's end succeeds only if
    /// media played (a monitor's `liveplay URL -t 10 && echo ok` must not pass a dead stream); a signal or a
    /// closed stdout is the person stopping it, which always succeeds.
    func exitStatus(playedMedia: Bool) -> Int32 {
        switch self {
        case .played(.failed(let code)):
            switch code {
            case .unplayable, .hevcDecodeFailed: return ExitStatus.dataError
            default: return ExitStatus.unavailable
            }
        case .played(.ended):
            return playedMedia ? ExitStatus.success : ExitStatus.dataError
        case .duration, .played(.stopped):
            return playedMedia ? ExitStatus.success : ExitStatus.unavailable
        case .frames, .interrupted, .outputClosed:
            return ExitStatus.success
        case .outputFailed:
            return ExitStatus.ioError
        }
    }
}

/// The first reason to stop, from whoever sees it (a signal, the frame count).
final class StopSignal: Sendable {
    private let state = Mutex(State())

    private struct State {
        var fired: StopReason?
        var waiter: CheckedContinuation<StopReason?, Never>?
    }

    func fire(_ reason: StopReason) {
        let waiter: CheckedContinuation<StopReason?, Never>? = state.withLock { state in
            guard state.fired == nil else { return nil }
            state.fired = reason
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: reason)
    }

    /// Waits for the reason; `nil` if the task is cancelled first.
    func reason() async -> StopReason? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: (Bool, StopReason?) = state.withLock { state in
                    if let fired = state.fired { return (true, fired) }
                    if Task.isCancelled { return (true, nil) }
                    state.waiter = continuation
                    return (false, nil)
                }
                if ready.0 { continuation.resume(returning: ready.1) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<StopReason?, Never>? = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}

/// Signals (SIGINT / SIGTERM, SIGHUP, SIGWINCH) turned into calls of a handler, on a thread the process starts once
/// for them (`liveplay-signal`), never in the signal handler itself: the handler only writes the signal's number to a
/// pipe that thread reads (the self-pipe trick; `write` is safe in a signal handler). A signal without a watch is
/// ignored, as it was with none.
final class SignalWatch: Sendable {
    private let id: UInt64
    private let signals: [Int32]

    init(_ signals: [Int32], handler: @escaping @Sendable () -> Void) {
        self.signals = signals
        id = SignalThread.watch(signals, handler)
    }

    func cancel() {
        SignalThread.unwatch(signals, id)
    }
}

/// The process's one signal thread and the handlers it calls.
private enum SignalThread {
    private struct Watches {
        var handlers: [Int32: [UInt64: @Sendable () -> Void]] = [:]
        var next: UInt64 = 0
    }

    private static let watches = Mutex(Watches())
    /// The pipe's ends: the signal handler writes to the second, the thread reads the first. Made, and the thread
    /// started, before any handler is installed.
    static let pipeEnds: (read: Int32, write: Int32) = {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return (-1, -1) }
        // A full pipe (signals faster than the thread reads) drops the signal rather than blocking the handler.
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        let thread = Thread { [read = ends[0]] in
            nameThread("liveplay-signal")
            var number: UInt8 = 0
            while Glibc.read(read, &number, 1) == 1 || errno == EINTR {
                let handlers = watches.withLock { $0.handlers[Int32(number)].map { Array($0.values) } ?? [] }
                for handler in handlers { handler() }
            }
        }
        thread.start()
        return (ends[0], ends[1])
    }()

    static func watch(_ signals: [Int32], _ handler: @escaping @Sendable () -> Void) -> UInt64 {
        guard pipeEnds.write >= 0 else { return 0 }
        let id = watches.withLock { watches in
            defer { watches.next += 1 }
            for number in signals { watches.handlers[number, default: [:]][watches.next] = handler }
            return watches.next
        }
        for number in signals {
            signal(number) { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(SignalThread.pipeEnds.write, &byte, 1)
            }
        }
        return id
    }

    static func unwatch(_ signals: [Int32], _ id: UInt64) {
        watches.withLock { watches in
            for number in signals { watches.handlers[number]?[id] = nil }
        }
    }
}
