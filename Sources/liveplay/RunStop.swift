import Foundation
import LivePlay
import Synchronization

/// Why `liveplay URL` stopped.
enum StopReason: Sendable {
    case played(PlaybackOutcome)
    case duration
    case frames
    case interrupted
    /// stdout was closed by its reader (`| head`): stop at once, quietly.
    case outputClosed

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

/// SIGINT / SIGTERM turned into a clean stop.
final class SignalWatch {
    private let sources: [any DispatchSourceSignal]

    init(_ signals: [Int32], handler: @escaping @Sendable () -> Void) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
