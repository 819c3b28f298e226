import AsyncHTTPClient
import Foundation
import LivePlayCore
import NIOCore
import NIOHTTP1
import Synchronization

/// One HTTP response as AsyncHTTPClient's event loop delivers it (`HTTPClientResponseDelegate`), buffered for a
/// reader that takes everything that arrived since its last read in one piece.
///
/// Nothing is spawned or allocated per read: the event loop appends each body part under a lock and resumes the
/// reader if it waits; a wait is one continuation, ended by the next part, the end of the response, an error or the
/// reader's deadline timer; the reader copies the parts into its own buffer under the lock, so the array of parts
/// keeps its storage from read to read. A reader that falls behind holds the event loop back past ``limit`` buffered bytes (the part's
/// future completes when the reader takes), so bytes keep TCP's backpressure and the buffer stays bounded.
final class HTTPBodyReceiver: HTTPClientResponseDelegate, Sendable {
    typealias Response = Void

    /// What a wait ended with.
    enum Arrival {
        case head(HTTPResponseHead)
        /// This many bytes, appended to the reader's buffer.
        case bytes(Int)
        case end
        case failure(any Error)
        case timedOut
        case cancelled
    }

    /// What the event loop has handed over and the reader not yet taken, and who waits.
    private struct Body {
        let limit: Int
        /// Waits after each body part before AsyncHTTPClient reads the socket again
        /// (``TransportOptions/readInterval``).
        let readInterval: Duration
        var head: HTTPResponseHead?
        var headTaken = false
        var parts: [ByteBuffer] = []
        var bufferedBytes = 0
        var ended = false
        var failure: (any Error)?
        var waiter: UnsafeContinuation<Arrival, Never>?
        /// The event loop's next body part waits for this while ``limit`` bytes are buffered.
        var room: EventLoopPromise<Void>?
        /// The parts of the socket read being delivered have had their pause.
        var readPaused = false

        /// The waiting reader, if what it waits for is there now.
        mutating func ready() -> Ready? {
            guard let waiter, let arrival = take() else { return nil }
            self.waiter = nil
            return Ready(waiter: waiter, arrival: arrival)
        }

        /// What the reader can have now: `.bytes` says only that parts are there (``moveParts(appendingTo:)``
        /// takes them).
        mutating func take() -> Arrival? {
            if !headTaken, let head {
                headTaken = true
                return .head(head)
            }
            // The parts of a merged read wait for its last one, unless the buffer is full or nothing more will come.
            let holding = readInterval > .zero && readPaused && bufferedBytes < limit && !ended && failure == nil
            if !parts.isEmpty, !holding { return .bytes(bufferedBytes) }
            if let failure { return .failure(failure) }
            if ended { return .end }
            return nil
        }

        /// Appends every buffered part to `bytes`, in order, and empties the buffer (its storage kept: nobody else
        /// holds it); the event loop, if it waits for room, goes on. Returns how many bytes.
        mutating func moveParts(appendingTo bytes: inout [UInt8]) -> Int {
            let count = bufferedBytes
            bytes.reserveCapacity(bytes.count + count)
            for part in parts { bytes.append(contentsOf: part.readableBytesView) }
            parts.removeAll(keepingCapacity: true)
            bufferedBytes = 0
            room?.succeed()
            room = nil
            return count
        }
    }

    private let body: Mutex<Body>
    private let readInterval: Duration

    init(limit: Int, readInterval: Duration = .zero) {
        body = Mutex(Body(limit: limit, readInterval: readInterval))
        self.readInterval = readInterval
    }

    // MARK: - The event loop's side

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let ready = body.withLock {
            $0.head = head
            return $0.ready()
        }
        ready?.resume()
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let (ready, wait) = body.withLock { body -> (Ready?, EventLoopFuture<Void>?) in
            body.parts.append(buffer)
            body.bufferedBytes += buffer.readableBytes
            if body.bufferedBytes >= body.limit {
                let promise = task.eventLoop.makePromise(of: Void.self)
                body.room = promise
                return (body.ready(), promise.futureResult)
            }
            // Merged reads wake the reader once a read, when its last part is in (``pauseAfterRead(_:)``).
            return (body.readInterval > .zero ? nil : body.ready(), nil)
        }
        ready?.resume()
        if let wait { return wait }
        return pauseAfterRead(task.eventLoop) ?? task.eventLoop.makeSucceededVoidFuture()
    }

    /// With a ``TransportOptions/readInterval``: the pause before AsyncHTTPClient reads the socket again, taken at
    /// the first body part of each read. One read of the socket makes many parts (a chunked body's chunks, a tag
    /// each); the rest of them pass at once when the pause ends. A task queued on the event loop behind them then
    /// clears the flag that marks them and wakes the reader, which so takes the whole read in one piece.
    private func pauseAfterRead(_ eventLoop: any EventLoop) -> EventLoopFuture<Void>? {
        guard readInterval > .zero else { return nil }
        let first = body.withLock { body in
            defer { body.readPaused = true }
            return !body.readPaused
        }
        guard first else { return nil }
        let pause = eventLoop.scheduleTask(in: .nanoseconds(readInterval.nanoseconds)) {}.futureResult
        pause.whenComplete { _ in
            eventLoop.execute {
                let ready = self.body.withLock {
                    $0.readPaused = false
                    return $0.ready()
                }
                ready?.resume()
            }
        }
        return pause
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        let ready = body.withLock {
            $0.ended = true
            return $0.ready()
        }
        ready?.resume()
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        let ready = body.withLock {
            if $0.failure == nil { $0.failure = error }
            return $0.ready()
        }
        ready?.resume()
    }

    /// A waiting reader and what it gets, to be resumed outside the lock.
    private struct Ready {
        let waiter: UnsafeContinuation<Arrival, Never>
        let arrival: Arrival

        func resume() {
            waiter.resume(returning: arrival)
        }
    }

    // MARK: - The reader's side

    /// The response head, everything buffered (appended to `bytes`), the end or the error: whichever is there,
    /// else waits for it at most `timeout` (`.timedOut`), or until the task is cancelled (`.cancelled`).
    /// Everything buffered comes at once, in order; the head comes before the first bytes.
    func next(within timeout: Duration, timer: any DeadlineTimer, into bytes: inout [UInt8]) async -> Arrival {
        let arrival = await wait(within: timeout, timer: timer)
        guard case .bytes = arrival else { return arrival }
        // Whatever came since the wait ended comes too: the parts are in order whoever takes them.
        return .bytes(body.withLock { $0.moveParts(appendingTo: &bytes) })
    }

    /// ``next(within:timer:into:)`` for the head, which comes before any bytes.
    func head(within timeout: Duration, timer: any DeadlineTimer) async -> Arrival {
        var none: [UInt8] = []
        return await next(within: timeout, timer: timer, into: &none)
    }

    private func wait(within timeout: Duration, timer: any DeadlineTimer) async -> Arrival {
        if let arrival = body.withLock({ $0.take() }) {
            return arrival
        }
        var token: UInt64?
        let arrival = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Arrival, Never>) in
                let now: Arrival? = body.withLock {
                    if let arrival = $0.take() { return arrival }
                    if Task.isCancelled { return .cancelled }
                    $0.waiter = continuation
                    return nil
                }
                if let now { return continuation.resume(returning: now) }
                token = timer.schedule(after: timeout) { self.wake(with: .timedOut) }
            }
        } onCancel: {
            wake(with: .cancelled)
        }
        if let token { timer.cancelTimer(token) }
        return arrival
    }

    /// Ends the wait, if the reader still waits.
    private func wake(with arrival: Arrival) {
        let waiter = body.withLock { body in
            defer { body.waiter = nil }
            return body.waiter
        }
        waiter?.resume(returning: arrival)
    }
}
