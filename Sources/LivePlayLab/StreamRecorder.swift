import LivePlayDemo
public import NIOCore
import NIOPosix

/// A raw TCP client for tests and benches: sends a request, records every byte with its arrival time,
/// for a while or until the peer closes. Loopback only.
public enum StreamRecorder {
    /// Bytes received at one moment.
    public struct Arrival: Sendable, Equatable {
        /// Offset of the first byte in ``Recording/bytes``.
        public var offset: Int
        public var count: Int
        /// Time since the connection was established.
        public var at: Duration
    }

    public struct Recording: Sendable {
        public var bytes: [UInt8] = []
        public var arrivals: [Arrival] = []
        /// Connecting succeeded.
        public var connected = false
        /// The peer closed (or reset) the connection before the recording time was up.
        public var closedByPeer = false
        /// When the connection ended, since it was established.
        public var closedAt: Duration?
        public var error: String?

        /// The response, split and de-chunked.
        public var response: HTTPResponseParts? { HTTPResponseParts(bytes) }

        /// When the byte at `offset` arrived.
        public func arrivalTime(ofByteAt offset: Int) -> Duration? {
            arrivals.first { offset >= $0.offset && offset < $0.offset + $0.count }?.at
        }
    }

    /// Connects to `host:port`, writes `request`, and records for `duration` (or until closed).
    /// With `reads` off the client never reads, so the server's send path backs up (a stuck player).
    public static func record(
        host: String = "127.0.0.1", port: Int, request: String, duration: Duration, reads: Bool = true,
        group: (any EventLoopGroup)? = nil
    ) async throws -> Recording {
        let address = try Loopback.address(host)
        let group = group ?? MultiThreadedEventLoopGroup.singleton
        let state = Locked(Recording())
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .channelOption(.autoRead, value: reads)
                .channelOption(.socketOption(.so_rcvbuf), value: reads ? 1 << 20 : 4096)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(RecordingHandler(state: state))
                    }
                }
                .connect(host: address, port: port).get()
        } catch {
            var recording = Recording()
            recording.error = "\(error)"
            return recording
        }
        do {
            try await channel.writeAndFlush(ByteBuffer(string: request))
        } catch {
            // Reset right after the accept (a proxy that is down): that is a result, not a failure.
            state.withLock { $0.error = $0.error ?? "\(error)" }
        }
        let closed = channel.closeFuture
        let peerClosed = try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await Task.sleep(for: duration) }
            tasks.addTask { try? await closed.get() }
            _ = try await tasks.next()
            let peerClosed = !channel.isActive
            tasks.cancelAll()
            // The close-future task only ends when the channel does.
            try? await channel.close()
            return peerClosed
        }
        return state.withLock { recording in
            recording.closedByPeer = peerClosed
            return recording
        }
    }

    /// A `GET` for `path` (HTTP/1.1, `Connection: close`).
    public static func get(_ path: String) -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: liveplay-lab-test\r\nConnection: close\r\n\r\n"
    }
}

/// Appends what arrives to the shared recording.
private final class RecordingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let state: Locked<StreamRecorder.Recording>
    private var start = NIODeadline.now()

    init(state: Locked<StreamRecorder.Recording>) {
        self.state = state
    }

    func channelActive(context: ChannelHandlerContext) {
        start = .now()
        state.withLock { $0.connected = true }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let at = Duration.nanoseconds((NIODeadline.now() - start).nanoseconds)
        state.withLock { recording in
            recording.arrivals.append(.init(offset: recording.bytes.count, count: buffer.readableBytes, at: at))
            recording.bytes += buffer.readableBytesView
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let at = Duration.nanoseconds((NIODeadline.now() - start).nanoseconds)
        state.withLock { $0.closedAt = at }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        state.withLock { $0.error = "\(error)" }
        context.close(promise: nil)
    }
}

/// An HTTP/1.1 response as bytes: status, headers, and the body with chunked framing removed.
public struct HTTPResponseParts: Sendable, Equatable {
    public var status: Int
    /// Header names lowercased.
    public var headers: [String: String]
    public var body: [UInt8]
    /// Offset of the body in the raw bytes.
    public var headLength: Int
    /// The body was complete: the last chunk arrived, or `Content-Length` bytes did.
    public var isComplete: Bool

    public init?(_ raw: [UInt8]) {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard raw.count >= 4,
            let end = (0...(raw.count - 4)).first(where: { raw[$0..<$0 + 4].elementsEqual(separator) })
        else { return nil }
        let lines = String(decoding: raw[..<end], as: UTF8.self).split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.split(separator: " ").count >= 2,
            let status = Int(statusLine.split(separator: " ")[1])
        else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingSpaces
        }
        self.status = status
        self.headers = headers
        self.headLength = end + 4
        let rest = Array(raw[(end + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            (body, isComplete) = Self.dechunk(rest)
        } else if let length = headers["content-length"].flatMap({ Int($0) }) {
            body = Array(rest.prefix(length))
            isComplete = rest.count >= length
        } else {
            body = rest
            isComplete = false
        }
    }

    private static func dechunk(_ raw: [UInt8]) -> ([UInt8], Bool) {
        var body: [UInt8] = []
        var index = 0
        while true {
            let lineEnd = (index..<max(index, raw.count - 1)).first { raw[$0] == 13 && raw[$0 + 1] == 10 }
            guard let lineEnd,
                let size = Int(String(decoding: raw[index..<lineEnd], as: UTF8.self), radix: 16)
            else { return (body, false) }
            if size == 0 { return (body, true) }
            let start = lineEnd + 2
            guard start + size <= raw.count else {
                body += raw[start...]
                return (body, false)
            }
            body += raw[start..<start + size]
            index = start + size + 2
        }
    }
}
