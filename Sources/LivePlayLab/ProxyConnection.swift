import Logging
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One proxied connection: the client's channel, its upstream channel on the same event loop, and a
/// ``ToxicPipe`` each way. Lives on that loop; all methods run there.
final class ProxyConnection {
    enum Side {
        case client, upstream
    }

    private let proxy: ImpairmentProxy
    private let client: any Channel
    private var upstream: (any Channel)?
    private let settings: Upstream
    /// Upstream to client.
    private var downstreamPipe: ToxicPipe
    /// Client to upstream.
    private var upstreamPipe: ToxicPipe
    private var downstreamTimer: Scheduled<Void>?
    private var upstreamTimer: Scheduled<Void>?
    private var timelineTimers: [Scheduled<Void>] = []
    private var closed = false

    init(proxy: ImpairmentProxy, client: any Channel, downstream: ToxicSet, upstream: ToxicSet, settings: Upstream) {
        self.proxy = proxy
        self.client = client
        self.settings = settings
        let seed = UInt64(truncatingIfNeeded: ObjectIdentifier(client).hashValue)
        self.downstreamPipe = ToxicPipe(toxics: downstream, seed: seed)
        self.upstreamPipe = ToxicPipe(toxics: upstream, seed: seed &+ 1)
    }

    func connectUpstream() {
        let loop = client.eventLoop
        for entry in settings.timeline {
            timelineTimers.append(
                loop.assumeIsolated().scheduleTask(in: TimeAmount(entry.at)) { [self] in
                    if case .down = entry.action {
                        proxy.apply(entry.action)
                    } else {
                        apply(entry.action, now: .now())
                    }
                })
        }
        let bound = NIOLoopBound(self, eventLoop: loop)
        ClientBootstrap(group: loop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ProxySideHandler(connection: bound.value, side: .upstream))
                }
            }
            .connect(host: settings.host, port: settings.port)
            .assumeIsolated()
            .whenComplete { [self] result in
                switch result {
                case .success(let channel):
                    if closed {
                        channel.close(promise: nil)
                        return
                    }
                    upstream = channel
                    pump(.upstream)
                case .failure(let error):
                    proxy.logger.info("upstream connect failed", metadata: ["error": "\(error)"])
                    proxy.upstreamConnectFailed()
                    close(reset: true, counted: false)
                }
            }
    }

    /// Bytes read from `side`, queued for the other side.
    func received(_ bytes: ByteBuffer, from side: Side) {
        let now = NIODeadline.now()
        switch side {
        case .upstream:
            downstreamPipe.receive(bytes, now: now)
            pump(.client)
        case .client:
            upstreamPipe.receive(bytes, now: now)
            pump(.upstream)
        }
    }

    func sourceClosed(_ side: Side) {
        switch side {
        case .upstream:
            downstreamPipe.endOfSource()
            pump(.client)
        case .client:
            upstreamPipe.endOfSource()
            pump(.upstream)
        }
    }

    func apply(_ action: ImpairmentAction, now: NIODeadline) {
        guard !closed else { return }
        switch action {
        case .set(let toxic, let direction):
            update(direction) { $0.apply(toxic, now: now) }
        case .clear(let kind, let direction):
            update(direction) { $0.clear(kind) }
        case .reset, .down:
            close(reset: true)
        }
    }

    private func update(_ direction: ProxyDirection, _ change: (inout ToxicSet) -> Void) {
        if direction.includes(.downstream) {
            var toxics = downstreamPipe.toxics
            change(&toxics)
            downstreamPipe.setToxics(toxics)
            pump(.client)
        }
        if direction.includes(.upstream) {
            var toxics = upstreamPipe.toxics
            change(&toxics)
            upstreamPipe.setToxics(toxics)
            pump(.upstream)
        }
    }

    /// Moves whatever the pipe towards `destination` lets through now, and arranges the next try.
    func pump(_ destination: Side) {
        guard !closed else { return }
        let channel: (any Channel)? = destination == .client ? client : upstream
        var wrote = false
        while true {
            let now = NIODeadline.now()
            let step =
                destination == .client
                ? downstreamPipe.next(now: now, destinationWritable: channel?.isWritable ?? false)
                : upstreamPipe.next(now: now, destinationWritable: channel?.isWritable ?? false)
            switch step {
            case .write(let segment):
                channel?.write(segment, promise: nil)
                wrote = true
                if sliced(destination) {
                    channel?.flush()
                    wrote = false
                }
                continue
            case .wait(let deadline):
                schedule(destination, at: deadline)
            case .idle, .blocked:
                break
            case .finished:
                if wrote { channel?.flush() }
                close(reset: false)
                return
            }
            break
        }
        if wrote { channel?.flush() }
        updateReading(towards: destination)
    }

    private func sliced(_ destination: Side) -> Bool {
        (destination == .client ? downstreamPipe : upstreamPipe).toxics.slicer != nil
    }

    private func schedule(_ destination: Side, at deadline: NIODeadline) {
        let timer = client.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in pump(destination) }
        switch destination {
        case .client:
            downstreamTimer?.cancel()
            downstreamTimer = timer
        case .upstream:
            upstreamTimer?.cancel()
            upstreamTimer = timer
        }
    }

    /// Stops reading a source whose pipe is full, resumes it below half.
    private func updateReading(towards destination: Side) {
        let queued = destination == .client ? downstreamPipe.queuedBytes : upstreamPipe.queuedBytes
        let source: (any Channel)? = destination == .client ? upstream : client
        guard let options = source?.syncOptions else { return }
        let reading = (try? options.getOption(.autoRead)) ?? true
        if reading, queued > settings.maximumQueuedBytes {
            try? options.setOption(.autoRead, value: false)
        } else if !reading, queued <= settings.maximumQueuedBytes / 2 {
            try? options.setOption(.autoRead, value: true)
        }
    }

    /// Closes both sides; with `reset` the peers see a TCP reset (SO_LINGER 0), as on a cut path.
    func close(reset: Bool, counted: Bool = true) {
        guard !closed else { return }
        closed = true
        // Counted before the sockets close, so whoever sees the close also sees the count.
        proxy.connectionClosed(self, wasReset: reset && counted)
        downstreamTimer?.cancel()
        upstreamTimer?.cancel()
        for timer in timelineTimers { timer.cancel() }
        downstreamPipe.discard()
        upstreamPipe.discard()
        for channel in [client, upstream].compactMap({ $0 }) {
            if reset {
                Self.resetAndClose(channel)
            } else {
                channel.close(promise: nil)
            }
        }
    }

    /// Closes with SO_LINGER 0, so the peer gets a RST instead of a FIN.
    static func resetAndClose(_ channel: any Channel) {
        if let provider = channel as? any SocketOptionProvider {
            provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
        } else {
            channel.close(promise: nil)
        }
    }
}

/// Feeds one channel's events to its ``ProxyConnection``.
final class ProxySideHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let connection: ProxyConnection
    private let side: ProxyConnection.Side

    init(connection: ProxyConnection, side: ProxyConnection.Side) {
        self.connection = connection
        self.side = side
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connection.received(unwrapInboundIn(data), from: side)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.sourceClosed(side)
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { connection.pump(side) }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
