import Logging
import NIOCore

/// The server's one clock: paces the program on one event loop and hands each tick's chunk to the
/// ``ClientHub`` of every loop. Lives on its loop; all methods run there.
final class LiveFLVBroadcaster {
    private let program: LiveFLVProgram
    private let configuration: LiveFLVServer.Configuration
    private let hubs: [ObjectIdentifier: NIOLoopBound<ClientHub>]
    private let loop: any EventLoop
    private let counters: Locked<LiveFLVServer.Statistics>
    private let logger: Logger
    private let allocator = ByteBufferAllocator()
    private var schedule: LiveFLVSchedule
    private var clockSchedule: WallClockSchedule?
    private var cache: GOPCache
    private var startTime = NIODeadline.now()
    private var timer: Scheduled<Void>?
    private var finished = false
    private var stopped = false
    /// Seconds of stream a second (``LiveFLVServer/Configuration/speed``), at least a thousandth.
    private var speed: Double { max(0.001, configuration.speed) }

    init(
        program: LiveFLVProgram, configuration: LiveFLVServer.Configuration,
        hubs: [ObjectIdentifier: NIOLoopBound<ClientHub>], loop: any EventLoop,
        counters: Locked<LiveFLVServer.Statistics>, logger: Logger
    ) {
        self.program = program
        self.configuration = configuration
        self.hubs = hubs
        self.loop = loop
        self.counters = counters
        self.logger = logger
        self.schedule = LiveFLVSchedule(program: program, loops: configuration.loops)
        self.cache = GOPCache(history: configuration.startPtsWindow ?? .zero)
        self.clockSchedule = configuration.speed == 1
            ? configuration.wallClockInterval.map(WallClockSchedule.init(interval:)) : nil
    }

    func start() {
        startTime = .now()
        tick()
    }

    func stop() {
        stopped = true
        timer?.cancel()
        timer = nil
    }

    /// Sends everything due (media, then a wall-clock stamp if one is due), then sleeps until the next
    /// tag or stamp is due (at least one tick interval).
    private func tick() {
        guard !stopped else { return }
        // Both clocks are read together, so a stamp pairs one instant's wall time and stream time.
        let now = NIODeadline.now()
        let wallClockMs = clockSchedule == nil ? 0 : configuration.wallClock()
        // Stream time: wall time since the start, times the speed.
        let elapsed = Duration.nanoseconds((now - startTime).nanoseconds) * speed
        let loopsBefore = schedule.completedLoops
        let emissions = schedule.due(at: elapsed)
        let stamp = clockSchedule?.tick(
            at: elapsed, streamMs: schedule.timestamp(at: elapsed), wallClockMs: wallClockMs)
        if !emissions.isEmpty || stamp != nil {
            let chunk = LiveChunk(program: program, emissions: emissions, clockStamp: stamp, allocator: allocator)
            if configuration.gopCache {
                cache.append(chunk)
            }
            for hub in hubs.values {
                hub.eventLoop.execute { hub.value.broadcast(chunk) }
            }
            let loops = schedule.completedLoops
            counters.withLock {
                $0.tagsSent += emissions.count
                $0.clockStampsSent += stamp == nil ? 0 : 1
                $0.completedLoops = loops
            }
            if loops != loopsBefore {
                logger.debug("program looped", metadata: ["loops": "\(loops)"])
            }
        }
        guard let nextDue = schedule.nextDue else {
            finished = true
            for hub in hubs.values {
                hub.eventLoop.execute { hub.value.finishAll() }
            }
            return
        }
        let nextWake = clockSchedule.map { min(nextDue, $0.nextDue) } ?? nextDue
        let deadline = max(
            startTime + TimeAmount(nextWake / speed), now + TimeAmount(configuration.tickInterval))
        timer = loop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in tick() }
    }

    /// Starts a session: stream header, metadata and sequence headers, then (if asked) the GOP cache, or the GOPs
    /// from the one `startPts` names, then the latest tick's wall-clock stamp, so a player can measure latency before
    /// the next periodic one. The start goes to the session's loop before any later chunk does, so nothing is lost or
    /// doubled.
    func subscribe(_ session: NIOLoopBound<LiveFLVHTTPHandler>, useCache: Bool, startPts: Int64?) {
        let caches = useCache && configuration.gopCache
        let asked = configuration.startPtsWindow == nil || !caches
            ? nil : startPts.flatMap { cache.buffers(startingAt: $0, liveEdge: schedule.lastTimestamp) }
        let cached = asked?.buffers ?? (caches ? cache.buffers : [])
        let timestamp = asked?.timestamp ?? (caches ? cache.startTimestamp ?? schedule.lastTimestamp
            : schedule.lastTimestamp)
        var head = allocator.buffer(capacity: 1024)
        head.writeImmutableBuffer(program.streamHeader)
        if let metadata = program.metadata {
            FLVTagWriter.write(type: 18, timestamp: timestamp, body: metadata, into: &head)
        }
        for video in program.videoSequenceHeaders {
            FLVTagWriter.write(type: 9, timestamp: timestamp, body: video, into: &head)
        }
        for audio in program.audioSequenceHeaders {
            FLVTagWriter.write(type: 8, timestamp: timestamp, body: audio, into: &head)
        }
        // The stamp goes last: its stream time is the latest tick's, at or after every cached tag.
        let stamp = self.finished ? nil : clockSchedule?.latest
        let initial = [head] + cached + (stamp.map { [$0.tag(allocator: allocator)] } ?? [])
        let finished = finished
        guard let hub = hubs[ObjectIdentifier(session.eventLoop)] else { return }
        session.eventLoop.execute {
            session.value.startStream(initial: initial, hub: hub.value, finished: finished)
        }
    }
}

/// The live sessions on one event loop; receives each chunk once per loop and writes it to each session.
final class ClientHub {
    private var sessions: [ObjectIdentifier: LiveFLVHTTPHandler] = [:]

    func add(_ session: LiveFLVHTTPHandler) {
        sessions[ObjectIdentifier(session)] = session
    }

    func remove(_ session: LiveFLVHTTPHandler) {
        sessions.removeValue(forKey: ObjectIdentifier(session))
    }

    func broadcast(_ chunk: LiveChunk) {
        for session in sessions.values {
            session.deliver(chunk)
        }
    }

    /// The program ended (no loop): end every body.
    func finishAll() {
        for session in Array(sessions.values) {
            session.finishStream()
        }
    }
}
