import Foundation
public import LivePlay
import LivePlayTransport
public import Prometheus
import Synchronization

/// What the monitor itself does to a stream, for the log (its players' events go to their own listeners).
public struct MonitorNote: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// A player starts (the first time, after a change of the list, or after a backoff).
        case started
        /// The player gave up (its reconnects failed) or the stream ended: down until the next start.
        case down
        /// The stream left the list, or its line changed (then `started` follows).
        case stopped
    }

    public var stream: String
    public var kind: Kind
    /// `down`: how long until the next start.
    public var retryIn: Duration?
    public var outcome: String?
}

/// How the monitor plays each stream.
public struct MonitorOptions: Sendable {
    /// Every stream's starting point: probe mode (no decoding) unless a line says `--decode`.
    public var configuration: LivePlayConfiguration
    /// Wait before starting a player that gave up again: doubled each time up to ``maximumBackoff``, back to
    /// ``initialBackoff`` once the stream played.
    public var initialBackoff: Duration
    public var maximumBackoff: Duration
    /// How often a probe stream's play loop advances when nothing arrives: a probe presents nothing, so nothing
    /// falls due to turn it, and this bounds how late a stall is seen. A stream that decodes keeps
    /// ``configuration``'s, turning as its pictures fall due.
    public var probeTickInterval: Duration
    /// Streams started a second at most when many start at once (the first list, a reload that adds many): a
    /// thousand players connecting in the same instant, each taking a GOP cache's burst, starve one another of
    /// the cores and stall.
    public var startsPerSecond: Double

    public init(
        configuration: LivePlayConfiguration = LivePlayConfiguration(decodes: false), initialBackoff: Duration = .seconds(2),
        maximumBackoff: Duration = .seconds(60), probeTickInterval: Duration = .milliseconds(50),
        startsPerSecond: Double = 100
    ) {
        self.startsPerSecond = startsPerSecond
        self.configuration = configuration
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.probeTickInterval = probeTickInterval
    }

    /// The configuration for one stream: its line's `--decode` and `--mode auto|speed|smooth`.
    public func configuration(for stream: MonitoredStream) -> LivePlayConfiguration {
        var configuration = configuration
        var words = stream.options[...]
        while let word = words.popFirst() {
            switch word {
            case "--decode": configuration.decodes = true
            case "--mode":
                if let mode = words.popFirst().flatMap(LatencyMode.init(rawValue:)) { configuration.latency = .preset(mode) }
            default: break
            }
        }
        if !configuration.decodes { configuration.tickInterval = probeTickInterval }
        return configuration
    }

    /// How long the `index`th of the streams starting together waits (``startsPerSecond``).
    public func startDelay(_ index: Int) -> Duration {
        guard startsPerSecond > 0, startsPerSecond.isFinite else { return .zero }
        return .milliseconds(Int64((Double(index) / startsPerSecond * 1000).rounded(.down)))
    }

    /// The options a stream's line may carry.
    public static func check(_ stream: MonitoredStream) -> String? {
        var words = stream.options[...]
        while let word = words.popFirst() {
            switch word {
            case "--decode": continue
            case "--mode":
                guard words.popFirst().flatMap(LatencyMode.init(rawValue:)) != nil else {
                    return "--mode takes auto, speed or smooth"
                }
            default: return "unknown option \(word) (a line takes --decode and --mode M)"
            }
        }
        return nil
    }
}

/// Plays every stream of a list that belongs to this shard, each with TXLivePlayer's reconnect policy and, when
/// that gives up, again after a backoff, for as long as the stream is on the list: a monitor never gives up on a
/// stream, it reports it down (docs/monitoring.md). ``load(_:)`` replaces the list; only the streams whose line
/// changed restart, the others keep playing and keep their counters.
///
/// One structured ``run()``: a child task per stream; cancelling it stops them all.
public final class Monitor: Sendable {
    public let shard: Shard
    public let options: MonitorOptions
    public let registry: PrometheusCollectorRegistry
    private let listeners: @Sendable (MonitoredStream) -> (any LivePlayListener)?
    private let onNote: @Sendable (MonitorNote) -> Void
    /// What the streams' players run on and the monitor waits by (start delays, backoff).
    private let clock: any SessionClock
    /// What ``load(_:)``, the scrapes and the run share. Stop signals fire and retired metrics unregister outside it.
    private let state = Mutex(State())
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let streamCount: Gauge

    private struct State {
        var wanted: [MonitoredStream] = []
        var running: [String: (stream: MonitoredStream, stop: StopRequest<Void>)] = [:]
        var metrics: [String: StreamMetrics] = [:]
    }

    /// - Parameters:
    ///   - listeners: another listener for a stream's players (the CLI's JSON log), besides the metrics.
    ///   - onNote: what the monitor did to a stream.
    ///   - clock: what the streams' players run on and the monitor waits by: the real clock, or a test's virtual one.
    public init(
        shard: Shard = .whole, options: MonitorOptions = MonitorOptions(),
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        listeners: @escaping @Sendable (MonitoredStream) -> (any LivePlayListener)? = { _ in nil },
        onNote: @escaping @Sendable (MonitorNote) -> Void = { _ in }, clock: any SessionClock = ContinuousClock()
    ) {
        self.shard = shard
        self.options = options
        self.registry = registry
        self.listeners = listeners
        self.onNote = onNote
        self.clock = clock
        (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        streamCount = registry.gauge(.monitorStreams)
    }

    /// Takes a new list: the streams of this shard play, the rest are left to the other replicas. Returns what
    /// changes for this shard.
    @discardableResult
    public func load(_ streams: [MonitoredStream]) -> MonitorPlan {
        let mine = streams.filter { shard.owns($0.id) }
        let plan = state.withLock { state in
            defer { state.wanted = mine }
            return MonitorPlan(from: state.wanted, to: mine)
        }
        streamCount.set(to: Double(mine.count))
        wake.yield()
        return plan
    }

    /// The streams this shard watches.
    public var streams: [MonitoredStream] { state.withLock { $0.wanted } }

    /// Brings every stream's `liveplay_last_event_age_seconds` up to now: call before a scrape.
    public func refresh() {
        let all = state.withLock { Array($0.metrics.values) }
        let now = ContinuousClock.now
        for stream in all { stream.refresh(at: now) }
    }

    /// Plays the list until cancelled.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            var iterator = wakes.makeAsyncIterator()
            repeat {
                for (index, stream) in reconcile().enumerated() {
                    let delay = options.startDelay(index)
                    group.addTask { await self.watch(stream.stream, stop: stream.stop, after: delay) }
                }
            } while await iterator.next() != nil && !Task.isCancelled
            for entry in state.withLock({ Array($0.running.values) }) { entry.stop.request() }
            group.cancelAll()
        }
    }

    /// Stops what left the list or changed, and returns what to start.
    private func reconcile() -> [(stream: MonitoredStream, stop: StopRequest<Void>)] {
        let changes = state.withLock { state in
            let plan = MonitorPlan(from: state.running.values.map(\.stream), to: state.wanted)
            var changes = Reconciled()
            for id in plan.stop + plan.restart.map(\.id) {
                if let stop = state.running.removeValue(forKey: id)?.stop { changes.stops.append(stop) }
                changes.stopped.append(id)
            }
            changes.retired = plan.stop.compactMap { state.metrics.removeValue(forKey: $0) }
            for stream in plan.start + plan.restart {
                let entry = (stream: stream, stop: StopRequest<Void>())
                state.running[stream.id] = entry
                if state.metrics[stream.id] == nil {
                    state.metrics[stream.id] = StreamMetrics(id: stream.id, registry: registry)
                }
                changes.starts.append(entry)
            }
            return changes
        }
        for stop in changes.stops { stop.request() }
        for metrics in changes.retired { metrics.unregister() }
        for id in changes.stopped { onNote(MonitorNote(stream: id, kind: .stopped)) }
        return changes.starts
    }

    /// What ``reconcile()`` decided under the lock, to act on outside it.
    private struct Reconciled {
        var starts: [(stream: MonitoredStream, stop: StopRequest<Void>)] = []
        var stops: [StopRequest<Void>] = []
        var retired: [StreamMetrics] = []
        var stopped: [String] = []
    }

    /// One stream, for as long as it is on the list: play; when the player gives up, down, wait, play again.
    private func watch(_ stream: MonitoredStream, stop: StopRequest<Void>, after delay: Duration) async {
        guard let metrics = state.withLock({ $0.metrics[stream.id] }) else { return }
        if delay > .zero {
            metrics.set(.connecting)
            guard await stop.race({ [clock] in try? await clock.sleep(for: delay) }) != nil, !Task.isCancelled else { return }
        }
        let kind = ((try? StreamURL.kind(of: stream.url)) ?? .httpFLV).rawValue
        var backoff = Backoff(initial: options.initialBackoff, maximum: options.maximumBackoff)
        var first = true
        while !stop.isRequested, !Task.isCancelled {
            if !first { metrics.reconnect(reason: "restart") }
            first = false
            metrics.sessionStarted()
            onNote(MonitorNote(stream: stream.id, kind: .started))
            let listener = StreamListener(metrics: metrics, protocol: kind, other: listeners(stream))
            let player = LivePlayer(configuration: options.configuration(for: stream), clock: clock)
            player.listener = listener
            let outcome = await stop.race { await player.run(url: stream.url) }
            guard !stop.isRequested, !Task.isCancelled, let outcome else { return }
            metrics.set(.down)
            if listener.played { backoff.succeeded() }
            let wait = backoff.failed()
            onNote(MonitorNote(stream: stream.id, kind: .down, retryIn: wait, outcome: "\(outcome)"))
            guard await stop.race({ [clock] in try? await clock.sleep(for: wait) }) != nil else { return }
        }
    }
}

/// A stream's player (or a probe's) reports to its metrics and to the caller's listener, and remembers whether
/// media played.
final class StreamListener: LivePlayListener, Sendable {
    let metrics: StreamMetrics
    let kind: String
    let other: (any LivePlayListener)?
    private let progress = Mutex((connected: false, played: false))

    init(metrics: StreamMetrics, protocol kind: String, other: (any LivePlayListener)?) {
        self.metrics = metrics
        self.kind = kind
        self.other = other
    }

    var played: Bool { progress.withLock { $0.played } }
    /// A connection was made (2001), whether or not media then played.
    var connected: Bool { progress.withLock { $0.connected } }

    func onPlayEvent(_ event: PlayEvent) {
        if event.code == .playBegin { progress.withLock { $0.played = true } }
        if event.code == .connectSucceeded { progress.withLock { $0.connected = true } }
        metrics.record(event)
        other?.onPlayEvent(event)
    }

    func onNetStatus(_ status: NetStatus) {
        metrics.update(status, protocol: kind)
        other?.onNetStatus(status)
    }

    func onStateChange(_ state: PlaybackState) {
        if let startup = state.startup { metrics.started(startup) }
        metrics.reconnected(state.reconnects)
        other?.onStateChange(state)
    }
}
