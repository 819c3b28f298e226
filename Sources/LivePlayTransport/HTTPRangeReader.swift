import AsyncHTTPClient
import LivePlayCore
import NIOCore
import NIOHTTP1
import Synchronization

/// Byte ranges of a file over HTTP(S), read synchronously: for a thread of liveplay's own that may block (a
/// ``ThumbnailReader``'s), never for a task. Each read sends `Range: bytes=FIRST-LAST` and waits on the calling
/// thread for AsyncHTTPClient's answer; SwiftNIO's event loops do the I/O. Only a 206 of the range's length is
/// taken: a server that ignores ranges (a 200, the whole file) is refused as soon as its body passes that length, so
/// no read holds more than it asked for.
///
/// It has a client of its own, shut down by ``close()``: a reader lives as long as its thread, not inside a
/// player's ``HTTPConnectionPool`` scope.
public final class HTTPRangeReader: Sendable {
    private let client: HTTPClient
    private let url: String
    private let options: TransportOptions

    public init(url: String, options: TransportOptions) {
        self.url = url
        self.options = options
        client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: HTTPConnectionPool.configuration(options))
    }

    /// The bytes of `range`; nil when the request fails, the answer is not a 206 of them, or it does not arrive
    /// within the handshake and no-data timeouts together.
    public func read(_ range: Range<Int64>) -> [UInt8]? {
        guard !range.isEmpty, range.lowerBound >= 0, var request = try? HTTPClient.Request(url: url) else { return nil }
        for field in options.headers { request.headers.add(name: field.name, value: field.value) }
        request.headers.replaceOrAdd(name: "Range", value: "bytes=\(range.lowerBound)-\(range.upperBound - 1)")
        let limit = Int(range.count)
        let timeout = options.handshakeTimeout + options.noDataTimeout
        let answer = client.execute(
            request: request, delegate: RangeAccumulator(limit: limit),
            deadline: .now() + .nanoseconds(timeout.nanoseconds))
        guard let (status, body) = try? answer.futureResult.wait(), status == .partialContent, body.count == limit
        else { return nil }
        return body
    }

    /// Shuts the client down (from the reader's thread, when it ends).
    public func close() {
        try? client.syncShutdown()
    }
}

/// Keeps a response's status and its body, and stops the response when the body passes `limit` bytes. The event
/// loop calls it; its state is in a `Mutex` as ``HTTPBodyReceiver``'s is, the one lock of the model.
private final class RangeAccumulator: HTTPClientResponseDelegate, Sendable {
    typealias Response = (HTTPResponseStatus, [UInt8])

    private let limit: Int
    private let state = Mutex<Response>((.ok, []))

    init(limit: Int) {
        self.limit = limit
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        state.withLock { $0.0 = head.status }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let fits = state.withLock { state in
            // More than the range: a server that ignores it is sending the whole file.
            guard state.1.count + buffer.readableBytes <= limit else { return false }
            state.1 += buffer.readableBytesView
            return true
        }
        if !fits { task.fail(reason: LongerThanTheRange()) }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveError(task: HTTPClient.Task<Response>, _ error: any Error) {}

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response { state.withLock { $0 } }
}

/// The answer is longer than the range asked for.
private struct LongerThanTheRange: Error {}
