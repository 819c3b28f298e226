import Foundation
import LivePlayTransport
import Synchronization
public import Logging

/// Streams kept ready to show at once (TUIPlayerShortVideo's pre-play): each is connected, holds its newest GOP
/// within a byte budget (``PreloadBudget``), has its newest keyframe decoded into a poster picture and its decoders
/// open, and presents nothing. ``LivePlayer/switch(to:from:)`` takes one out of the pool: its poster reaches the
/// player's sink on the session's next turn, and it plays on from there.
///
/// A preloaded stream that fails is retried quietly (its session's own reconnects, then the pool's, at a backoff
/// up to 30 s) and reported through ``onChange``, never to a player. Each stream is a ``LiveSession`` on a thread
/// of its own, run as a child of the pool's run (``OwnedTasks``), also once a player took it; ``removeAll()`` stops
/// those still in the pool.
public final class PreloadPool: Sendable {
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
    /// The clock the waiting streams run on, and retry by.
    private let clock: any SessionClock
    private struct Pool {
        var entries: [String: Entry] = [:]
        var changeHandler: (@Sendable (Status) -> Void)?
    }

    private let state = Mutex(Pool())
    /// The pool's run: each stream's sessions are a child of it, also once a player took the stream.
    private let tasks = OwnedTasks()
    /// Where ``onChange`` is called, one change at a time: a thread the pool takes while it exists.
    private let notifications = PlaybackThreads.take()

    /// - Parameters:
    ///   - configuration: what each preloaded stream plays with once switched to (its latency mode, transport,
    ///     decoder options).
    ///   - budget: what the streams may hold and read while they wait.
    ///   - clock: what the waiting streams run on and retry by: the real clock, or a test's virtual one.
    public init(
        configuration: LivePlayConfiguration = LivePlayConfiguration(), budget: PreloadBudget = PreloadBudget(),
        clock: any SessionClock = ContinuousClock(), logger: Logger = Logger(label: "liveplay.preload")
    ) {
        self.configuration = configuration
        self.budget = budget
        self.clock = clock
        self.logger = logger
    }

    deinit {
        state.withLock { for entry in $0.entries.values { entry.task?.cancel() } }
        PlaybackThreads.giveBack(notifications)
    }

    /// Called on a thread the pool takes for it (one change at a time, never on a play loop) when a stream's
    /// state changes.
    public var onChange: (@Sendable (Status) -> Void)? {
        get { state.withLock { $0.changeHandler } }
        set { state.withLock { $0.changeHandler = newValue } }
    }

    /// Every preloaded stream's status, by URL.
    public var statuses: [Status] { state.withLock { Array($0.entries.values) }.map(\.status) }

    /// Starts preloading `url`, unless it is already.
    public func preload(_ url: String) {
        state.withLock { [budget, configuration, clock, logger] state in
            guard state.entries[url] == nil else { return }
            let entry = Entry(url: url, control: PlaybackControl(standby: budget), pool: self)
            state.entries[url] = entry
            Self.shareBudget(budget, among: state.entries)
            entry.task = tasks.start {
                await Self.keepPreloading(entry, configuration: configuration, clock: clock, logger: logger)
            }
        }
    }

    /// Preloads exactly `urls`: starts those not yet preloaded, stops the others.
    public func keep(only urls: [String]) async {
        let removed = state.withLock { $0.entries.keys.filter { !urls.contains($0) } }
        for url in removed { await remove(url) }
        for url in urls { preload(url) }
    }

    /// Stops preloading `url` and waits until its session has ended.
    public func remove(_ url: String) async {
        let entry = state.withLock { [budget] state in
            defer { Self.shareBudget(budget, among: state.entries) }
            return state.entries.removeValue(forKey: url)
        }
        entry?.task?.cancel()
        _ = await entry?.task?.value
    }

    /// Stops every preloaded stream.
    public func removeAll() async {
        let urls = state.withLock { Array($0.entries.keys) }
        for url in urls { await remove(url) }
    }

    /// `url`'s stream while it is in the pool, without taking it.
    func entry(_ url: String) -> Entry? {
        state.withLock { $0.entries[url] }
    }

    /// Takes `url`'s stream out of the pool for a player, still running; nil when it is not preloaded.
    func take(_ url: String) -> Entry? {
        state.withLock { [budget] state in
            defer { Self.shareBudget(budget, among: state.entries) }
            return state.entries.removeValue(forKey: url)
        }
    }

    /// Gives each stream its share of the total budget.
    private static func shareBudget(_ budget: PreloadBudget, among entries: [String: Entry]) {
        let share = budget.share(among: entries.count)
        for entry in entries.values where entry.control.standbyBudget != nil { entry.control.standbyBudget = share }
    }

    /// Runs sessions for `entry` until a player takes it (then returns how its session ended) or the pool stops it.
    private static func keepPreloading(
        _ entry: Entry, configuration: LivePlayConfiguration, clock: any SessionClock, logger: Logger
    ) async -> PlaybackOutcome {
        // 1 s after the first failure, doubling to 30 s.
        var backoff = Backoff(initial: .seconds(1), maximum: .seconds(30))
        while true {
            entry.update {
                $0.attempts += 1
                $0.state = $0.attempts == 1 ? .connecting : .reconnecting
            }
            let outcome = await runSession(
                on: clock, url: entry.url, configuration: configuration, logger: logger, control: entry.control,
                onEvent: { entry.route.post(.event($0)) }, onStatus: { entry.route.post(.netStatus($0)) },
                onState: { entry.route.post(.state($0)) })
            // Taken by a player, or stopped: the session's end is theirs.
            if entry.control.standbyBudget == nil || Task.isCancelled { return outcome }
            entry.update {
                $0.state = .failed
                if outcome == .ended { $0.reason = "the stream ended" }
            }
            do { try await clock.sleep(for: backoff.failed()) } catch { return outcome }
        }
    }

    /// Tells ``onChange`` about a change of state, off the play loop.
    fileprivate func notify(_ status: Status) {
        guard let handler = state.withLock({ $0.changeHandler }) else { return }
        _ = notifications.schedule(after: .zero) { handler(status) }
    }

    /// A stream in the pool: its session's control and where the session's updates go.
    ///
    final class Entry: Sendable {
        private struct Shared {
            var status: Status
            var task: OwnedTask<PlaybackOutcome>?
            weak var pool: PreloadPool?
        }

        let url: String
        let control: PlaybackControl
        let route: UpdateRoute
        private let state: Mutex<Shared>

        init(url: String, control: PlaybackControl, pool: PreloadPool) {
            self.url = url
            self.control = control
            state = Mutex(
                Shared(
                    status: Status(
                        url: url, state: .connecting, attempts: 0, bytesSinceReady: 0, secondsSinceReady: 0,
                        reason: nil, bufferedBytes: 0),
                    pool: pool))
            route = UpdateRoute()
            route.redirect(to: { [weak self] update in self?.preloading(update) })
        }

        /// The task that runs its sessions: set once, when the pool starts it.
        var task: OwnedTask<PlaybackOutcome>? {
            get { state.withLock { $0.task } }
            set { state.withLock { $0.task = newValue } }
        }

        var status: Status {
            var status = state.withLock { $0.status }
            status.bufferedBytes = control.published.standbyBytes
            return status
        }

        /// Whether the poster is ready to be shown.
        var isReady: Bool { status.state == .ready }

        func update(_ change: (inout Status) -> Void) {
            let (before, after, pool) = state.withLock {
                let before = $0.status.state
                change(&$0.status)
                return (before, $0.status, $0.pool)
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
                state.withLock {
                    guard $0.status.state == .ready else { return }
                    $0.status.bytesSinceReady += Int64(status.netSpeedKbps) * 125
                    $0.status.secondsSinceReady += 1
                }
            case .state:
                break
            }
        }
    }
}
