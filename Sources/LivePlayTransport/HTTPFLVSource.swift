public import AsyncHTTPClient
import Foundation
public import Logging
import LivePlayCore
import LivePlayWire
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// HTTP(S)-FLV through AsyncHTTPClient: chunked or close-delimited bodies, redirects, TLS, custom
/// headers, connect / handshake / no-data timeouts.
///
/// What a response means is ``HTTPFLVResponse``'s to decide: a body read to its `Content-Length` is a
/// finished file (`next()` returns `nil`); a live body that ends is the server closing the stream
/// (`.serverClosed`); non-2xx statuses are `.httpStatus` errors carrying the status; a malformed or
/// conflicting `Content-Length`, or a body longer than it, is a `.protocolViolation`.
public struct HTTPFLVSource: ByteSource {
    public let url: String
    public let options: TransportOptions
    private let client: HTTPClient
    private let logger: Logger
    fileprivate let sleep: @Sendable (Duration) async throws -> Void

    /// - Parameters:
    ///   - client: made with ``HTTPFLVSource/clientConfiguration(_:)`` and owned by the caller, which shuts
    ///     it down (`HTTPClient.withHTTPClient`).
    ///   - sleep: the timer a body read races (``TransportOptions/noDataTimeout``); `Task.sleep` by default.
    ///     A player passes its own thread's timer, so reads arm no libdispatch timers.
    public init(
        url: String, options: TransportOptions, client: HTTPClient, logger: Logger,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.url = url
        self.options = options
        self.client = client
        self.logger = logger
        self.sleep = sleep
    }

    /// The client configuration these options need: timeouts, redirects, TLS verification.
    public static func clientConfiguration(_ options: TransportOptions) -> HTTPClient.Configuration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if options.allowsInsecureTLS { tls.certificateVerification = .none }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: .follow(max: 5, allowCycles: false),
            // No read timeout of AsyncHTTPClient's: bytes of an unfinished response head do not reset it, so
            // a trickled head would look like silence. The head is bounded by the handshake deadline, and
            // each body read races ``TransportOptions/noDataTimeout`` (``HTTPFLVConnection``).
            timeout: .init(connect: .nanoseconds(options.connectTimeout.nanoseconds)),
            decompression: .disabled)
        configuration.httpVersion = .http1Only
        // The player has its own reconnect policy with documented events; a refused connection must
        // surface at once, not after AsyncHTTPClient's own retries use up the connect timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    public func makeConnection() -> any ByteConnection {
        HTTPFLVConnection(source: self)
    }

    fileprivate func request() -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        for field in options.headers { request.headers.add(name: field.name, value: field.value) }
        if !request.headers.contains(name: "User-Agent") { request.headers.add(name: "User-Agent", value: "liveplay") }
        return request
    }

    fileprivate var httpClient: HTTPClient { client }
    fileprivate var log: Logger { logger }
}

private final class HTTPFLVConnection: ByteConnection {
    private enum State {
        case idle
        case connected(HTTPClientResponse.Body.AsyncIterator, HTTPFLVResponse)
        case finished
    }

    private let source: HTTPFLVSource
    private var state = State.idle
    private var resolved = false
    /// Events decided together and handed out one per ``next()``.
    private var pending: [TransportEvent] = []

    init(source: HTTPFLVSource) {
        self.source = source
    }

    func next() async throws(TransportError) -> TransportEvent? {
        if !pending.isEmpty { return pending.removeFirst() }
        switch state {
        case .idle where !resolved:
            resolved = true
            return try await resolve()
        case .idle:
            return try await open()
        case .connected(let iterator, var response):
            let chunk: ByteBuffer?
            let advanced: HTTPClientResponse.Body.AsyncIterator
            do {
                (chunk, advanced) = try await Self.read(
                    iterator, within: source.options.noDataTimeout, sleep: source.sleep)
            } catch {
                state = .finished
                throw Self.map(error, connected: true)
            }
            let iterator = advanced
            guard let chunk else {
                state = .finished
                if response.end == .finished { return nil }
                throw TransportError(.serverClosed, "the server ended the live HTTP body after \(response.received) bytes")
            }
            do throws(WireError) {
                try response.receive(chunk.readableBytes)
            } catch {
                state = .finished
                throw TransportError(error)
            }
            state = .connected(iterator, response)
            return .bytes(Array(chunk.readableBytesView))
        case .finished:
            return nil
        }
    }

    func close() async {
        state = .finished
    }

    /// The next body chunk, or `.noData` when none arrives in time. AsyncHTTPClient's idle-read timeout
    /// does not cover a streamed body, so the read races a timer; the loser is cancelled.
    private static func read(
        _ iterator: HTTPClientResponse.Body.AsyncIterator, within timeout: Duration,
        sleep: @escaping @Sendable (Duration) async throws -> Void
    ) async throws -> (ByteBuffer?, HTTPClientResponse.Body.AsyncIterator) {
        let box = IteratorBox(iterator)
        let chunk = try await withThrowingTaskGroup(of: ReadResult.self) { group in
            group.addTask { .chunk(try await box.next()) }
            group.addTask {
                try await sleep(timeout)
                return .timedOut
            }
            defer { group.cancelAll() }
            guard case .chunk(let chunk) = try await group.next() else {
                throw TransportError(.noData, "no bytes for \(timeout)")
            }
            return chunk
        }
        return (chunk, box.iterator)
    }

    /// Resolves the URL's host first, so the startup timeline shows DNS apart from the request and a
    /// name that does not resolve fails within ``TransportOptions/resolveTimeout``.
    private func resolve() async throws(TransportError) -> TransportEvent {
        guard let url = URL(string: source.url), let host = url.host, !host.isEmpty else {
            state = .finished
            throw TransportError(.invalidURL, "no host in \(Redaction.url(source.url))")
        }
        let port = UInt16(clamping: url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80))
        do throws(TransportError) {
            let addresses = try await SocketConnector.resolve(
                host: host, port: port, timeout: source.options.resolveTimeout, resolver: SocketConnector.systemResolver)
            return .resolved(addresses: addresses.map(\.description))
        } catch {
            state = .finished
            throw error
        }
    }

    private func open() async throws(TransportError) -> TransportEvent {
        let request = source.request()
        let redacted = Redaction.url(source.url)
        source.log.debug("HTTP-FLV request", metadata: ["url": "\(redacted)"])
        let response: HTTPClientResponse
        do {
            response = try await source.httpClient.execute(
                request, deadline: .now() + .nanoseconds(source.options.handshakeTimeout.nanoseconds),
                logger: source.log)
        } catch {
            state = .finished
            throw Self.map(error, connected: false)
        }
        let head: HTTPFLVResponse
        do throws(WireError) {
            head = try HTTPFLVResponse(
                status: Int(response.status.code), reason: response.status.reasonPhrase, headers: response.headers)
        } catch {
            state = .finished
            var failure = TransportError(error)
            failure.message += " for \(redacted)"
            throw failure
        }
        state = .connected(response.body.makeAsyncIterator(), head)
        pending.append(.handshakeDone)
        return .connected(serverAddress: Self.serverAddress(response.url ?? URL(string: source.url)))
    }

    /// `host:port` of the URL that finally answered (after redirects).
    private static func serverAddress(_ url: URL?) -> String {
        guard let url, let host = url.host else { return "" }
        let port = url.port ?? (url.scheme == "https" ? 443 : 80)
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Sorts AsyncHTTPClient's and SwiftNIO's errors into the stages TXLivePlayer reports.
    static func map(_ error: any Error, connected: Bool) -> TransportError {
        if let error = error as? TransportError { return error }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
                return TransportError(.connectFailed, "\(error)")
            case .deadlineExceeded:
                return TransportError(.handshakeFailed, "no HTTP response within the handshake deadline")
            case .readTimeout:
                return TransportError(.noData, "no bytes within the no-data timeout")
            case .remoteConnectionClosed:
                return TransportError(connected ? .serverClosed : .handshakeFailed, "the server closed the connection")
            case .invalidURL, .emptyHost, .emptyScheme:
                return TransportError(.invalidURL, "\(error)")
            case .redirectLimitReached, .redirectCycleDetected:
                return TransportError(.handshakeFailed, "\(error)")
            default:
                return TransportError(connected ? .readFailed : .connectFailed, "\(error)")
            }
        }
        if error is HTTPParserError {
            // Connected, but what came back is not HTTP: the handshake of this protocol failed.
            return TransportError(connected ? .protocolViolation : .handshakeFailed, "not an HTTP response: \(error)")
        }
        if let error = error as? NIOConnectionError {
            let resolved = error.dnsAError == nil || error.dnsAAAAError == nil
            if !resolved && error.connectionErrors.isEmpty {
                return TransportError(.dnsFailed, "cannot resolve \(error.host)")
            }
            return TransportError(.connectFailed, "cannot connect to \(error.host):\(error.port)")
        }
        if error is SocketAddressError {
            return TransportError(.dnsFailed, "\(error)")
        }
        if error is NIOSSLError || error is BoringSSLError {
            return TransportError(.connectFailed, "TLS: \(error)")
        }
        if case .connectTimeout = error as? ChannelError {
            return TransportError(.connectFailed, "\(error)")
        }
        return TransportError(connected ? .readFailed : .connectFailed, "\(error)")
    }
}

private enum ReadResult: Sendable {
    case chunk(ByteBuffer?)
    case timedOut
}

/// Carries the body iterator into the reading child task. Only one task touches it at a time: the
/// child while the group runs, the connection after the group (which awaits all children) returns.
private final class IteratorBox: @unchecked Sendable {
    var iterator: HTTPClientResponse.Body.AsyncIterator

    init(_ iterator: HTTPClientResponse.Body.AsyncIterator) {
        self.iterator = iterator
    }

    func next() async throws -> ByteBuffer? {
        try await iterator.next()
    }
}
