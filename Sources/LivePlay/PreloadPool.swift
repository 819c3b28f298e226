import Foundation
public import Logging

/// Streams kept ready to show at once (TUIPlayerShortVideo's pre-play): each is connected, holds its newest GOP
/// within a byte budget (``PreloadBudget``), has its newest keyframe decoded into a poster picture and its decoders
/// open, and presents nothing. ``LivePlayer/switch(to:from:)`` takes one out of the pool: its poster reaches the
/// player's sink on the session's next turn, and it plays on from there.
///
/// A preloaded stream that fails is retried quietly (its session's own reconnects, then the pool's, at a backoff
/// up to 30 s) and reported through ``onChange``, never to a player. Each stream is a ``LiveSession`` on a thread
/// of its own, run by a task the pool owns until a player takes it; ``removeAll()`` stops them.
///
/// `@unchecked Sendable`: `entries` and `changeHandler` are read and written under `lock`.
public final class PreloadPool: @unchecked Sendable {
    public enum State: String, Sendable {
        /// Connecting, or connected and waiting for the first keyframe.
        case connecting
        /// The poster is decoded: a switch shows it at once.
        case ready
        /// The connection was lost and is being made again.
        case reconnecting
        /// The session gave up; the pool tries again after a backoff.
        case failed
    }

    /// One preloaded stream, as ``onChange`` and ``statuses`` tell it.
    public struct Status: Sendable {
        public var url: String
        public var state: State
        /// Sessions started for it (the pool's retries after failures add to the first).
        public var attempts: Int
        /// Bytes received since it was first ready (its first GOP in), and the seconds they took: what preloading
        /// it costs.
        public var bytesSinceReady: Int64
        public var secondsSinceReady: Int
        /// Why it is not ready, when it failed or is reconnecting.
        public var reason: String?
        /// What it holds now, in bytes: at most its share of the budget, and one read more.
        public var bufferedBytes: Int
    }

    public let configuration: LivePlayConfiguration
    public let budget: PreloadBudget
    private let logger: Logger
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var changeHandler: (@Sendable (Status) -> Void)?
    private let notifications = DispatchQueue(label: "liveplay.preload")

    /// - Parameters:
    ///   - configuration: what each preloaded stream plays with once switched to (its latency mode, transport,
    ///     decoder options).
    ///   - budget: what the streams may hold and read while they wait.
    public init(
        configuration: LivePlayConfiguration = LivePlayConfiguration(), budget: PreloadBudget = PreloadBudget(),
        logger: Logger = Logger(label: "liveplay.preload")
    ) {
        self.configuration = configuration
        self.budget = budget
        self.logger = logger
    }

    deinit {
        for entry in entries.values { entry.task?.cancel() }
    }

    /// Called on a queue of the pool's own (one at a time, never on a play loop) when a stream's state changes.
    public var onChange: (@Sendable (Status) -> Void)? {
        get { lock.withLock { changeHandler } }
        set { lock.withLock { changeHandler = newValue } }
    }

    /// Every preloaded stream's status, by URL.
    public var statuses: [Status] { lock.withLock { entries.values.map(\.status) } }

    /// Starts preloading `url`, unless it is already.
    public func preload(_ url: String) {
        lock.withLock {
            guard entries[url] == nil else { return }
            let entry = Entry(url: url, control: PlaybackControl(standby: budget), pool: self)
            entries[url] = entry
            shareBudget()
            entry.task = Task { [configuration, logger] in
                await Self.keepPreloading(entry, configuration: configuration, logger: logger)
            }
        }
    }

    /// Preloads exactly `urls`: starts those not yet preloaded, stops the others.
    public func keep(only urls: [String]) async {
        let removed = lock.withLock { entries.keys.filter { !urls.contains($0) } }
        for url in removed { await remove(url) }
        for url in urls { preload(url) }
    }

    /// Stops preloading `url` and waits until its session has ended.
    public func remove(_ url: String) async {
        let entry = lock.withLock {
            defer { shareBudget() }
            return entries.removeValue(forKey: url)
        }
        entry?.task?.cancel()
        _ = await entry?.task?.value
    }

    /// Stops every preloaded stream.
    public func removeAll() async {
        let urls = lock.withLock { Array(entries.keys) }
        for url in urls { await remove(url) }
    }

    /// `url`'s stream while it is in the pool, without taking it.
    func entry(_ url: String) -> Entry? {
        lock.withLock { entries[url] }
    }

    /// Takes `url`'s stream out of the pool for a player, still running; nil when it is not preloaded.
    func take(_ url: String) -> Entry? {
        lock.withLock {
            defer { shareBudget() }
            return entries.removeValue(forKey: url)
        }
    }

    /// Each stream's share of the total budget; under `lock`.
    private func shareBudget() {
        let share = budget.share(among: entries.count)
        for entry in entries.values where entry.control.standbyBudget != nil { entry.control.standbyBudget = share }
    }

    /// Runs sessions for `entry` until a player takes it (then returns how its session ended) or the pool stops it.
    private static func keepPreloading(
        _ entry: Entry, configuration: LivePlayConfiguration, logger: Logger
    ) async -> PlaybackOutcome {
        var failures = 0
        while true {
            entry.update {
                $0.attempts += 1
                $0.state = $0.attempts == 1 ? .connecting : .reconnecting
            }
            let session = LiveSession(
                url: entry.url, configuration: configuration, clock: ContinuousClock(), logger: logger,
                control: entry.control)
            let outcome = await session.run(
                onEvent: { entry.route.post(.event($0)) }, onStatus: { entry.route.post(.netStatus($0)) })
            // Taken by a player, or stopped: the session's end is theirs.
            if entry.control.standbyBudget == nil || Task.isCancelled { return outcome }
            failures += 1
            entry.update {
                $0.state = .failed
                if outcome == .ended { $0.reason = "the stream ended" }
            }
            let backoff = Duration.seconds(min(30, 1 << min(failures - 1, 5)))
            do { try await Task.sleep(for: backoff) } catch { return outcome }
        }
    }

    /// Tells ``onChange`` about a change of state, off the play loop.
    fileprivate func notify(_ status: Status) {
        guard let handler = lock.withLock({ changeHandler }) else { return }
        notifications.async { handler(status) }
    }

    /// A stream in the pool: its session's control and where the session's updates go.
    ///
    /// `@unchecked Sendable`: `status` is read and written under `lock`; the task is set once, under the pool's lock.
    final class Entry: @unchecked Sendable {
        let url: String
        let control: PlaybackControl
        let route: UpdateRoute
        var task: Task<PlaybackOutcome, Never>?
        private let lock = NSLock()
        private var storedStatus: Status
        private weak var pool: PreloadPool?

        init(url: String, control: PlaybackControl, pool: PreloadPool) {
            self.url = url
            self.control = control
            self.pool = pool
            storedStatus = Status(
                url: url, state: .connecting, attempts: 0, bytesSinceReady: 0, secondsSinceReady: 0, reason: nil,
                bufferedBytes: 0)
            route = UpdateRoute()
            route.redirect(to: { [weak self] update in self?.preloading(update) })
        }

        var status: Status {
            var status = lock.withLock { storedStatus }
            status.bufferedBytes = control.standbyBufferedBytes
            return status
        }

        /// Whether the poster is ready to be shown.
        var isReady: Bool { status.state == .ready }

        func update(_ change: (inout Status) -> Void) {
            let (before, after) = lock.withLock {
                let before = storedStatus.state
                change(&storedStatus)
                return (before, storedStatus)
            }
            if before != after.state || after.state == .failed { pool?.notify(after) }
        }

        /// What the session reports while it preloads: its state and what it costs.
        private func preloading(_ update: PlayerUpdate) {
            switch update {
            case .event(let event):
                switch event.code {
                case .receivedFirstKeyframe:
                    self.update {
                        $0.state = .ready
                        $0.reason = nil
                    }
                case .reconnect:
                    self.update {
                        $0.state = .reconnecting
                        $0.reason = event.message
                    }
                case let code where code.rawValue < 0:
                    self.update { $0.reason = event.message }
                default: break
                }
            case .netStatus(let status):
                lock.withLock {
                    guard storedStatus.state == .ready else { return }
                    storedStatus.bytesSinceReady += Int64(status.netSpeedKbps) * 125
                    storedStatus.secondsSinceReady += 1
                }
            }
        }
    }
}
