public import LivePlayCore
public import LivePlayFLV
public import Logging

/// What the ``ConnectionSupervisor`` tells the play loop, in order.
public enum SupervisorEvent: Sendable {
    /// A connection attempt starts (0 = the first).
    case attempt(Int)
    /// What the connection reports: resolved, connected, handshake done, stream began, media on demand.
    case event(TransportEvent)
    /// One read's worth of media: how many bytes arrived, and the FLV elements they completed.
    case media(byteCount: Int, [FLVElement])
    /// Media arrives below ``GoodputLimits/warnBelow`` of real time (once, until it keeps up again).
    case slowLink(goodput: Double)
    /// The bytes are not FLV (an HTML page, another format): no reconnect can help; nothing follows.
    case unplayable(String)
    /// The connection failed or was lost; the policy's decision comes with it (retry after a delay, or give up).
    case lost(TransportError, ReconnectPolicy.Action)
    /// The stream finished by design.
    case finished
    /// The source ended inside an FLV tag: `bytes` of a tag that never completed were left (a file cut short).
    /// ``finished`` follows.
    case endedInsideTag(bytes: Int)
    /// The server asked for a reconnect (Enhanced RTMP's ReconnectRequest), to `tcUrl` when given: the connection
    /// ended before a keyframe and the next attempt follows at once, outside the retry budget.
    case moved(tcUrl: String?)
    /// Playing from a backup, the first source answered a probe with a keyframe again: playback moves back to it at
    /// once, between two reads, outside the retry budget (``SourceRotation``).
    case firstSourceBack
}

/// Which track of a multitrack stream (Enhanced RTMP v2) plays for one media kind; `track` nil is the default
/// (the lowest id). Chosen by the play loop, carried out by the demuxer of every connection from then on.
public struct TrackSelection: Sendable, Hashable {
    public var kind: MediaKind
    public var track: UInt8?

    public init(kind: MediaKind, track: UInt8?) {
        self.kind = kind
        self.track = track
    }
}

/// How fast media must arrive: below ``minimum`` of real time, measured over ``window`` once the playback is
/// that old, a connection counts as lost (``TransportError/Code/tooSlow``); below ``warnBelow`` it is a warning.
public struct GoodputLimits: Sendable, Hashable {
    public var minimum: Double
    public var window: Duration
    public var warnBelow: Double
    /// The sliding window goodput is measured over.
    public var measuredOver: Duration

    public init(minimum: Double, window: Duration, warnBelow: Double, measuredOver: Duration) {
        self.minimum = minimum
        self.window = window
        self.warnBelow = warnBelow
        self.measuredOver = measuredOver
    }
}

/// Owns the connections of one playback: makes the source a URL names, connects, reads, frames the bytes
/// into FLV elements, judges goodput, and reconnects as the ``ReconnectPolicy`` says, handing every event
/// to the play loop in order.
///
/// The play loop never chooses a transport, touches the HTTP client or asks for a connection to be dropped:
/// ``withSource(for:options:logger:timer:_:)`` makes the source and keeps the client alive exactly as long as
/// the playback, and ``run(from:deliver:)`` is the connect–read–retry loop. Goodput is judged here, once:
/// media time received per time passed (``GoodputMeter``), on the clock the player passes in.
public struct ConnectionSupervisor: Sendable {
    public let source: any ByteSource
    /// Where the stream is too, tried in order when the source fails (``SourceRotation``).
    public let backups: [any ByteSource]
    private let policy: ReconnectPolicy
    /// How often the first source is tried while a backup plays: doubled after each failed probe, up to 12 times.
    private let probeInterval: Duration
    private let goodput: GoodputLimits
    private let now: @Sendable () -> Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    private let payloads: PayloadPool?

    /// - Parameters:
    ///   - now: the player's clock, as time since its playback started.
    ///   - sleep: the retry delay's timer, on the same clock.
    ///   - payloads: where packets' payloads come from (the decoder gives them back); nil, new arrays.
    public init(
        source: any ByteSource, backups: [any ByteSource] = [], probeInterval: Duration = .seconds(5),
        policy: ReconnectPolicy, goodput: GoodputLimits, now: @escaping @Sendable () -> Duration,
        sleep: @escaping @Sendable (Duration) async throws -> Void, payloads: PayloadPool? = nil
    ) {
        self.payloads = payloads
        self.source = source
        self.backups = backups
        self.probeInterval = probeInterval
        self.policy = policy
        self.goodput = goodput
        self.now = now
        self.sleep = sleep
    }

    /// Whether the source can start mid-file (media on demand: a file, an HTTP server honouring `Range`).
    public var seeksByOffset: Bool { source.makeConnection(startingAt: 0) != nil }

    /// Makes the source `url` names (`http(s)` HTTP-FLV, `rtmp(s)` RTMP, a path or `file://` a local file)
    /// and runs `body` with it. An HTTP-FLV source's client is shut down when `body` returns.
    ///
    /// - Parameter timer: times an HTTP response's handshake deadline and each body read's no-data timeout
    ///   (`nil`: the request's event loop).
    /// - Throws: ``TransportError/Code/invalidURL`` for a URL that names no source, or the HTTP client's
    ///   failure to shut down.
    /// ``withSource(for:options:logger:timer:_:)`` for each of `urls`: `body` gets their sources in order, and every
    /// HTTP client is shut down when it returns.
    public static func withSources<Result>(
        for urls: [String], options: TransportOptions, logger: Logger, timer: (any DeadlineTimer)?,
        _ body: ([any ByteSource]) async -> Result
    ) async throws(TransportError) -> Result {
        func opening(_ rest: ArraySlice<String>, _ opened: [any ByteSource]) async -> Swift.Result<Result, TransportError> {
            guard let url = rest.first else { return .success(await body(opened)) }
            do {
                return try await withSource(for: url, options: options, logger: logger, timer: timer) { source in
                    await opening(rest.dropFirst(), opened + [source])
                }
            } catch {
                return .failure(error)
            }
        }
        return try await opening(urls[...], []).get()
    }

    public static func withSource<Result>(
        for url: String, options: TransportOptions, logger: Logger, timer: (any DeadlineTimer)?,
        _ body: (any ByteSource) async -> Result
    ) async throws(TransportError) -> Result {
        switch try StreamURL.kind(of: url) {
        case .httpFLV:
            return try await HTTPConnectionPool.withPool(options: options, logger: logger) { pool in
                await body(HTTPFLVSource(url: url, options: options, pool: pool, logger: logger, timer: timer))
            }
        case .rtmp:
            return await body(RTMPSource(url: url, options: options, logger: logger))
        case .file:
            let path = (try? StreamAddress(parsing: url).path) ?? url
            return await body(FileByteSource(path: path))
        }
    }

    /// Connects (from byte `offset` when given and the source can), reads, and reconnects as the policy says,
    /// until the stream finishes, the policy gives up, the bytes are not FLV, `deliver` refuses an event, or
    /// the task is cancelled.
    ///
    /// - Parameters:
    ///   - tracks: the tracks to play from the start (nil: each kind's default).
    ///   - deliver: hands one event to the play loop, waiting while it is full (backpressure); `false` stops.
    ///   - trackRequests: the play loop's track choices since it was last asked, polled before each read is
    ///     demuxed; they hold for later connections too.
    public func run(
        from offset: Int64?, tracks: (video: UInt8?, audio: UInt8?) = (nil, nil),
        deliver: (SupervisorEvent) async -> Bool, trackRequests: () -> [TrackSelection] = { [] }
    ) async {
        // While a backup plays, a child task probes the first source; the read loop looks at its answer between reads.
        await withTaskGroup(of: Void.self) { probes in
            await read(
                from: offset, tracks: tracks, deliver: deliver, trackRequests: trackRequests,
                probe: { answer in probes.addTask { await probeFirstSource(answer: answer) } })
            probes.cancelAll()
        }
    }

    /// Tries the first source every ``probeInterval`` (doubling after a failure, at most 12 times that) until one
    /// connection gives a video keyframe (or, for a stream without video, media) within its handshake and no-data
    /// limits; then says so, and ends. Cancelled with the read loop.
    private func probeFirstSource(answer: Latch<Void>) async {
        var backoff = Backoff(initial: probeInterval, maximum: probeInterval * 12)
        while !Task.isCancelled {
            do {
                try await sleep(backoff.failed())
            } catch {
                return
            }
            let connection = source.makeConnection()
            var demuxer = FLVDemuxer()
            var media = false
            var audioPackets = 0
            do throws(TransportError) {
                reading: while let event = try await connection.next() {
                    switch event {
                    case .bytes(let bytes): demuxer.append(bytes)
                    case .tags(let tags): for tag in tags { demuxer.append(tag: tag) }
                    default: continue
                    }
                    while let element = try? demuxer.nextElement() {
                        guard case .packet(let packet) = element else { continue }
                        // A video keyframe, or, for a stream without video, a second or so of sound.
                        if packet.kind == .audio { audioPackets += 1 }
                        if packet.kind == .video ? packet.isKeyframe : audioPackets >= 50 {
                            media = true
                            break reading
                        }
                    }
                }
            } catch {
                media = false
            }
            await connection.close()
            if media {
                answer.set(())
                return
            }
        }
    }

    private func read(
        from offset: Int64?, tracks: (video: UInt8?, audio: UInt8?), deliver: (SupervisorEvent) async -> Bool,
        trackRequests: () -> [TrackSelection], probe: (Latch<Void>) -> Void
    ) async {
        var sources = [source] + backups
        var rotation = SourceRotation(policy: policy, sources: sources.count)
        /// The answer of the probe of the first source that runs (started when a backup's turn began; it ends when it
        /// finds the source playing, and sets this).
        var firstSource: Latch<Void>?
        var attempt = 0
        var tracks = tracks
        var source = source
        /// Tells the play loop what the loss leads to and waits its delay; false when playback stops here.
        func next(after error: TransportError, _ action: ReconnectPolicy.Action) async -> Bool {
            guard await deliver(.lost(error, action)) else { return false }
            let delay: Duration
            switch action {
            case .giveUp: return false
            case .retry(_, let after), .nextSource(_, let after): delay = after
            }
            do {
                try await sleep(delay)
                return true
            } catch {
                return false
            }
        }
        connecting: while !Task.isCancelled {
            if rotation.current != 0, firstSource == nil {
                let answer = Latch<Void>()
                firstSource = answer
                probe(answer)
            }
            guard await deliver(.attempt(attempt)) else { return }
            let connection = offset.flatMap(source.makeConnection(startingAt:)) ?? source.makeConnection()
            // A start point asked of the first request (LAS's startPts) is not asked again: a reconnect wants the edge.
            if let plain = source.reconnecting {
                source = plain
                sources = sources.map { $0.reconnecting ?? $0 }
            }
            var move: String??
            var downgraded = false
            var reading = ConnectionReading(limits: goodput, tracks: tracks, startsAt: offset, payloads: payloads)
            do throws(TransportError) {
                while let event = try await connection.next() {
                    for request in trackRequests() {
                        reading.select(request)
                        switch request.kind {
                        case .video: tracks.video = request.track
                        case .audio: tracks.audio = request.track
                        }
                    }
                    let (elements, failure): ([FLVElement], FLVError?)
                    switch event {
                    case .bytes(let bytes):
                        (elements, failure) = reading.demux(bytes, at: now())
                    case .tags(let tags):
                        (elements, failure) = (reading.demux(tags, at: now()), nil)
                    case .moveRequested(let tcUrl):
                        move = .some(tcUrl)
                        continue
                    case .enhancedConnectRefused:
                        // The source connects plainly from now on: again at once, no loss, no retry counted.
                        downgraded = true
                        continue
                    default:
                        if case .onDemand = event { reading.isOnDemand = true }
                        guard await deliver(.event(event)) else { return await connection.close() }
                        continue
                    }
                    reading.byteCount += event.mediaByteCount
                    rotation.connectionDelivered(media: reading.mediaDelivered)
                    guard await deliver(.media(byteCount: event.mediaByteCount, elements)) else {
                        return await connection.close()
                    }
                    if firstSource?.value != nil {
                        firstSource = nil
                        if rotation.current != 0 {
                            // Back to the first source between two reads: the buffer covers the new connection.
                            await connection.close()
                            guard await deliver(.firstSourceBack) else { return }
                            rotation.backToFirst()
                            source = sources[0]
                            continue connecting
                        }
                    }
                    if let failure {
                        await connection.close()
                        _ = await deliver(.unplayable("not an FLV stream: \(failure.message)"))
                        return
                    }
                    if let offset, let wrong = reading.notTagsAtStart {
                        // Read from a keyframe's offset (the file's index), what came is not tags: the server did
                        // not send that part of the file. Playing on would resynchronise on garbage.
                        await connection.close()
                        _ = await deliver(
                            .unplayable(
                                "what the server sent from byte \(offset) of the file on is not its FLV tags "
                                    + "(\(wrong.message)): it did not honour the Range request"))
                        return
                    }
                    // Media on demand is read only as fast as it plays (a pause holds the reads back): its pace
                    // says nothing about the link.
                    if !reading.isOnDemand, let warning = try reading.judgeGoodput(at: now()) {
                        guard await deliver(.slowLink(goodput: warning)) else { return await connection.close() }
                    }
                }
                await connection.close()
                if downgraded { continue }
                if let move {
                    // A planned move: no loss, no retry counted, no delay; the same stream from the new application.
                    if let tcUrl = move, let moved = source.moved(toTcUrl: tcUrl) { source = moved }
                    guard await deliver(.moved(tcUrl: move)) else { return }
                    continue
                }
                if sources.count > 1, !reading.isOnDemand {
                    // A live stream that ends on one source goes on from the next, where it still plays.
                    let ended = TransportError(.serverClosed, "the stream ended")
                    let action = rotation.connectionLost(ended, ended: true)
                    if case .nextSource = action {
                        guard await next(after: ended, action) else { return }
                        source = sources[rotation.current]
                        continue
                    }
                }
                if reading.leftoverBytes > 0 {
                    guard await deliver(.endedInsideTag(bytes: reading.leftoverBytes)) else { return }
                }
                _ = await deliver(.finished)
                return
            } catch {
                await connection.close()
                if Task.isCancelled { return }
                let action = rotation.connectionLost(error)
                guard await next(after: error, action) else { return }
                source = sources[rotation.current]
                if case .retry(let number, _) = action { attempt = number }
            }
        }
    }
}

/// One connection's framing and goodput: the FLV demuxer its bytes go through, and how fast media arrives.
private struct ConnectionReading {
    let limits: GoodputLimits
    private var demuxer: FLVDemuxer
    private var meter: GoodputMeter
    /// Media received, summed from plausible timestamp steps, so a jump in the timestamps is not goodput.
    private var progress = MediaProgress()
    private var lagging = false
    /// Media bytes this connection delivered so far.
    var byteCount = 0
    /// The source said it is media on demand: read at the pace it plays, so its goodput is not judged.
    var isOnDemand = false
    /// Bytes the demuxer holds of a tag that has not completed.
    var leftoverBytes: Int { demuxer.bufferedByteCount }
    /// Media time this connection delivered so far (plausible timestamp steps only).
    var mediaDelivered: Duration { .milliseconds(Int64(clamping: progress.milliseconds)) }
    /// The connection starts mid-file, where a tag should begin: a malformed tag before the first packet says the
    /// bytes there are not the file's (the missing sequence headers of a read from a keyframe are expected).
    private let startsMidFile: Bool
    private var sawPacket = false
    private(set) var notTagsAtStart: FLVError?
    /// Each read's elements, handed out and refilled: the play loop has let go of a read's by the next one (but
    /// for the hand-off's queue), so the array keeps its storage.
    private var elements: [FLVElement] = []

    init(
        limits: GoodputLimits, tracks: (video: UInt8?, audio: UInt8?), startsAt offset: Int64? = nil,
        payloads: PayloadPool?
    ) {
        startsMidFile = (offset ?? 0) > 0
        self.limits = limits
        meter = GoodputMeter(window: limits.measuredOver)
        demuxer = FLVDemuxer(
            configuration: FLVDemuxer.Configuration(videoTrack: tracks.video, audioTrack: tracks.audio),
            payloads: payloads)
    }

    mutating func select(_ selection: TrackSelection) {
        demuxer.select(selection.kind, track: selection.track)
    }

    /// The elements `bytes` complete (each packet counts towards goodput), and the error that stopped the
    /// demuxer if the bytes are not FLV.
    mutating func demux(_ bytes: [UInt8], at now: Duration) -> (elements: [FLVElement], failure: FLVError?) {
        demuxer.append(bytes)
        return drain(at: now)
    }

    /// The elements already framed tags make (RTMP): the same tag parser, no bytes.
    mutating func demux(_ tags: [FLVTag], at now: Duration) -> [FLVElement] {
        for tag in tags { demuxer.append(tag: tag) }
        return drain(at: now).elements
    }

    private mutating func drain(at now: Duration) -> (elements: [FLVElement], failure: FLVError?) {
        elements.removeAll(keepingCapacity: true)
        while true {
            let next: FLVElement?
            do {
                next = try demuxer.nextElement()
            } catch {
                return (elements, error)
            }
            guard let element = next else { break }
            if startsMidFile, !sawPacket, case .warning(let warning) = element, warning.code != .missingConfiguration {
                notTagsAtStart = warning
                return (elements, nil)
            }
            if case .packet(let packet) = element {
                sawPacket = true
                progress.record(
                    type: packet.kind == .video ? 9 : 8, timestamp: UInt32(truncatingIfNeeded: packet.dts.milliseconds))
                meter.record(media: MediaTimestamp(milliseconds: Int64(progress.milliseconds)), at: now)
            }
            elements.append(element)
        }
        return (elements, nil)
    }

    /// A link delivering media far below real time is lost, not merely slow (thrown); a little below is a
    /// warning (returned once, until it keeps up again).
    mutating func judgeGoodput(at now: Duration) throws(TransportError) -> Double? {
        guard let rate = meter.goodput(at: now) else { return nil }
        if rate < limits.minimum, now >= limits.window {
            throw TransportError(.tooSlow, "receiving \(Int(rate * 100)) % of real time")
        }
        guard rate < limits.warnBelow else {
            lagging = false
            return nil
        }
        guard !lagging else { return nil }
        lagging = true
        return rate
    }
}
