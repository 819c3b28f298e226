import Foundation
import LivePlayCore
import Synchronization
public import Logging
public import LivePlayTransport

/// How downloads run: Volcengine's downloader settings, with the transport's timeouts and headers.
public struct DownloadOptions: Sendable {
    /// Downloads at once (Volcengine's default 1).
    public var maximumConcurrent: Int
    public var transport: TransportOptions
    /// A lost connection is retried this many times at this interval, each time with `Range` from what is held.
    public var retryCount: Int
    public var retryInterval: Duration
    /// Bytes between progress updates.
    public var progressEvery: Int64

    public init(
        maximumConcurrent: Int = 1, transport: TransportOptions = TransportOptions(), retryCount: Int = 3,
        retryInterval: Duration = .seconds(1), progressEvery: Int64 = 1 << 20
    ) {
        self.maximumConcurrent = maximumConcurrent
        self.transport = transport
        self.retryCount = retryCount
        self.retryInterval = retryInterval
        self.progressEvery = progressEvery
    }
}

/// What a download did, in order (the `liveplay download` log's lines, docs/cache.md).
public struct DownloadUpdate: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// Began or went on: `bytes` already held (`resumed_from` in the log when more than 0).
        case started
        case progress
        /// The server's file changed since the held bytes were fetched (`If-Range` failed): starting over.
        case restarted
        /// The connection was lost; going on with `Range` after the retry interval.
        case retrying
        case paused
        /// The whole file is in the cache, at `path`.
        case completed
        case failed
        /// Stopped and its bytes removed.
        case cancelled
    }

    public var id: Int
    /// Redacted (``Redaction``).
    public var url: String
    public var kind: Kind
    public var bytes: Int64
    public var length: Int64?
    public var path: String?
    public var error: CacheError?
}

/// Downloads HTTP FLV files into a ``MediaCache`` (Volcengine's TTVideoEngine downloader): start, pause, resume,
/// cancel and delete; at most ``DownloadOptions/maximumConcurrent`` at once; resumed after a pause, a crash or a
/// lost connection with `Range` from the bytes held and `If-Range` with the server's validator, so a file that
/// changed starts over instead of being spliced; stopped below the cache's free-space limit.
///
/// Nothing runs until ``run(untilIdle:onUpdate:)``, whose task owns every transfer; the other methods only
/// decide, and may be called from any thread. A download has one transfer at a time: one resumed while its paused
/// transfer is still stopping goes on once that transfer has ended (``DownloadQueue/Item/transfer``).
public final class Downloader: Sendable {
    public let cache: MediaCache
    public let options: DownloadOptions
    private let logger: Logger
    /// Where a transfer's bytes come from: the URL over HTTP (through the run's pool), or a test's scripted server.
    private let makeSource: @Sendable (_ url: String, _ pool: HTTPConnectionPool) -> any DownloadSource
    /// What a lost connection's retry waits by: the real clock, or a test's virtual one.
    private let clock: any Clock<Duration>
    private let shared: Mutex<Shared>

    /// What the callers and the run change together.
    private struct Shared {
        var queue: DownloadQueue
        /// The stop signal of each transfer that has not ended, by its number: a transfer's end removes its own.
        var stops: [Int: StopRequest<StopReason>] = [:]
        var wake: AsyncStream<Void>.Continuation?

        /// Tells download `id`'s transfer to stop.
        func stop(_ id: Int, _ reason: StopReason) {
            if let transfer = queue[id]?.transfer { stops[transfer]?.request(reason) }
        }
    }

    /// - Parameter clock: what a lost connection's retry waits by: the real clock, or a test's virtual one.
    public convenience init(
        cache: MediaCache, options: DownloadOptions = DownloadOptions(), clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "liveplay.download")
    ) {
        self.init(cache: cache, options: options, clock: clock, logger: logger) { url, pool in
            HTTPFLVSource(url: url, options: options.transport, pool: pool, logger: logger)
        }
    }

    init(
        cache: MediaCache, options: DownloadOptions, clock: any Clock<Duration> = ContinuousClock(), logger: Logger,
        makeSource: @escaping @Sendable (_ url: String, _ pool: HTTPConnectionPool) -> any DownloadSource
    ) {
        self.cache = cache
        self.options = options
        self.clock = clock
        self.logger = logger
        self.makeSource = makeSource
        shared = Mutex(Shared(queue: DownloadQueue(maximumRunning: options.maximumConcurrent)))
    }

    /// Adds a download (it starts when a place is free); the id of one already waiting or running for `url`.
    @discardableResult
    public func add(_ url: String) -> Int {
        change { $0.queue.add(url) }
    }

    /// Stops a download, keeping what it holds for ``resume(_:)`` (or a later run).
    public func pause(_ id: Int) {
        change { if $0.queue.pause(id) { $0.stop(id, .paused) } }
    }

    public func resume(_ id: Int) {
        change { $0.queue.resume(id) }
    }

    /// Stops a download and removes what it holds (a completed one stays: ``delete(_:)`` removes that).
    public func cancel(_ id: Int) {
        let (wasRunning, url, completed) = change { shared -> (Bool, String?, Bool) in
            let completed = shared.queue[id]?.state == .completed
            let running = shared.queue.cancel(id)
            if running { shared.stop(id, .cancelled) }
            return (running, shared.queue[id]?.url, completed)
        }
        if !wasRunning, !completed, let url { _ = try? cache.delete(url) }
    }

    /// Cancels a download and removes its entry, complete or not.
    public func delete(_ id: Int) {
        let (wasRunning, url) = change { shared -> (Bool, String?) in
            let running = shared.queue.cancel(id)
            if running { shared.stop(id, .deleted) }
            return (running, shared.queue[id]?.url)
        }
        if !wasRunning, let url { _ = try? cache.delete(url) }
    }

    public var items: [DownloadQueue.Item] { shared.withLock { $0.queue.items } }

    /// Runs the downloads: until the task is cancelled (running downloads pause, keeping what they hold) or,
    /// with `untilIdle`, until none runs, waits or is still stopping. `onUpdate` gets every update in order, from
    /// this task. Its requests go through one ``HTTPConnectionPool``, made for the run and shut down when it ends.
    ///
    /// - Throws: ``TransportError`` when the pool fails to shut down.
    public func run(
        untilIdle: Bool = false, onUpdate: @escaping @Sendable (DownloadUpdate) -> Void
    ) async throws(TransportError) {
        let (wakes, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        shared.withLock { $0.wake = continuation }
        defer { shared.withLock { $0.wake = nil } }
        let updates = UpdateSerializer(onUpdate)
        try await HTTPConnectionPool.withPool(options: options.transport, logger: logger) { pool in
            await withTaskGroup(of: Void.self) { group in
                var iterator = wakes.makeAsyncIterator()
                while !Task.isCancelled {
                    let (started, idle) = shared.withLock { shared in
                        let started = shared.queue.start().compactMap { item in
                            item.transfer.map { (item: item, transfer: $0, stop: StopRequest<StopReason>()) }
                        }
                        for start in started { shared.stops[start.transfer] = start.stop }
                        return (started, shared.queue.isIdle)
                    }
                    for (item, number, stop) in started {
                        group.addTask {
                            let transfer = Transfer(
                                id: item.id, url: item.url, cache: self.cache, options: self.options,
                                source: self.makeSource(item.url, pool), clock: self.clock, logger: self.logger,
                                signal: stop, report: updates.send)
                            let completed = await transfer.run()
                            // Only this transfer's state: the download may have been resumed meanwhile, and the
                            // next transfer waits for this end to start.
                            self.change {
                                $0.queue.ended(item.id, transfer: number, completed: completed)
                                $0.stops[number] = nil
                            }
                        }
                    }
                    if untilIdle, idle { break }
                    guard await iterator.next() != nil else { break }
                }
                group.cancelAll()
            }
        }
    }

    /// Changes the shared state in one step and wakes ``run(untilIdle:onUpdate:)`` to act on it.
    private func change<T: Sendable>(_ body: (inout Shared) -> T) -> T {
        shared.withLock { shared in
            let result = body(&shared)
            shared.wake?.yield()
            return result
        }
    }
}

/// Why a running download was told to stop.
enum StopReason: Sendable {
    case paused, cancelled, deleted
}

/// Hands updates to the caller's callback one at a time, in the order they were sent: the callback runs in the
/// serializer's turn.
final class UpdateSerializer: Sendable {
    private let turn = Mutex(())
    private let callback: @Sendable (DownloadUpdate) -> Void

    init(_ callback: @escaping @Sendable (DownloadUpdate) -> Void) { self.callback = callback }

    func send(_ update: DownloadUpdate) { turn.withLock { _ in callback(update) } }
}
