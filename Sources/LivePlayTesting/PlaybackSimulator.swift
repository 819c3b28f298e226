public import LivePlay
public import LivePlayBuffering
public import LivePlayCore

/// A reproducible network trace: every packet of a synthetic live stream with the wall time it was
/// produced at the source and the wall time it arrived at the player.
public struct NetworkTrace: Sendable {
    public struct Arrival: Sendable {
        public var packet: EncodedPacket
        public var producedAt: Duration
        public var arrivesAt: Duration
    }

    public enum Kind: String, Sendable, CaseIterable {
        case steady
        case jitter200ms = "jitter ±200 ms"
        case outage3s = "3 s outage + burst"
        case outages1sEvery10s = "1 s outage / 10 s"
        case bandwidth70 = "70 % bandwidth 20 s"
        case gopCacheBurst = "GOP-cache burst"
        case bursty = "bursty on/off"
        case fastSource = "source +0.5 %"
    }

    public var kind: Kind
    public var arrivals: [Arrival]
    public var duration: Duration
    /// When the trace's outage ends (for recovery time), if it has one.
    public var outageEnds: [Duration]

    /// A 30 fps, 2 Mbit/s, 2 s-GOP stream with 128 kbit/s AAC, `duration` long, delivered as `kind` says.
    public static func make(_ kind: Kind, duration: Duration = .seconds(180), seed: UInt64 = 1) -> NetworkTrace {
        var random = SplitMix(seed: seed)
        let networkDelay = Duration.milliseconds(50)
        let speed = kind == .fastSource ? 1.005 : 1.0
        let cacheLead = kind == .gopCacheBurst ? Duration.seconds(2) : .zero
        var packets: [EncodedPacket] = []
        let frameCount = Int(duration.seconds * 30)
        let audioCount = Int(duration.seconds * 44_100 / 1024)
        var audioIndex = 0
        for frame in 0..<frameCount {
            let dts = Int64((Double(frame) * 1000 / 30).rounded())
            while audioIndex < audioCount, Int64(Double(audioIndex) * 1024_000 / 44_100) <= dts {
                let ts = MediaTimestamp(milliseconds: Int64(Double(audioIndex) * 1024_000 / 44_100))
                packets.append(EncodedPacket(kind: .audio, dts: ts, pts: ts, isKeyframe: true, payload: []))
                audioIndex += 1
            }
            let key = frame % 60 == 0
            let ts = MediaTimestamp(milliseconds: dts)
            packets.append(EncodedPacket(kind: .video, dts: ts, pts: ts, isKeyframe: key, payload: []))
        }
        func size(_ packet: EncodedPacket) -> Int {
            packet.kind == .audio ? 371 : (packet.isKeyframe ? 60_000 : 7_500)
        }
        let bitrate = 2_128_000.0 / 8
        // The link is four times the stream's bitrate: what TCP held back in an outage, a GOP cache's burst,
        // arrive at that speed, not in one instant.
        let linkCapacity = 4 * bitrate
        var arrivals: [Arrival] = []
        var previous = Duration.zero
        var outageEnds: [Duration] = []
        switch kind {
        case .outage3s: outageEnds = [.seconds(63)]
        case .outages1sEvery10s:
            outageEnds = stride(from: 11, to: Int(duration.seconds), by: 10).map { .seconds($0) }
        default: break
        }
        for packet in packets {
            let media = Duration.milliseconds(packet.dts.milliseconds)
            let produced = Duration.seconds(media.seconds / speed) - cacheLead
            var arrives = produced + networkDelay
            switch kind {
            case .steady, .fastSource:
                break
            case .jitter200ms:
                arrives += .milliseconds(Int64(random.next(in: -200...200)))
                arrives = max(arrives, produced + .milliseconds(5))
            case .outage3s:
                if produced >= .seconds(60), produced < .seconds(63) { arrives = .seconds(63) }
            case .outages1sEvery10s:
                let second = Int(produced.seconds)
                if second >= 10, second % 10 == 0 { arrives = .seconds(second + 1) }
            case .bandwidth70:
                if previous >= .seconds(60), previous < .seconds(80) {
                    arrives = max(arrives, previous + .seconds(Double(size(packet)) / (0.7 * bitrate)))
                }
            case .gopCacheBurst:
                arrives = max(arrives, .milliseconds(50))
            case .bursty:
                let slot = 500.0
                arrives = .milliseconds(Int64((arrives.seconds * 1000 / slot).rounded(.up) * slot))
            }
            // TCP delivers in order, at most at the link's speed.
            arrives = max(arrives, previous + .seconds(Double(size(packet)) / linkCapacity))
            previous = arrives
            arrivals.append(Arrival(packet: packet, producedAt: produced, arrivesAt: arrives))
        }
        return NetworkTrace(kind: kind, arrivals: arrivals, duration: duration, outageEnds: outageEnds)
    }
}

/// Figures of one simulated run.
public struct PlaybackFigures: Sendable {
    public var stutters = 0
    public var stutterTime = Duration.zero
    public var loadingEvents = 0
    public var beginEvents = 0
    public var meanLatency = Duration.zero
    public var p95Latency = Duration.zero
    /// Longest time, after an outage ends, until latency is back within 200 ms of its pre-outage median.
    public var recovery: Duration?
    public var droppedFrames = 0
    /// `PLAY_WARNING_RECV_DATA_LAG` warnings for arrival gaps beyond the mode's tolerance.
    public var arrivalGapWarnings = 0
    public var timeOffNormalRate = Duration.zero
    public var maximumRate = 1.0
    public var latencyAtEnd = Duration.zero
    /// Latency samples (every 100 ms of playing), for tests.
    public var latencies: [(at: Duration, latency: Duration)] = []
    /// Buffered media when each stall ended.
    public var bufferedAtResume: [Duration] = []
}

/// Plays a ``NetworkTrace`` through the player's own play-out stage (``PacketPlayback``: the jitter buffer,
/// latency controller and events a ``LiveSession`` uses) on a virtual clock: no sleeping, same result every
/// run. What it counts is what the player reports: `PLAY_EVT_PLAY_LOADING`, `PLAY_EVT_PLAY_BEGIN`, the
/// arrival-gap `PLAY_WARNING_RECV_DATA_LAG`, and the player's own stutter statistics.
public enum PlaybackSimulator {
    public static func run(
        _ trace: NetworkTrace, parameters: LatencyParameters, step: Duration = .milliseconds(10)
    ) -> PlaybackFigures {
        let clock = VirtualClock()
        var events: [PlayEvent] = []
        let playback = PacketPlayback(
            configuration: LivePlayConfiguration(decodes: false, latency: parameters), clock: clock
        ) { events.append($0) }
        var figures = PlaybackFigures()
        var next = 0
        var now = Duration.zero
        var started = false
        var ended = false
        var stallStart: Duration?
        var lastSample = Duration.zero - .seconds(1)
        let speed = trace.kind == .fastSource ? 1.005 : 1.0
        let cacheLead = trace.kind == .gopCacheBurst ? Duration.seconds(2) : .zero
        let end = trace.duration + .seconds(2)
        while now <= end {
            clock.advance(to: VirtualClock.Instant(offset: now))
            while next < trace.arrivals.count, trace.arrivals[next].arrivesAt <= now {
                playback.receive(trace.arrivals[next].packet)
                next += 1
                // After the last packet the source has ended: running dry then is not a stall.
                if next == trace.arrivals.count { playback.endOfInput() }
            }
            let seen = events.count
            let endedBefore = ended
            ended = playback.advance()
            for event in events[seen...] {
                switch event.code {
                case .playLoading:
                    figures.loadingEvents += 1
                    stallStart = now
                case .playBegin:
                    figures.beginEvents += 1
                    if started, stallStart != nil, case .int(let buffered)? = event.parameters["buffered_ms"] {
                        figures.bufferedAtResume.append(.milliseconds(buffered))
                    }
                    started = true
                    stallStart = nil
                case .receiveDataLag:
                    figures.arrivalGapWarnings += 1
                default:
                    break
                }
            }
            let engine = playback.engine
            if !endedBefore {
                if engine.rate != 1.0 { figures.timeOffNormalRate += step }
                figures.maximumRate = max(figures.maximumRate, engine.rate)
            }
            if !endedBefore, started, engine.state == .playing, let position = engine.position,
                now - lastSample >= .milliseconds(100), now <= trace.duration
            {
                let media = Duration.milliseconds(position.milliseconds)
                let produced = Duration.seconds(media.seconds / speed) - cacheLead
                figures.latencies.append((now, now - produced))
                lastSample = now
            }
            now += step
        }
        figures.stutters = playback.statistics.stutters
        figures.stutterTime = playback.statistics.stutterTime
        if let stallStart, started {
            // A stall still open at the end counts too.
            let stalled = now - stallStart
            if stalled > parameters.videoBlockThreshold {
                figures.stutters += 1
                figures.stutterTime += stalled
            }
        }
        figures.droppedFrames = playback.engine.buffer.droppedVideoFrames
        let values = figures.latencies.map(\.latency).sorted()
        if !values.isEmpty {
            figures.meanLatency = .seconds(values.map(\.seconds).reduce(0, +) / Double(values.count))
            figures.p95Latency = values[min(values.count - 1, Int(Double(values.count) * 0.95))]
            figures.latencyAtEnd = figures.latencies.last!.latency
        }
        figures.recovery = recovery(figures.latencies, outageEnds: trace.outageEnds)
        return figures
    }

    /// Replays a recorded arrival trace (docs/arrival-trace.md) through the player's play-out stage on a
    /// virtual clock: each read's packets arrive at the time the real play loop took them. Returns the
    /// buffer latency and rate at every whole second up to `duration`, and the events the player reported.
    ///
    /// - Parameter sampledAt: when the real session reported each second's status (by second). A status is
    ///   sampled at that instant, after the reads the real loop had taken by then: a read a few milliseconds
    ///   after a second (the burst that ends a network stall) is on one side of the real report or the other, and
    ///   a replay that sampled on its own 10 ms grid put it on the wrong side as often as not. Without it, at the
    ///   first step at or after the whole second.
    public static func replay(
        _ reads: [ArrivalRead], parameters: LatencyParameters, duration: Duration, step: Duration = .milliseconds(10),
        sampledAt: [Int: Duration] = [:]
    ) -> (samples: [RunSample], events: [PlayEvent]) {
        var times = (1...max(1, Int(duration.seconds))).map { Duration.seconds($0) }[...]
        // The instant each second is sampled at: the real report's, or the second itself.
        let sampleTime = { (time: Duration) in sampledAt[Int(time.seconds.rounded())] ?? time }
        let clock = VirtualClock()
        var events: [PlayEvent] = []
        let playback = PacketPlayback(
            configuration: LivePlayConfiguration(decodes: false, latency: parameters), clock: clock
        ) { events.append($0) }
        var samples: [RunSample] = []
        // Media that arrived soonest after it was made arrived on time: the source's clock, for end-to-end latency.
        let onTime = reads.flatMap { read in read.packets.map { read.milliseconds - $0.dts } }.min() ?? 0
        var next = 0
        var now = Duration.zero
        /// Steps of the grid so far: `now` is `step * steps`, or a sample's instant before the next step.
        var steps = 0
        func take(until end: Duration, including: Bool) {
            /// Whether the next read is due by `end`.
            var due: Bool {
                guard next < reads.count else { return false }
                let time = Duration.milliseconds(reads[next].milliseconds)
                return time < end || (including && time == end)
            }
            while due {
                // The real loop took every read of a turn before the engine advanced, however far apart their times
                // (taking a large burst takes milliseconds): the rest of the turn is taken too, each read at its
                // time, and the engine advances after the last of them.
                let turn = reads[next].turn
                repeat {
                    let time = Duration.milliseconds(reads[next].milliseconds)
                    if time > now {
                        now = time
                        clock.advance(to: VirtualClock.Instant(offset: now))
                    }
                    if next > 0, reads[next].connection != reads[next - 1].connection { playback.beginConnection() }
                    for packet in reads[next].packets { playback.receive(packet.encodedPacket) }
                    next += 1
                } while turn != nil && next < reads.count && reads[next].turn == turn
                // Nor are two turns merged: the real loop advanced after each, deciding a skip or a resume on that
                // turn's reads at that turn's time, and a step that takes the next turn too decides on both (after
                // the process was held up, the backlog comes in turns a few milliseconds apart).
                if turn != nil, due { _ = playback.advance() }
            }
        }
        while now <= duration {
            clock.advance(to: VirtualClock.Instant(offset: now))
            // A report sampled now cannot be ordered against reads of its own millisecond (the trace's resolution):
            // the buffer before them is kept, and the real report must lie between it and the buffer after them.
            let reporting = times.first.map { now >= sampleTime($0) } ?? false
            var before: Duration?
            if reporting, next < reads.count, Duration.milliseconds(reads[next].milliseconds) <= now {
                take(until: now, including: false)
                _ = playback.advance()
                if next < reads.count, Duration.milliseconds(reads[next].milliseconds) == now {
                    before = playback.engine.bufferLatency
                }
            }
            take(until: now, including: true)
            _ = playback.advance()
            while let time = times.first, now >= sampleTime(time) {
                times.removeFirst()
                let engine = playback.engine
                var sample = RunSample(
                    second: Int((time.seconds).rounded()), latency: engine.bufferLatency,
                    playing: engine.state == .playing, rate: engine.rate,
                    endToEnd: engine.position.map { now - .milliseconds($0.milliseconds + onTime) })
                sample.latencyBeforeSameMillisecond = before
                samples.append(sample)
            }
            // The next step on the grid, or the next sample's instant if that comes first (off the grid).
            while step * (steps + 1) <= now { steps += 1 }
            let grid = step * (steps + 1)
            if let time = times.first.map(sampleTime), time > now, time < grid {
                now = time
            } else {
                steps += 1
                now = grid
            }
        }
        return (samples, events)
    }

    /// For each outage: time from its end until latency is within 200 ms of the median before it.
    static func recovery(_ samples: [(at: Duration, latency: Duration)], outageEnds: [Duration]) -> Duration? {
        var worst: Duration?
        for outageEnd in outageEnds {
            let before = samples.filter { $0.at < outageEnd - .seconds(1) && $0.at > outageEnd - .seconds(10) }
                .map(\.latency).sorted()
            guard !before.isEmpty else { continue }
            let normal = before[before.count / 2] + .milliseconds(200)
            let after = samples.filter { $0.at >= outageEnd }
            guard let back = after.first(where: { $0.latency <= normal }) else {
                worst = .seconds(999)
                continue
            }
            worst = max(worst ?? .zero, back.at - outageEnd)
        }
        return worst
    }

    /// The table every mode × trace, plus fixed caches of 1…5 s, in Markdown.
    public static func table(duration: Duration = .seconds(180)) -> String {
        var modes: [(String, LatencyParameters)] = LatencyMode.allCases.map { ($0.rawValue, .preset($0)) }
        modes += (1...5).map { ("fixed \($0) s", .fixed(.seconds($0))) }
        var lines = [
            "| trace | mode | stutters | stutter s | mean latency s | p95 latency s | recovery s | dropped frames | 2104 gaps | s at rate ≠ 1 | max rate |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for kind in NetworkTrace.Kind.allCases {
            let trace = NetworkTrace.make(kind, duration: duration)
            for (name, parameters) in modes {
                let figures = run(trace, parameters: parameters)
                let recovery = figures.recovery.map { format($0) } ?? "–"
                lines.append(
                    "| \(kind.rawValue) | \(name) | \(figures.stutters) | \(format(figures.stutterTime)) | "
                        + "\(format(figures.meanLatency)) | \(format(figures.p95Latency)) | \(recovery) | "
                        + "\(figures.droppedFrames) | \(figures.arrivalGapWarnings) | \(format(figures.timeOffNormalRate)) | "
                        + "\(String(format2: figures.maximumRate)) |")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The table of every mode and fixed caches of 1…5 s replayed on recorded traces, in Markdown.
    public static func table(traces fixtures: [TraceFixture]) -> String {
        var modes: [(String, LatencyParameters)] = LatencyMode.allCases.map { ($0.rawValue, .preset($0)) }
        modes += (1...5).map { ("fixed \($0) s", .fixed(.seconds($0))) }
        var lines = RunFigures.header
        for fixture in fixtures {
            for (name, parameters) in modes {
                let duration = Duration.seconds(fixture.samples.map(\.second).max() ?? 0)
                let replay = replay(fixture.arrivals, parameters: parameters, duration: duration)
                let figures = RunFigures(
                    samples: replay.samples, events: replay.events, impairments: fixture.scenario.impairments)
                lines.append(figures.row(fixture.scenario.name, name))
            }
        }
        return lines.joined(separator: "\n")
    }

    static func format(_ duration: Duration) -> String {
        String(format2: duration.seconds)
    }
}

extension String {
    /// Two decimals without Foundation.
    init(format2 value: Double) {
        let hundredths = Int((value * 100).rounded())
        let sign = hundredths < 0 ? "-" : ""
        let magnitude = abs(hundredths)
        let fraction = magnitude % 100
        self = "\(sign)\(magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}

/// A tiny deterministic generator (SplitMix64), so traces (and a test's random points) are the same on every
/// machine, and a failing run can be replayed from its seed.
public struct SplitMix: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}
