import LivePlayDemo
public import Logging
public import NIOCore
import NIOPosix

/// A TCP proxy that impairs a stream (HTTP-FLV, RTMP, anything) on its way to the player, with toxics
/// modelled on toxiproxy and a timeline that switches them on and off.
///
/// ```swift
/// let proxy = ImpairmentProxy(upstreamHost: "127.0.0.1", upstreamPort: serverPort,
///     timeline: try .parse("at=5s stall=3s; at=10s reset; at=15s down=4s"), logger: logger)
/// let port = try await proxy.start()
/// proxy.set(.latency(.milliseconds(200), jitter: .milliseconds(50)))
/// proxy.clear()
/// ```
///
/// Each accepted connection gets its own upstream connection on the same event loop and one
/// ``ToxicPipe`` per direction. Reads stop while a pipe holds more than
/// ``Configuration/maximumQueuedBytes``, so held bytes push back through TCP rather than piling up.
/// Toxics set through the runtime API or a proxy-relative timeline apply to every connection and to
/// new ones; a connection-relative timeline applies to each connection alone (its `down` still
/// takes the whole proxy down).
public final class ImpairmentProxy: Sendable {
    public struct Configuration: Sendable {
        /// Loopback only.
        public var listenHost: String
        /// 0 picks a free port.
        public var listenPort: Int
        /// Loopback only.
        public var upstreamHost: String
        public var upstreamPort: Int
        /// Toxics in force from the start.
        public var downstream: ToxicSet
        public var upstream: ToxicSet
        public var timeline: ImpairmentTimeline
        /// Bytes a direction may hold before the proxy stops reading its source.
        public var maximumQueuedBytes: Int
        public var threads: Int

        public init(
            listenHost: String = "127.0.0.1", listenPort: Int = 0, upstreamHost: String = "127.0.0.1",
            upstreamPort: Int, downstream: ToxicSet = ToxicSet(), upstream: ToxicSet = ToxicSet(),
            timeline: ImpairmentTimeline = ImpairmentTimeline(), maximumQueuedBytes: Int = 4 << 20,
            threads: Int = System.coreCount
        ) {
            self.listenHost = listenHost
            self.listenPort = listenPort
            self.upstreamHost = upstreamHost
            self.upstreamPort = upstreamPort
            self.downstream = downstream
            self.upstream = upstream
            self.timeline = timeline
            self.maximumQueuedBytes = maximumQueuedBytes
            self.threads = threads
        }
    }

    public struct Statistics: Sendable, Equatable {
        public var accepted = 0
        /// Connections accepted and reset at once because the proxy was down.
        public var refused = 0
        public var active = 0
        public var resets = 0
        public var upstreamConnectFailures = 0
    }

    public let configuration: Configuration
    let logger: Logger
    private let group: any EventLoopGroup
    private let ownsGroup: Bool
    let shared: Locked<SharedState>
    private let lifecycle = Locked(Lifecycle.idle)

    struct SharedState {
        var downstream: ToxicSet
        var upstream: ToxicSet
        var downUntil: NIODeadline?
        var connections: [ObjectIdentifier: NIOLoopBound<ProxyConnection>] = [:]
        var statistics = Statistics()
    }

    private enum Lifecycle {
        case idle
        case running(any Channel, [Scheduled<Void>])
        case stopped
    }

    public init(
        configuration: Configuration, logger: Logger = Logger(label: "liveplay.lab.proxy"),
        group: (any EventLoopGroup)? = nil
    ) {
        self.configuration = configuration
        self.logger = logger
        self.group = group ?? MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.threads))
        self.ownsGroup = group == nil
        self.shared = Locked(SharedState(downstream: configuration.downstream, upstream: configuration.upstream))
    }

    public convenience init(
        upstreamHost: String = "127.0.0.1", upstreamPort: Int, timeline: ImpairmentTimeline = ImpairmentTimeline(),
        logger: Logger = Logger(label: "liveplay.lab.proxy"), group: (any EventLoopGroup)? = nil
    ) {
        self.init(
            configuration: Configuration(upstreamHost: upstreamHost, upstreamPort: upstreamPort, timeline: timeline),
            logger: logger, group: group)
    }

    public var statistics: Statistics { shared.withLock { $0.statistics } }

    /// Binds the listener, starts a proxy-relative timeline, and returns the bound port.
    public func start() async throws -> Int {
        let listen = try Loopback.address(configuration.listenHost)
        let upstreamHost = try Loopback.address(configuration.upstreamHost)
        guard case .idle = lifecycle.withLock({ $0 }) else { throw LabError(.invalidState, "proxy already started") }
        let upstream = Upstream(
            host: upstreamHost, port: configuration.upstreamPort, maximumQueuedBytes: configuration.maximumQueuedBytes,
            timeline: configuration.timeline.origin == .connectionStart ? configuration.timeline.entries : [])
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try accept(channel, upstream: upstream)
                }
            }
        let serverChannel: any Channel
        do {
            serverChannel = try await bootstrap.bind(host: listen, port: configuration.listenPort).get()
        } catch {
            throw LabError(.networkFailed, "cannot bind \(listen):\(configuration.listenPort)", cause: error)
        }
        var timers: [Scheduled<Void>] = []
        if configuration.timeline.origin == .proxyStart {
            let loop = group.next()
            for entry in configuration.timeline.entries {
                timers.append(loop.scheduleTask(in: TimeAmount(entry.at)) { [self] in apply(entry.action) })
            }
        }
        lifecycle.withLock { $0 = .running(serverChannel, timers) }
        let port = serverChannel.localAddress?.port ?? 0
        logger.info(
            "impairment proxy listening",
            metadata: ["port": "\(port)", "upstream": "\(upstreamHost):\(configuration.upstreamPort)"])
        return port
    }

    public var port: Int? {
        guard case .running(let channel, _) = lifecycle.withLock({ $0 }) else { return nil }
        return channel.localAddress?.port
    }

    public func stop() async {
        let previous = lifecycle.withLock { state in
            defer { state = .stopped }
            return state
        }
        if case .stopped = previous { return }
        if case .running(let channel, let timers) = previous {
            for timer in timers { timer.cancel() }
            try? await channel.close()
            let connections = shared.withLock { Array($0.connections.values) }
            for connection in connections {
                try? await connection.eventLoop.submit { connection.value.close(reset: false) }.get()
            }
        }
        if ownsGroup {
            try? await group.shutdownGracefully()
        }
    }

    /// Adds a toxic on every connection, now and for new ones.
    public func set(_ toxic: Toxic, direction: ProxyDirection = .downstream) {
        apply(.set(toxic, direction))
    }

    /// Removes a toxic kind (all toxics when `nil`).
    public func clear(_ kind: Toxic.Kind? = nil, direction: ProxyDirection = .both) {
        apply(.clear(kind, direction))
    }

    /// Resets every open connection.
    public func reset() {
        apply(.reset)
    }

    /// Cuts every connection and refuses new ones for `duration`.
    public func down(for duration: Duration) {
        apply(.down(duration))
    }

    /// Applies an action to the proxy and every open connection.
    public func apply(_ action: ImpairmentAction) {
        let now = NIODeadline.now()
        logger.info("impairment", metadata: ["action": "\(action)"])
        let connections = shared.withLock { state in
            switch action {
            case .set(let toxic, let direction):
                if direction.includes(.downstream) { state.downstream.apply(toxic, now: now) }
                if direction.includes(.upstream) { state.upstream.apply(toxic, now: now) }
            case .clear(let kind, let direction):
                if direction.includes(.downstream) { state.downstream.clear(kind) }
                if direction.includes(.upstream) { state.upstream.clear(kind) }
            case .down(let duration):
                state.downUntil = now + TimeAmount(duration)
            case .reset:
                break
            }
            return Array(state.connections.values)
        }
        let connectionAction: ImpairmentAction = if case .down = action { .reset } else { action }
        for connection in connections {
            connection.eventLoop.execute { connection.value.apply(connectionAction, now: now) }
        }
    }

    /// Sets up an accepted connection, or resets it at once while the proxy is down.
    private func accept(_ channel: any Channel, upstream: Upstream) throws {
        let now = NIODeadline.now()
        let toxics = shared.withLock { state -> (ToxicSet, ToxicSet)? in
            state.statistics.accepted += 1
            if let until = state.downUntil, now < until {
                state.statistics.refused += 1
                return nil
            }
            state.statistics.active += 1
            return (state.downstream, state.upstream)
        }
        guard let (downstream, upstreamToxics) = toxics else {
            ProxyConnection.resetAndClose(channel)
            return
        }
        let connection = ProxyConnection(
            proxy: self, client: channel, downstream: downstream, upstream: upstreamToxics, settings: upstream)
        let bound = NIOLoopBound(connection, eventLoop: channel.eventLoop)
        shared.withLock { $0.connections[ObjectIdentifier(connection)] = bound }
        try channel.pipeline.syncOperations.addHandler(ProxySideHandler(connection: connection, side: .client))
        connection.connectUpstream()
    }

    func connectionClosed(_ connection: ProxyConnection, wasReset: Bool) {
        shared.withLock {
            $0.connections.removeValue(forKey: ObjectIdentifier(connection))
            $0.statistics.active -= 1
            if wasReset { $0.statistics.resets += 1 }
        }
    }

    func upstreamConnectFailed() {
        shared.withLock { $0.statistics.upstreamConnectFailures += 1 }
    }
}

/// Where and how a connection reaches upstream.
struct Upstream: Sendable {
    var host: String
    var port: Int
    var maximumQueuedBytes: Int
    /// Connection-relative timeline entries.
    var timeline: [ImpairmentTimeline.Entry]
}
