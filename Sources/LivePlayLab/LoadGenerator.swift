import LivePlayCore
public import Logging
public import NIOCore
import NIOHTTP1
import NIOPosix

/// Many concurrent HTTP-FLV clients that read a live stream, count bytes and follow its media time:
/// the capacity test of the lab (and of any loopback FLV server).
///
/// A client *keeps up* when, from the end of the warm-up (which absorbs the GOP-cache burst) to the end
/// of the run, the stream's media time advanced at least as much as wall-clock time minus
/// ``Configuration/lagTolerance``: a player with that much buffer would not have stalled.
public struct LoadGenerator: Sendable {
    public struct Configuration: Sendable {
        /// `http://HOST:PORT/PATH`, loopback only.
        public var url: String
        public var clients: Int
        public var duration: Duration
        public var warmup: Duration
        public var lagTolerance: Duration
        public var threads: Int

        public init(
            url: String, clients: Int, duration: Duration, warmup: Duration = .seconds(3),
            lagTolerance: Duration = .milliseconds(500), threads: Int = System.coreCount
        ) {
            self.url = url
            self.clients = clients
            self.duration = duration
            self.warmup = warmup
            self.lagTolerance = lagTolerance
            self.threads = threads
        }
    }

    /// What one client saw.
    public struct ClientResult: Sendable, Equatable {
        public var status: Int?
        public var error: String?
        public var bytes: Int64 = 0
        /// Wall time from connecting to the end of the run.
        public var seconds: Double = 0
        /// Seconds of wall time and of media time in the measured window (after the warm-up).
        public var windowWallSeconds: Double = 0
        public var windowMediaSeconds: Double = 0
        /// Longest time without any bytes, in milliseconds.
        public var longestGapMilliseconds: Double = 0
        /// The body ended before the run did.
        public var endedEarly = false

        public var kilobitsPerSecond: Double { seconds > 0 ? Double(bytes) * 8 / seconds / 1000 : 0 }
        /// How far media time fell behind wall time over the window, in milliseconds.
        public var lagMilliseconds: Double { (windowWallSeconds - windowMediaSeconds) * 1000 }
    }

    public struct Report: Sendable {
        public var configuration: Configuration
        public var results: [ClientResult]
        public var wallSeconds: Double

        public var connected: Int { results.filter { $0.status == 200 }.count }
        public var failed: Int { results.count - connected }
        public var aggregateMegabitsPerSecond: Double {
            Double(results.reduce(0) { $0 + $1.bytes }) * 8 / max(wallSeconds, 1e-9) / 1e6
        }
        public var keptUp: Int {
            results.filter {
                $0.status == 200 && !$0.endedEarly && $0.windowWallSeconds > 0
                    && $0.lagMilliseconds <= Double(configuration.lagTolerance.milliseconds)
            }.count
        }
        public var keptUpFraction: Double { results.isEmpty ? 0 : Double(keptUp) / Double(results.count) }
        public var kilobitsPerSecond: [Double] { results.map(\.kilobitsPerSecond).sorted() }

        /// The `p`-quantile (0…1) of sorted values, nearest rank.
        public static func quantile(_ sorted: [Double], _ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
        }

        public var summary: String {
            let rates = kilobitsPerSecond
            let lags = results.map(\.lagMilliseconds).sorted()
            let gaps = results.map(\.longestGapMilliseconds).sorted()
            func f(_ value: Double) -> String { String(Int(value.rounded())) }
            return [
                "clients \(results.count) connected \(connected) failed \(failed)",
                "aggregate \(String(format2: aggregateMegabitsPerSecond)) Mbit/s"
                    + " over \(String(format2: wallSeconds)) s",
                "per-client kbit/s min \(f(Self.quantile(rates, 0))) median \(f(Self.quantile(rates, 0.5)))"
                    + " max \(f(Self.quantile(rates, 1)))",
                "kept up with real time \(keptUp)/\(results.count) (\(f(keptUpFraction * 100))%),"
                    + " lag ms median \(f(Self.quantile(lags, 0.5))) max \(f(Self.quantile(lags, 1))),"
                    + " longest gap ms median \(f(Self.quantile(gaps, 0.5))) max \(f(Self.quantile(gaps, 1)))",
            ].joined(separator: "\n")
        }

        /// One JSON object with the headline figures.
        public var json: String {
            let rates = kilobitsPerSecond
            let lags = results.map(\.lagMilliseconds).sorted()
            let fields: [(String, String)] = [
                ("clients", "\(results.count)"), ("connected", "\(connected)"), ("failed", "\(failed)"),
                ("seconds", String(format2: wallSeconds)),
                ("aggregateMbps", String(format2: aggregateMegabitsPerSecond)),
                ("minKbps", String(format2: Self.quantile(rates, 0))),
                ("medianKbps", String(format2: Self.quantile(rates, 0.5))),
                ("maxKbps", String(format2: Self.quantile(rates, 1))),
                ("keptUp", "\(keptUp)"), ("keptUpFraction", String(format2: keptUpFraction)),
                ("medianLagMs", String(format2: Self.quantile(lags, 0.5))),
                ("maxLagMs", String(format2: Self.quantile(lags, 1))),
                ("maxGapMs", String(format2: results.map(\.longestGapMilliseconds).max() ?? 0)),
            ]
            return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
        }
    }

    public let configuration: Configuration
    private let logger: Logger

    public init(configuration: Configuration, logger: Logger = Logger(label: "liveplay.lab.load")) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Connects every client, reads for the duration, closes them and reports.
    public func run() async throws -> Report {
        let target = try LoadTarget(url: configuration.url)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.threads))
        defer { group.shutdownGracefully { _ in } }
        let start = NIODeadline.now()
        let warmup = TimeAmount(configuration.warmup)
        var connections: [EventLoopFuture<NIOLoopBound<LoadClientHandler>>] = []
        for _ in 0..<max(0, configuration.clients) {
            let loop = group.next()
            let request = target
            connections.append(
                ClientBootstrap(group: loop)
                    .channelOption(.socketOption(.tcp_nodelay), value: 1)
                    .connect(host: target.host, port: target.port)
                    .flatMapThrowing { channel in
                        let handler = LoadClientHandler(target: request, warmup: warmup)
                        let sync = channel.pipeline.syncOperations
                        try sync.addHTTPClientHandlers()
                        try sync.addHandler(handler)
                        return NIOLoopBound(handler, eventLoop: channel.eventLoop)
                    })
        }
        var handlers: [Result<NIOLoopBound<LoadClientHandler>, any Error>] = []
        for connection in connections {
            do {
                handlers.append(.success(try await connection.get()))
            } catch {
                handlers.append(.failure(error))
            }
        }
        logger.info("load clients connected", metadata: ["clients": "\(handlers.count)"])
        let end = start + TimeAmount(configuration.duration)
        try await Task.sleep(for: .nanoseconds(max(0, (end - NIODeadline.now()).nanoseconds)))
        let finish = NIODeadline.now()
        var results: [ClientResult] = []
        for handler in handlers {
            switch handler {
            case .success(let bound):
                results.append(try await bound.eventLoop.submit { bound.value.finish(now: finish) }.get())
            case .failure(let error):
                results.append(ClientResult(status: nil, error: "\(error)"))
            }
        }
        return Report(
            configuration: configuration, results: results, wallSeconds: Double((finish - start).nanoseconds) / 1e9)
    }
}

/// Host, port and path of a loopback `http://` URL.
struct LoadTarget: Sendable {
    var host: String
    var port: Int
    var path: String
    var hostHeader: String

    /// - Throws: ``LabError`` for a URL that is not `http://`, ``DemoError`` for a host off loopback (``Loopback``).
    init(url: String) throws {
        guard url.hasPrefix("http://") else { throw LabError(.invalidURL, "only http:// URLs: '\(url)'") }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        path = rest.dropFirst(authority.count).isEmpty ? "/" : String(rest.dropFirst(authority.count))
        let endpoint = try Loopback.endpoint(String(authority))
        host = endpoint.host
        port = endpoint.port
        hostHeader = String(authority)
    }
}

/// One load client: sends the request, then counts body bytes and follows tag timestamps.
final class LoadClientHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let target: LoadTarget
    private let warmup: TimeAmount
    private var result = LoadGenerator.ClientResult()
    private var splitter = FLVTagSplitter(keepsBodies: false)
    private var connectedAt = NIODeadline.now()
    private var firstByteAt: NIODeadline?
    private var lastReadAt: NIODeadline?
    private var mediaTimestamp: UInt32?
    private var window: (wall: NIODeadline, media: UInt32)?
    private var finished = false
    private var requested = false

    init(target: LoadTarget, warmup: TimeAmount) {
        self.target = target
        self.warmup = warmup
    }

    func channelActive(context: ChannelHandlerContext) {
        sendRequest(context: context)
        context.fireChannelActive()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendRequest(context: context) }
    }

    private func sendRequest(context: ChannelHandlerContext) {
        guard !requested else { return }
        requested = true
        connectedAt = .now()
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path)
        head.headers.add(name: "Host", value: target.hostHeader)
        head.headers.add(name: "User-Agent", value: "liveplay-lab-load")
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            result.status = Int(head.status.code)
        case .body(let buffer):
            let now = NIODeadline.now()
            result.bytes += Int64(buffer.readableBytes)
            if let last = lastReadAt {
                noteGap(now - last)
            }
            lastReadAt = now
            if firstByteAt == nil { firstByteAt = now }
            splitter.append(buffer)
            do {
                while let tag = try splitter.nextTag() {
                    guard tag.type == 8 || tag.type == 9 else { continue }
                    mediaTimestamp = max(mediaTimestamp ?? tag.timestamp, tag.timestamp)
                }
            } catch {
                result.error = "\(error)"
            }
            if window == nil, let first = firstByteAt, now - first >= warmup, let media = mediaTimestamp {
                window = (now, media)
            }
        case .end:
            result.endedEarly = true
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !finished, result.status == 200 { result.endedEarly = true }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if result.error == nil { result.error = "\(error)" }
        context.close(promise: nil)
    }

    private func noteGap(_ gap: TimeAmount) {
        result.longestGapMilliseconds = max(result.longestGapMilliseconds, Double(gap.nanoseconds) / 1e6)
    }

    /// The result at the end of the run.
    func finish(now: NIODeadline) -> LoadGenerator.ClientResult {
        if !finished {
            finished = true
            result.seconds = Double((now - connectedAt).nanoseconds) / 1e9
            if let window, let media = mediaTimestamp {
                result.windowWallSeconds = Double((now - window.wall).nanoseconds) / 1e9
                result.windowMediaSeconds = Double(media &- window.media) / 1000
            }
            if let last = lastReadAt {
                noteGap(now - last)
            }
        }
        return result
    }
}

extension String {
    /// Two decimals, without Foundation.
    init(format2 value: Double) {
        let scaled = (value * 100).rounded()
        guard scaled.isFinite else {
            self = "0"
            return
        }
        let negative = scaled < 0
        let magnitude = Int(abs(scaled))
        let fraction = magnitude % 100
        self = (negative ? "-" : "") + "\(magnitude / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }
}
