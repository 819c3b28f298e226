import Foundation
public import LivePlay
public import Prometheus
import Synchronization

/// What a monitored stream is doing, as `liveplay_stream_state` names it.
public enum StreamState: String, Sendable, CaseIterable {
    /// Media plays.
    case playing
    /// Connected, waiting for the buffer to fill (a first start, or after a stall).
    case loading
    /// Connecting, or reconnecting after a loss.
    case connecting
    /// The player gave up; the monitor tries again after a backoff.
    case down
}

/// One stream's Prometheus series, fed by its player's events and net status (docs/monitoring.md). Counters only
/// grow: the player's per-session totals are turned into increments, and a new session starts from 0 again.
public final class StreamMetrics: Sendable {
    public let id: String
    private let registry: PrometheusCollectorRegistry
    /// The bookkeeping the player's events and net status and the monitor's scrapes share. Series are registered and
    /// unregistered under it (the registry's lock calls nothing back), so a stream that retired registers none again.
    private let books = Mutex(Books())
    private let labels: [(String, String)]
    private let up: Gauge
    private let states: [StreamState: Gauge]
    private let latency: Gauge
    private let buffered: Gauge
    private let rate: Gauge
    private let stalls: Counter
    private let stallSeconds: Counter
    private let receivedBytes: Counter
    private let framesShown: Counter
    private let framesDropped: Counter
    private let lastEventAge: Gauge
    /// Every stream's start-up times, in one histogram each for the whole monitor (a thousand streams' buckets were
    /// half the page); each stream's last start is a gauge (``Books/lastStart``).
    private let firstFrame: ValueHistogram
    private let connect: ValueHistogram
    private let reconnects: [String: Counter]

    private struct Books {
        var events: [Int: Counter] = [:]
        /// The last session's start-up times, registered with the first: no stream shows a start it never made.
        var lastStart: [MetricName: Gauge] = [:]
        var info: (key: [String], gauge: Gauge)?
        /// The current session's totals so far, to turn into increments.
        var session = SessionTotals()
        var lastEventAt: ContinuousClock.Instant?
        var startedSessionTimeline = false
        /// The session's reconnects by reason as its last state told them.
        var reconnectsSeen: [TransportErrorCode: Int] = [:]
        /// A stream played from a LAS manifest: the rendition playing and the switches between renditions, registered
        /// with its first net status that names a rendition (a stream played from its URL has neither).
        var rendition: (playing: Gauge, switches: Counter)?
        /// Unregistered: a player still stopping must not register series again.
        var retired = false
    }

    private struct SessionTotals {
        var stutters = 0
        var stutterMilliseconds = 0
        var receivedBytes: Int64 = 0
        var framesShown = 0
        var droppedFrames = 0
        var renditionSwitches = 0
    }

    /// Seconds buckets for start-up times: a lab's first frame in milliseconds, a CDN's in a second or two.
    static let startupBuckets: [Double] = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10]

    public init(id: String, registry: PrometheusCollectorRegistry) {
        self.id = id
        self.registry = registry
        let labels = [("stream", id)]
        self.labels = labels
        up = registry.gauge(.up, labels)
        states = Dictionary(uniqueKeysWithValues: StreamState.allCases.map { state in
            (state, registry.gauge(.state, labels + [("state", state.rawValue)]))
        })
        latency = registry.gauge(.latency, labels)
        buffered = registry.gauge(.buffered, labels)
        rate = registry.gauge(.rate, labels)
        stalls = registry.counter(.stalls, labels)
        stallSeconds = registry.counter(.stallSeconds, labels)
        receivedBytes = registry.counter(.receivedBytes, labels)
        framesShown = registry.counter(.framesShown, labels)
        framesDropped = registry.counter(.framesDropped, labels)
        lastEventAge = registry.gauge(.lastEventAge, labels)
        firstFrame = registry.histogram(.firstFrame, [], buckets: Self.startupBuckets)
        connect = registry.histogram(.connect, [], buckets: Self.startupBuckets)
        // Every reason at 0 from the start: `increase()` over a series that appears with its first reconnect
        // misses that reconnect, and a dashboard's `sum by (reason)` would show nothing rather than 0.
        reconnects = Dictionary(uniqueKeysWithValues: Self.reconnectReasons.map { reason in
            (reason, registry.counter(.reconnects, labels + [("reason", reason)]))
        })
        set(.connecting)
    }

    /// The stream's state; `down` also ends the session's totals (the next session counts from 0).
    public func set(_ state: StreamState) {
        up.set(to: state == .playing ? 1.0 : 0.0)
        for (each, gauge) in states { gauge.set(to: each == state ? 1.0 : 0.0) }
        if state == .down {
            books.withLock {
                $0.session = SessionTotals()
                $0.startedSessionTimeline = false
                $0.reconnectsSeen = [:]
            }
        }
    }

    /// A new session begins (the player started again).
    public func sessionStarted() {
        books.withLock {
            $0.session = SessionTotals()
            $0.startedSessionTimeline = false
            $0.reconnectsSeen = [:]
        }
        set(.connecting)
    }

    public func record(_ event: PlayEvent, at now: ContinuousClock.Instant = .now) {
        let code = Int(event.code.rawValue)
        let counter = books.withLock { books -> Counter? in
            books.lastEventAt = now
            if let counter = books.events[code] { return counter }
            guard !books.retired else { return nil }
            let counter = registry.counter(.events, labels + [("code", String(code))])
            books.events[code] = counter
            return counter
        }
        guard let counter else { return }
        counter.increment()
    }

    /// A session's reconnects so far, by reason, as its playback state tells them: what is new since the last state
    /// is counted.
    public func reconnected(_ counts: [TransportErrorCode: Int]) {
        let new = books.withLock { books in
            defer { books.reconnectsSeen = counts }
            return counts.map { ($0.key, $0.value - books.reconnectsSeen[$0.key, default: 0]) }.filter { $0.1 > 0 }
        }
        for (reason, count) in new {
            let counter = reconnects[reason.rawValue] ?? reconnects["other"]
            counter?.increment(by: Int64(count))
        }
    }

    /// The session's startup, as its playback state tells it once the first picture was shown: the time to connect
    /// and to the first frame, recorded once a session.
    public func started(_ startup: StartupTimeline) {
        let first = books.withLock { books in
            defer { books.startedSessionTimeline = true }
            return !books.startedSessionTimeline
        }
        guard first else { return }
        if let shown = startup.firstShown ?? startup.firstKeyframe {
            firstFrame.record(shown.seconds)
            setLast(.lastFirstFrame, to: shown.seconds)
        }
        if let connected = startup.connected {
            connect.record(connected.seconds)
            setLast(.lastConnect, to: connected.seconds)
        }
    }

    /// A reconnect, by its reason (`restart`: the monitor started the player again after it gave up).
    public func reconnect(reason: String?) {
        let counter = reason.flatMap { reconnects[$0] } ?? reconnects["other"]
        counter?.increment()
    }

    /// The reasons 2103 gives (docs/event-log.md), the monitor's own `restart`, and `other` for a reason this list
    /// does not know yet: a bounded label set, every one of them on the page from the start.
    static let reconnectReasons = [
        "dns_failed", "connect_failed", "handshake_failed", "server_closed", "read_failed", "no_data", "too_slow",
        "http_status", "protocol_violation", "restart", "other",
    ]

    public func update(_ status: NetStatus, protocol kind: String) {
        switch status.state {
        case "playing", "paused": set(.playing)
        case "loading": set(.loading)
        default: set(.connecting)
        }
        latency.set(to: Double(status.latencyMilliseconds) / 1000)
        buffered.set(to: Double(status.cacheMilliseconds) / 1000)
        rate.set(to: status.rate)
        let increments = books.withLock { books -> SessionTotals in
            let previous = books.session
            let session = SessionTotals(
                stutters: max(status.stutters, previous.stutters),
                stutterMilliseconds: max(status.stutterMilliseconds, previous.stutterMilliseconds),
                receivedBytes: max(status.receivedBytes, previous.receivedBytes),
                framesShown: max(status.framesShown, previous.framesShown),
                droppedFrames: max(status.droppedFrames, previous.droppedFrames),
                renditionSwitches: max(status.renditionSwitches, previous.renditionSwitches))
            books.session = session
            return SessionTotals(
                stutters: session.stutters - previous.stutters,
                stutterMilliseconds: session.stutterMilliseconds - previous.stutterMilliseconds,
                receivedBytes: session.receivedBytes - previous.receivedBytes,
                framesShown: session.framesShown - previous.framesShown,
                droppedFrames: session.droppedFrames - previous.droppedFrames,
                renditionSwitches: session.renditionSwitches - previous.renditionSwitches)
        }
        if let id = status.rendition, let series = renditionSeries() {
            series.playing.set(to: Double(id))
            if increments.renditionSwitches > 0 { series.switches.increment(by: Int64(increments.renditionSwitches)) }
        }
        if increments.stutters > 0 { stalls.increment(by: Int64(increments.stutters)) }
        if increments.stutterMilliseconds > 0 { stallSeconds.increment(by: Double(increments.stutterMilliseconds) / 1000) }
        if increments.receivedBytes > 0 { receivedBytes.increment(by: increments.receivedBytes) }
        if increments.framesShown > 0 { framesShown.increment(by: Int64(increments.framesShown)) }
        if increments.droppedFrames > 0 { framesDropped.increment(by: Int64(increments.droppedFrames)) }
        let key = Self.infoLabels(status, protocol: kind)
        let replaced = books.withLock { books -> (old: Gauge?, new: Gauge?) in
            let names = key.map { "\($0)=\($1)" }
            guard books.info?.key != names, !books.retired else { return (nil, nil) }
            let gauge = registry.gauge(.info, labels + key)
            defer { books.info = (names, gauge) }
            return (books.info?.gauge, gauge)
        }
        if let old = replaced.old { registry.unregisterGauge(old) }
        replaced.new?.set(to: 1.0)
    }

    /// `liveplay_stream_info`'s labels besides `stream`: what is not known or not there (an audio-only stream's
    /// picture, a silent stream's sound) is left out rather than written as `width="0"` or `audio_codec=""`.
    static func infoLabels(_ status: NetStatus, protocol kind: String) -> [(String, String)] {
        var labels = [("protocol", kind)]
        if !status.videoCodec.isEmpty { labels.append(("video_codec", status.videoCodec)) }
        if !status.audioCodec.isEmpty { labels.append(("audio_codec", status.audioCodec)) }
        // What decodes the picture (`h264 (nvdec)`, `h264 (software)`); absent in probe mode, which decodes nothing.
        if !status.decoder.isEmpty { labels.append(("decoder", status.decoder)) }
        if status.videoWidth > 0, status.videoHeight > 0 {
            labels += [("width", String(status.videoWidth)), ("height", String(status.videoHeight))]
        }
        return labels
    }

    /// Brings `liveplay_last_event_age_seconds` up to `now` (just before a scrape).
    public func refresh(at now: ContinuousClock.Instant = .now) {
        guard let at = books.withLock({ $0.lastEventAt }) else { return }
        lastEventAge.set(to: (now - at).secondsValue)
    }

    /// Removes every series of this stream (it left the list).
    public func unregister() {
        books.withLock { books in
            books.retired = true
            for gauge in [up, latency, buffered, rate, lastEventAge] + Array(states.values) + Array(books.lastStart.values)
                + [books.info?.gauge, books.rendition?.playing].compactMap({ $0 })
            {
                registry.unregisterGauge(gauge)
            }
            for counter in [stalls, stallSeconds, receivedBytes, framesShown, framesDropped] + Array(reconnects.values)
                + Array(books.events.values) + [books.rendition?.switches].compactMap({ $0 })
            {
                registry.unregisterCounter(counter)
            }
        }
    }

    private func renditionSeries() -> (playing: Gauge, switches: Counter)? {
        books.withLock { books in
            if let series = books.rendition { return series }
            guard !books.retired else { return nil }
            let series = (registry.gauge(.rendition, labels), registry.counter(.renditionSwitches, labels))
            books.rendition = series
            return series
        }
    }

    private func setLast(_ name: MetricName, to seconds: Double) {
        let gauge = books.withLock { books -> Gauge? in
            if let gauge = books.lastStart[name] { return gauge }
            guard !books.retired else { return nil }
            let gauge = registry.gauge(name, labels)
            books.lastStart[name] = gauge
            return gauge
        }
        gauge?.set(to: seconds)
    }
}

/// Every metric family a stream has, named as Prometheus asks (one `liveplay_` prefix, base units, `_total` for
/// counters), with its HELP text.
enum MetricName: String {
    case up, state, latency, buffered, rate, stalls, stallSeconds, receivedBytes, framesShown, framesDropped
    case lastEventAge, firstFrame, connect, lastFirstFrame, lastConnect, reconnects, events, info, monitorStreams, probeSuccess, probeDuration
    case probeFailure, rendition, renditionSwitches

    var descriptor: MetricNameDescriptor {
        let (name, unit, help): (String, String, String) =
            switch self {
            case .up: ("up", "", "1 while the stream plays, 0 otherwise.")
            case .state: ("stream_state", "", "1 for the stream's state: playing, loading, connecting or down.")
            case .latency: ("latency", "seconds", "Live edge minus playback position.")
            case .buffered: ("buffered", "seconds", "Media buffered ahead of the position.")
            case .rate: ("playback_rate", "", "Playback rate (1 normal, above 1 catching up).")
            case .stalls: ("stalls", "total", "Stalls longer than 500 ms (PLAY_WARNING_VIDEO_PLAY_LAG).")
            case .stallSeconds: ("stall_seconds", "total", "Time spent stalled.")
            case .receivedBytes: ("received_bytes", "total", "Media bytes received.")
            case .framesShown: ("frames_shown", "total", "Pictures decoded and presented.")
            case .framesDropped: ("frames_dropped", "total", "Pictures dropped: skipped GOPs, buffer limits, late frames.")
            case .lastEventAge: ("last_event_age", "seconds", "Time since the stream's player last reported an event.")
            case .firstFrame: ("first_frame", "seconds", "From starting a session to its first picture (probe: keyframe).")
            case .connect: ("connect", "seconds", "From starting a session to connected.")
            case .lastFirstFrame: ("last_first_frame", "seconds", "The stream's last session: its start to its first picture.")
            case .lastConnect: ("last_connect", "seconds", "The stream's last session: its start to connected.")
            case .reconnects: ("reconnects", "total", "Reconnects, by reason.")
            case .events: ("events", "total", "Player events, by TXLivePlayer / liveplay code.")
            case .info: ("stream_info", "", "The stream's protocol, codecs, decoder and picture size, as labels; always 1.")
            case .monitorStreams: ("monitor_streams", "", "Streams this replica watches (its shard of the list).")
            case .probeSuccess: ("probe_success", "", "1 if the target played during the probe.")
            case .probeDuration: ("probe_duration", "seconds", "How long the probe took.")
            case .rendition: ("rendition", "", "The LAS manifest's rendition playing, by its id (streams played from a manifest).")
            case .renditionSwitches: ("rendition_switches", "total", "Switches between a LAS manifest's renditions.")
            case .probeFailure:
                ("probe_failure", "", "1, labelled with why the probe failed (a timeout before the first picture, an error's symbol).")
            }
        return MetricNameDescriptor(namespace: "liveplay", metricName: name, unitName: unit, helpText: help)
    }
}

extension PrometheusCollectorRegistry {
    func gauge(_ name: MetricName, _ labels: [(String, String)] = []) -> Gauge {
        makeGauge(descriptor: name.descriptor, labels: labels)
    }

    func counter(_ name: MetricName, _ labels: [(String, String)]) -> Counter {
        makeCounter(descriptor: name.descriptor, labels: labels)
    }

    func histogram(_ name: MetricName, _ labels: [(String, String)], buckets: [Double]) -> ValueHistogram {
        makeValueHistogram(descriptor: name.descriptor, labels: labels, buckets: buckets)
    }
}
