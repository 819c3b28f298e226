import Foundation
public import LivePlay
public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus

/// The monitor's HTTP face, on SwiftNIO: `GET /metrics` (the registry in Prometheus's text format, every stream's
/// last-event age brought up to now first), `GET /healthz` (liveness: `ok`), and `GET /probe?target=URL&seconds=S`
/// (Prometheus's multi-target exporter pattern, as blackbox_exporter: plays the target for S seconds, at most
/// ``maximumProbeSeconds``, and answers with `liveplay_probe_success` and that probe's figures). Everything else is
/// 404. One structured ``run(onBound:)``; cancelling it closes the listener and every connection.
public struct MetricsServer: Sendable {
    public let host: String
    public let port: Int
    public let monitor: Monitor
    public let probeConfiguration: LivePlayConfiguration
    /// The hosts `/probe` may reach (`--probe-allow`); empty: any network URL.
    public let probeAllowance: [ProbeAllowance]
    private let logger: Logger

    public static let maximumProbeSeconds = 120.0

    public init(
        host: String, port: Int, monitor: Monitor,
        probeConfiguration: LivePlayConfiguration = LivePlayConfiguration(decodes: false),
        probeAllowance: [ProbeAllowance] = [], logger: Logger = Logger(label: "liveplay.metrics")
    ) {
        self.host = host
        self.port = port
        self.monitor = monitor
        self.probeConfiguration = probeConfiguration
        self.probeAllowance = probeAllowance
        self.logger = logger
    }

    /// Listens until cancelled. `onBound` gets the port it listens on (useful with port 0).
    public func run(onBound: @Sendable (Int) -> Void = { _ in }) async throws {
        let listener = try await listen()
        onBound(listener.port)
        try await listener.run()
    }

    /// Opens the listening socket, and no more: an address in use, not this machine's or not permitted fails
    /// here, so a caller can say so before anything else starts. ``Listener/run()`` then serves.
    public func listen() async throws(MonitorError) -> Listener {
        let channel: NIOAsyncChannel<Connection, Never>
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        return try Connection(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw MonitorError(cannotListenOn: host, port: port, error)
        }
        return Listener(server: self, channel: channel, port: channel.channel.localAddress?.port ?? port)
    }

    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    /// A bound ``MetricsServer``: ``run()`` serves until cancelled, then closes the socket and every connection.
    public struct Listener: Sendable {
        let server: MetricsServer
        let channel: NIOAsyncChannel<Connection, Never>
        /// The port it listens on (the kernel's choice when asked for port 0).
        public let port: Int

        public func run() async throws {
            try await withThrowingDiscardingTaskGroup { group in
                try await channel.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await server.serve(connection) }
                    }
                }
            }
        }
    }

    private func serve(_ connection: Connection) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var head: HTTPRequestHead?
                for try await part in inbound {
                    switch part {
                    case .head(let request): head = request
                    case .body: break
                    case .end:
                        guard let request = head else { return }
                        let (status, type, body) = await respond(to: request)
                        var headers = HTTPHeaders([("Content-Type", type), ("Content-Length", String(body.count))])
                        if !request.isKeepAlive { headers.add(name: "Connection", value: "close") }
                        // RFC 9110 §15.5.6: a 405 names the methods the resource takes.
                        if status == .methodNotAllowed { headers.add(name: "Allow", value: "GET, HEAD") }
                        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)))
                        if request.method != .HEAD { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
                        try await outbound.write(.end(nil))
                        head = nil
                        if !request.isKeepAlive { return }
                    }
                }
            }
        } catch {
            logger.debug("metrics connection ended", metadata: ["error": "\(error)"])
        }
    }

    static let exposition = "text/plain; version=0.0.4; charset=utf-8"

    /// The status, the content type and the body: the page of a thousand streams is megabytes, rendered as bytes
    /// once, never as a `String`.
    private func respond(to request: HTTPRequestHead) async -> (HTTPResponseStatus, String, [UInt8]) {
        guard request.method == .GET || request.method == .HEAD else {
            return (.methodNotAllowed, "text/plain", Array("GET only\n".utf8))
        }
        let components = URLComponents(string: request.uri)
        switch components?.path {
        case "/metrics":
            monitor.refresh()
            return (.ok, Self.exposition, monitor.registry.emitToBuffer())
        case "/healthz":
            return (.ok, "text/plain", Array("ok\n".utf8))
        case "/probe":
            let request: ProbeRequest
            do {
                request = try ProbeRequest(components?.queryItems ?? [], allowed: probeAllowance)
            } catch {
                return (.badRequest, "text/plain", Array("\(error.message)\n".utf8))
            }
            let figures = await Probe.run(request.target, for: request.duration, configuration: probeConfiguration)
            return (.ok, Self.exposition, Array(figures.utf8))
        default:
            return (.notFound, "text/plain", Array("not found: /metrics, /healthz, /probe?target=URL&seconds=S\n".utf8))
        }
    }
}

/// One probe: plays a target for a while with a registry of its own, and says whether it played and, when it did
/// not, why: `liveplay_probe_failure{reason=…}` (a bounded set: `timeout_before_connecting`,
/// `timeout_before_first_picture`, `ended_before_first_picture`, or the symbol of the error that ended it), with the
/// stream's state `down`.
enum Probe {
    static func run(_ target: String, for duration: Duration, configuration: LivePlayConfiguration) async -> String {
        let registry = PrometheusCollectorRegistry()
        let metrics = StreamMetrics(id: "probe", registry: registry)
        let listener = StreamListener(
            metrics: metrics, protocol: ((try? StreamURL.kind(of: target)) ?? .httpFLV).rawValue, other: nil)
        let player = LivePlayer(configuration: configuration)
        player.listener = listener
        let started = ContinuousClock.now
        let stop = StopRequest<Void>()
        async let outcome = stop.race { await player.run(url: target) }
        try? await Task.sleep(for: duration)
        stop.request()
        let ended = await outcome
        metrics.refresh()
        let failure = failureReason(connected: listener.connected, played: listener.played, ended: ended)
        registry.gauge(.probeSuccess).set(to: failure == nil ? 1.0 : 0.0)
        registry.gauge(.probeDuration).set(to: (ContinuousClock.now - started).secondsValue)
        if let failure {
            metrics.set(.down)
            registry.gauge(.probeFailure, [("reason", failure)]).set(to: 1)
        }
        return registry.emitToString()
    }

    /// nil when the probe succeeded: media played, and nothing but the probe's own end or the stream's stopped it.
    /// `ended` is nil when the probe's time ran out with the player still playing (or still trying).
    static func failureReason(connected: Bool, played: Bool, ended: PlaybackOutcome?) -> String? {
        switch (played, ended) {
        case (_, .failed(let code)?): code.symbol
        case (true, _): nil
        case (false, nil), (false, .stopped?): connected ? "timeout_before_first_picture" : "timeout_before_connecting"
        case (false, .ended?): "ended_before_first_picture"
        }
    }
}
