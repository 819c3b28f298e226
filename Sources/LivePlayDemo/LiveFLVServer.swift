public import LivePlayFLV
public import Logging
public import NIOCore
import NIOHTTP1
import NIOPosix

/// A live HTTP-FLV origin for tests, benches and people: loops an FLV file in real time with timestamps
/// that keep rising, serves it to many clients at once, and keeps a GOP cache so a new client starts at
/// the last keyframe (as SRS and CDNs do).
///
/// ```swift
/// let server = try LiveFLVServer(path: "stream.flv", logger: logger)
/// let port = try await server.start()          // http://127.0.0.1:\(port)/live.flv
/// await server.stop()
/// ```
///
/// Requests (`GET`, any path ending in `.flv`):
/// - `/NAME.flv` — the live stream: FLV header, metadata and sequence headers, then the GOP cache, then
///   the latest wall-clock stamp, then tags as they come due. Query options: `gop=0` starts without the
///   cache (the first video arrives at the next keyframe); `startPts=MS` starts at an older GOP (LAS's smooth
///   switch, ``Configuration/startPtsWindow``); `chunked=0` sends a close-delimited body
///   instead of a chunked one; `close_after=SECONDS` ends the body after that long (a live stream that
///   finishes).
/// - `/file.flv` — the whole file once with `Content-Length` (a finished file), as is: no stamps.
/// - anything else — `404`.
///
/// With ``Configuration/wallClockInterval`` set (1 s by default) the live stream also carries an
/// `onLivePlayClock` script tag per interval pairing the server's wall clock with the stream timestamp
/// (``WallClockStamp``, docs/wall-clock-tags.md), so a player can report end-to-end latency.
///
/// One timer on one event loop paces the stream for all clients; each tick's tags are serialised once
/// into one `ByteBuffer` that every client's channel writes (no per-client copy). A client whose
/// unsent bytes exceed ``Configuration/maximumPendingBytes`` is slow: by default it is disconnected
/// (``SlowClientPolicy/disconnect``), or it skips tags until it has drained and the next keyframe comes
/// (``SlowClientPolicy/skipToKeyframe``).
public final class LiveFLVServer: Sendable {
    /// What to do with a client that cannot keep up.
    public enum SlowClientPolicy: String, Sendable, CaseIterable {
        /// Close the connection, as most CDN edges do.
        case disconnect
        /// Stop sending; once the backlog has drained to half the limit, resume at the next keyframe.
        case skipToKeyframe = "skip-to-keyframe"
    }

    public struct Configuration: Sendable {
        /// Loopback only: 127.0.0.1, ::1 or localhost.
        public var host: String
        /// 0 picks a free port.
        public var port: Int
        /// Start new clients at the last keyframe (`gop=0` on a request turns it off for that client).
        public var gopCache: Bool
        /// Loop the file forever; otherwise every live body ends with the file.
        public var loops: Bool
        /// Unsent bytes a client may have queued before it counts as slow.
        public var maximumPendingBytes: Int
        public var slowClientPolicy: SlowClientPolicy
        /// Shortest time between two pacing ticks; tags due in between go out together.
        public var tickInterval: Duration
        /// Event loop threads when the server makes its own group.
        public var threads: Int
        /// Time between wall-clock stamps (`onLivePlayClock` script tags, docs/wall-clock-tags.md), at least
        /// 1 ms; `nil` sends none.
        public var wallClockInterval: Duration?
        /// The wall clock the stamps carry, in Unix epoch milliseconds; injectable for tests.
        public var wallClock: @Sendable () -> Int64
        /// How many seconds of stream go out each second (above 0): above 1, a test plays minutes of a live
        /// stream in seconds. Then stream time no longer follows the wall clock, so no stamps are sent.
        public var speed: Double = 1
        /// How far back a request may ask to start (LAS's `startPts=MS`: the GOP of the keyframe at that presentation
        /// time, or, negative, that far behind the live edge): GOPs are kept that long. nil: `startPts` is ignored, as
        /// a server that does not speak LAS does.
        public var startPtsWindow: Duration? = .seconds(10)

        public init(
            host: String = "127.0.0.1", port: Int = 0, gopCache: Bool = true, loops: Bool = true,
            maximumPendingBytes: Int = 8 << 20, slowClientPolicy: SlowClientPolicy = .disconnect,
            tickInterval: Duration = .milliseconds(10), threads: Int = System.coreCount,
            wallClockInterval: Duration? = .seconds(1),
            wallClock: @escaping @Sendable () -> Int64 = WallClockStamp.systemMilliseconds
        ) {
            self.host = host
            self.port = port
            self.gopCache = gopCache
            self.loops = loops
            self.maximumPendingBytes = maximumPendingBytes
            self.slowClientPolicy = slowClientPolicy
            self.tickInterval = tickInterval
            self.threads = threads
            self.wallClockInterval = wallClockInterval
            self.wallClock = wallClock
        }
    }

    /// Counters since start.
    public struct Statistics: Sendable, Equatable {
        public var activeClients = 0
        public var servedClients = 0
        public var slowClientsDisconnected = 0
        public var slowClientsSkipped = 0
        /// Media tags broadcast (wall-clock stamps not counted).
        public var tagsSent = 0
        /// Periodic wall-clock stamps broadcast (the one each joining client gets not counted).
        public var clockStampsSent = 0
        public var completedLoops: Int64 = 0
    }

    /// The program served (the first rendition's, when there are several).
    public var program: LiveFLVProgram { renditions[0].program }
    /// What is served, by stream name (`/NAME.flv`); one rendition with the name "" answers any name.
    public let renditions: [(name: String, program: LiveFLVProgram)]
    public let configuration: Configuration
    private let logger: Logger
    private let group: any EventLoopGroup
    private let ownsGroup: Bool
    private let state = Locked(State.idle)
    private let counters = Locked(Statistics())
    private let channels = Locked([ObjectIdentifier: any Channel]())

    private enum State {
        case idle
        case running(any Channel, [NIOLoopBound<LiveFLVBroadcaster>])
        case stopped
    }

    /// Serves the FLV file at `path`.
    public convenience init(
        path: String, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "liveplay.lab.server"), group: (any EventLoopGroup)? = nil
    ) throws(DemoError) {
        try self.init(
            program: LiveFLVProgram(contentsOfFile: path), configuration: configuration, logger: logger, group: group)
    }

    /// Serves FLV bytes.
    public convenience init(
        bytes: [UInt8], configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "liveplay.lab.server"), group: (any EventLoopGroup)? = nil
    ) throws(DemoError) {
        try self.init(program: LiveFLVProgram(bytes: bytes), configuration: configuration, logger: logger, group: group)
    }

    /// Serves a parsed program; `group` is used as is (and not shut down) when given.
    public convenience init(
        program: LiveFLVProgram, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "liveplay.lab.server"), group: (any EventLoopGroup)? = nil
    ) {
        self.init(renditions: [("", program)], configuration: configuration, logger: logger, group: group)
    }

    /// Serves renditions of one programme, each at `/NAME.flv`, paced by one clock from one instant: renditions
    /// made with the same GOP (``LivePlayTesting``'s `rendition*` fixtures) go out with their keyframes at the same
    /// timestamps at the same moment, as a LAS origin's do. Any other name is a 404.
    public init(
        renditions: [(name: String, program: LiveFLVProgram)], configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "liveplay.lab.server"), group: (any EventLoopGroup)? = nil
    ) {
        precondition(!renditions.isEmpty, "a server serves at least one program")
        self.renditions = renditions
        self.configuration = configuration
        self.logger = logger
        self.group = group ?? MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.threads))
        self.ownsGroup = group == nil
    }

    public var statistics: Statistics { counters.withLock { $0 } }

    /// Binds, starts the stream clock, and returns the bound port.
    public func start() async throws -> Int {
        let address = try Loopback.address(configuration.host)
        guard case .idle = state.withLock({ $0 }) else { throw DemoError(.invalidState, "server already started") }
        let clock = group.next()
        let configuration = configuration
        let counters = counters
        let logger = logger
        var broadcasters: [NIOLoopBound<LiveFLVBroadcaster>] = []
        var cores: [String: ServerCore] = [:]
        for (name, program) in renditions {
            // Each rendition has its clients on every loop, fed by its own broadcaster on the one clock loop.
            var hubs: [ObjectIdentifier: NIOLoopBound<ClientHub>] = [:]
            for loop in group.makeIterator() {
                hubs[ObjectIdentifier(loop)] = try await loop.submit { NIOLoopBound(ClientHub(), eventLoop: loop) }.get()
            }
            let finalHubs = hubs
            let broadcaster = try await clock.submit {
                NIOLoopBound(
                    LiveFLVBroadcaster(
                        program: program, configuration: configuration, hubs: finalHubs, loop: clock, counters: counters,
                        logger: logger),
                    eventLoop: clock)
            }.get()
            broadcasters.append(broadcaster)
            cores[name] = ServerCore(
                program: program, configuration: configuration, broadcaster: broadcaster, counters: counters,
                logger: logger)
        }
        let routes = ServerRoutes(cores: cores)
        let channels = channels
        let watermark = ChannelOptions.Types.WriteBufferWaterMark(
            low: max(1, configuration.maximumPendingBytes / 2), high: max(2, configuration.maximumPendingBytes))
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.writeBufferWaterMark, value: watermark)
            .childChannelInitializer { channel in
                let id = ObjectIdentifier(channel)
                channels.withLock { $0[id] = channel }
                channel.closeFuture.whenComplete { _ in channels.withLock { _ = $0.removeValue(forKey: id) } }
                return channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                    try sync.addHandler(LiveFLVHTTPHandler(routes: routes))
                }
            }
        let serverChannel: any Channel
        do {
            serverChannel = try await bootstrap.bind(host: address, port: configuration.port).get()
        } catch {
            throw DemoError(.networkFailed, "cannot bind \(address):\(configuration.port)", cause: error)
        }
        state.withLock { $0 = .running(serverChannel, broadcasters) }
        // One turn of the clock loop starts them all: the renditions' timelines begin at the same instant.
        let all = broadcasters
        try await clock.submit { for broadcaster in all { broadcaster.value.start() } }.get()
        let port = serverChannel.localAddress?.port ?? 0
        logger.info(
            "live FLV server listening",
            metadata: ["port": "\(port)", "tags": "\(program.tags.count)", "loopPeriodMs": "\(program.loopPeriod)"])
        return port
    }

    /// The bound port while running.
    public var port: Int? {
        guard case .running(let channel, _) = state.withLock({ $0 }) else { return nil }
        return channel.localAddress?.port
    }

    /// Stops the clock, closes the listener and every connection.
    public func stop() async {
        let previous = state.withLock { state in
            defer { state = .stopped }
            return state
        }
        if case .stopped = previous { return }
        if case .running(let serverChannel, let broadcasters) = previous {
            for broadcaster in broadcasters {
                try? await broadcaster.eventLoop.submit { broadcaster.value.stop() }.get()
            }
            try? await serverChannel.close()
            for channel in channels.withLock({ Array($0.values) }) {
                try? await channel.close()
            }
        }
        if ownsGroup {
            try? await group.shutdownGracefully()
        }
    }
}

/// Which rendition a request's path names: `/NAME.flv`, or any name when the server has one rendition named "".
struct ServerRoutes: Sendable {
    let cores: [String: ServerCore]

    func core(for path: String) -> ServerCore? {
        let file = path.split(separator: "/").last ?? ""
        return cores[String(file.dropLast(".flv".count))] ?? cores[""]
    }
}

/// What request handlers share: the program, the configuration and the way to the broadcaster.
final class ServerCore: Sendable {
    let program: LiveFLVProgram
    let configuration: LiveFLVServer.Configuration
    let broadcaster: NIOLoopBound<LiveFLVBroadcaster>
    let counters: Locked<LiveFLVServer.Statistics>
    let logger: Logger

    init(
        program: LiveFLVProgram, configuration: LiveFLVServer.Configuration,
        broadcaster: NIOLoopBound<LiveFLVBroadcaster>, counters: Locked<LiveFLVServer.Statistics>, logger: Logger
    ) {
        self.program = program
        self.configuration = configuration
        self.broadcaster = broadcaster
        self.counters = counters
        self.logger = logger
    }

    /// Hands a live session to the broadcaster, which starts it on its own loop in stream order.
    func subscribe(_ session: NIOLoopBound<LiveFLVHTTPHandler>, useCache: Bool, startPts: Int64?) {
        let broadcaster = broadcaster
        broadcaster.eventLoop.execute {
            broadcaster.value.subscribe(session, useCache: useCache, startPts: startPts)
        }
    }
}
