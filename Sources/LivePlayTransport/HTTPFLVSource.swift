import AsyncHTTPClient
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
    private let pool: HTTPConnectionPool
    private let logger: Logger
    fileprivate let timer: (any DeadlineTimer)?

    /// - Parameters:
    ///   - pool: the HTTP client the request goes through, from ``HTTPConnectionPool/withPool(options:logger:_:)``
    ///     with the same options; the caller's scope shuts it down.
    ///   - timer: times the handshake deadline and each read's ``TransportOptions/noDataTimeout``: a player
    ///     passes its own thread's, so reads arm no other timers; `nil`, the request's event loop.
    public init(
        url: String, options: TransportOptions, pool: HTTPConnectionPool, logger: Logger,
        timer: (any DeadlineTimer)? = nil
    ) {
        self.url = url
        self.options = options
        self.pool = pool
        self.logger = logger
        self.timer = timer
    }

    public func makeConnection() -> any ByteConnection {
        HTTPFLVConnection(source: self, offset: 0)
    }

    /// A request with `Range: bytes=OFFSET-` (media on demand, seeking by a file's keyframe index).
    public func makeConnection(startingAt offset: Int64) -> (any ByteConnection)? {
        HTTPFLVConnection(source: self, offset: offset)
    }

    /// The rest of a file from byte `offset`, as it is on the server (no FLV header of its own: the bytes go
    /// after the `offset` bytes a cache already holds), sending `If-Range: validator` so a file that changed
    /// comes whole instead. ``TransportEvent/remoteFile(_:)`` says which: its `bodyStart` is `offset` or 0.
    public func makeConnection(continuingAt offset: Int64, ifRange validator: String?) -> any ByteConnection {
        HTTPFLVConnection(source: self, offset: offset, continuation: validator.map { .ifRange($0) } ?? .unconditional)
    }

    /// The same request without LAS's `startPts`, when it has one.
    public var reconnecting: (any ByteSource)? {
        guard LASStart.startPts(in: url) != nil else { return nil }
        return HTTPFLVSource(url: LASStart.removed(from: url), options: options, pool: pool, logger: logger, timer: timer)
    }

    fileprivate func request(_ url: String, offset: Int64, ifRange: String?) throws -> HTTPClient.Request {
        var headers = HTTPHeaders()
        for field in options.headers { headers.add(name: field.name, value: field.value) }
        if offset > 0 { headers.replaceOrAdd(name: "Range", value: "bytes=\(offset)-") }
        if offset > 0, let ifRange { headers.replaceOrAdd(name: "If-Range", value: ifRange) }
        if !headers.contains(name: "User-Agent") { headers.add(name: "User-Agent", value: "liveplay") }
        return try HTTPClient.Request(url: url, method: .GET, headers: headers)
    }

    fileprivate var httpClient: HTTPClient { pool.client }
    fileprivate var log: Logger { logger }
}

private final class HTTPFLVConnection: ByteConnection {
    private enum State {
        case idle
        case connected(HTTPClient.Task<Void>, HTTPBodyReceiver, HTTPFLVResponse)
        case finished
    }

    /// How a request from an offset is meant: a seek (the body gets an FLV header of its own), or the rest
    /// of bytes a cache holds (raw, optionally only if the file is unchanged).
    enum Continuation {
        case seek
        case unconditional
        case ifRange(String)
    }

    private let source: HTTPFLVSource
    /// Where in the file the request starts (`Range`), and whether the server honoured it (206): a seek's
    /// body then gets an FLV header of its own before its first byte.
    private let offset: Int64
    private let continuation: Continuation
    private var partial = false
    private var state = State.idle
    private var resolved = false
    /// Events decided together and handed out one per ``next()``.
    private var pending: [TransportEvent] = []
    /// Each read's bytes, handed out and refilled: the reader has let go of the last read's by the next
    /// ``next()``, so its storage is reused (no array per read).
    private var received: [UInt8] = []
    /// Times the waits when the source has no timer of its own (each redirect's request may have another loop).
    private var loopTimer: EventLoopTimer?

    init(source: HTTPFLVSource, offset: Int64, continuation: Continuation = .seek) {
        self.source = source
        self.offset = offset
        self.continuation = continuation
    }

    /// `host:port` of the URL asked for, for messages.
    private var target: String {
        (try? StreamAddress(parsing: source.url).hostAndPort) ?? "the server"
    }

    func next() async throws(TransportError) -> TransportEvent? {
        if !pending.isEmpty { return pending.removeFirst() }
        switch state {
        case .idle where !resolved:
            resolved = true
            return try await resolve()
        case .idle:
            return try await open()
        case .connected(let task, let receiver, var response):
            let seekStart = partial && response.received == 0
            received.removeAll(keepingCapacity: true)
            if case .seek = continuation, seekStart { received.append(contentsOf: resumedStreamHeader) }
            let count: Int
            switch await receiver.next(within: source.options.noDataTimeout, timer: timer(task), into: &received) {
            case .bytes(let taken): count = taken
            case .end:
                finish(task)
                if response.end == .finished { return nil }
                throw TransportError(.serverClosed, "\(target) ended the live stream (after \(response.received) bytes)")
            case .failure(let error):
                finish(task)
                throw Self.map(error, connected: true, target: target)
            case .timedOut:
                finish(task)
                throw TransportError(.noData, "no bytes for \(source.options.noDataTimeout)")
            case .cancelled, .head:
                finish(task)
                throw TransportError(.readFailed, "reading from \(target) was cancelled")
            }
            do throws(WireError) {
                try response.receive(count)
            } catch {
                finish(task)
                throw TransportError(error)
            }
            state = .connected(task, receiver, response)
            return .bytes(received)
        case .finished:
            return nil
        }
    }

    func close() async {
        if case .connected(let task, _, _) = state { task.cancel() }
        state = .finished
    }

    /// A connection dropped without ``close()`` still ends its request: nothing else would stop the event loop
    /// from buffering its body, and the socket would stay open.
    deinit {
        if case .connected(let task, _, _) = state { task.cancel() }
    }

    /// The source's timer, or (made once per connection) the request's event loop.
    private func timer(_ task: HTTPClient.Task<Void>) -> any DeadlineTimer {
        if let timer = source.timer { return timer }
        if let loopTimer, loopTimer.eventLoop === task.eventLoop { return loopTimer }
        let timer = EventLoopTimer(task.eventLoop)
        loopTimer = timer
        return timer
    }

    private func finish(_ task: HTTPClient.Task<Void>) {
        task.cancel()
        state = .finished
    }

    /// Resolves the URL's host first, so the startup timeline shows DNS apart from the request and a
    /// name that does not resolve fails within ``TransportOptions/resolveTimeout``.
    private func resolve() async throws(TransportError) -> TransportEvent {
        guard let address = try? StreamAddress(parsing: source.url), !address.host.isEmpty,
            let port = UInt16(exactly: address.port)
        else {
            state = .finished
            throw TransportError(.invalidURL, "\(Redaction.url(source.url)) is not a valid HTTP URL")
        }
        let host = address.host
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
        let redacted = Redaction.url(source.url)
        let deadline = ContinuousClock.now + source.options.handshakeTimeout
        var url = source.url
        var visited: Set<String> = [url]
        var task: HTTPClient.Task<Void>
        var receiver: HTTPBodyReceiver
        var response: HTTPResponseHead
        while true {
            source.log.debug("HTTP-FLV request", metadata: ["url": "\(Redaction.url(url))"])
            let request: HTTPClient.Request
            do {
                request = try source.request(url, offset: offset, ifRange: ifRange)
            } catch {
                state = .finished
                throw Self.map(error, connected: false, target: target)
            }
            receiver = HTTPBodyReceiver(limit: Self.bufferLimit, readInterval: source.options.readInterval)
            task = source.httpClient.execute(request: request, delegate: receiver, logger: source.log)
            switch await receiver.head(within: ContinuousClock.now.duration(to: deadline), timer: timer(task)) {
            case .head(let head): response = head
            case .failure(let error):
                finish(task)
                throw Self.map(error, connected: false, target: target)
            case .timedOut:
                finish(task)
                throw TransportError(.handshakeFailed, "\(target) sent no HTTP response within the handshake deadline")
            case .bytes, .end, .cancelled:
                finish(task)
                throw TransportError(.handshakeFailed, "\(target) closed the connection before answering")
            }
            guard Self.redirectStatuses.contains(response.status.code),
                let location = response.headers.first(name: "Location")
            else { break }
            task.cancel()
            let next: String?
            do throws(TransportError) {
                next = try Self.redirect(from: url, to: location, visited: &visited, target: target)
            } catch {
                state = .finished
                throw error
            }
            // A target that is not a playable HTTP(S) URL is not followed: the 3xx is a failed response.
            guard let next else { break }
            url = next
        }
        let head: HTTPFLVResponse
        do throws(WireError) {
            head = try HTTPFLVResponse(
                status: Int(response.status.code), reason: response.status.reasonPhrase, headers: response.headers)
        } catch {
            finish(task)
            var failure = TransportError(error)
            failure.message += " for \(redacted)"
            throw failure
        }
        partial = offset > 0 && response.status.code == 206
        if partial, let range = response.headers.first(name: "Content-Range"), Self.rangeStart(range) != offset {
            finish(task)
            throw TransportError(
                .protocolViolation, "\(target) sent a range (\(range.prefix(64))) that does not start at \(offset)")
        }
        state = .connected(task, receiver, head)
        pending.append(.handshakeDone)
        if let length = head.expectedLength {
            let file = RemoteFile(
                length: Int64(length) + (partial ? offset : 0), bodyStart: partial ? offset : 0,
                entityTag: response.headers.first(name: "ETag"), lastModified: response.headers.first(name: "Last-Modified"))
            pending.append(.remoteFile(file))
            pending.append(.onDemand(length: file.length))
        }
        return .connected(serverAddress: Self.serverAddress(URL(string: url)))
    }

    /// Bytes buffered for the reader beyond which the event loop stops reading the socket (TCP's backpressure).
    static let bufferLimit = 512 * 1024

    private var ifRange: String? {
        if case .ifRange(let validator) = continuation { return validator }
        return nil
    }

    /// The first byte of `Content-Range: bytes FIRST-LAST/LENGTH` (RFC 9110 §14.4), `nil` if it is not that.
    static func rangeStart(_ value: String) -> Int64? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("bytes "), let dash = trimmed.firstIndex(of: "-") else { return nil }
        return Int64(trimmed[trimmed.index(trimmed.startIndex, offsetBy: 6)..<dash].trimmingCharacters(in: .whitespaces))
    }

    static let redirectStatuses: Set<UInt> = [301, 302, 303, 307, 308]
    static let maximumRedirects = 5

    /// Where a redirect leads, checked as the user's URL is before anything connects to it: an HTTP(S) URL
    /// whose every field is valid (`nil` otherwise: not followed), not seen before in this chain, within
    /// ``maximumRedirects``.
    static func redirect(
        from url: String, to location: String, visited: inout Set<String>, target: String
    ) throws(TransportError) -> String? {
        guard visited.count <= maximumRedirects else {
            throw TransportError(.handshakeFailed, "\(target) redirected more than \(maximumRedirects) times")
        }
        guard let next = URL(string: location, relativeTo: URL(string: url))?.absoluteString,
            let address = try? StreamAddress(parsing: next), address.scheme == .http || address.scheme == .https
        else { return nil }
        guard visited.insert(next).inserted else {
            throw TransportError(.handshakeFailed, "\(target) redirected in a cycle")
        }
        return next
    }

    /// `host:port` of the URL that finally answered (after redirects).
    private static func serverAddress(_ url: URL?) -> String {
        guard let url, let host = url.host else { return "" }
        let port = url.port ?? (url.scheme == "https" ? 443 : 80)
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The library's own text for `error`, but a system error as the system names it: SwiftNIO describes a
    /// refused connect, found in the socket's error, as "connection reset (error set): Connection refused)".
    static func detail(of error: any Error) -> String {
        func system(_ error: IOError) -> String { "\(String(cString: strerror(error.errnoCode))) (errno \(error.errnoCode))" }
        if let error = error as? IOError { return system(error) }
        if let error = error as? NIOConnectionError {
            let causes = error.connectionErrors.map { attempt in
                (attempt.error as? IOError).map(system) ?? "\(attempt.error)"
            }
            if !causes.isEmpty { return Array(Set(causes)).sorted().joined(separator: "; ") }
        }
        return "\(error)"
    }

    /// Sorts AsyncHTTPClient's and SwiftNIO's errors into the stages TXLivePlayer reports, each with a plain
    /// sentence naming `target` (`host:port`) and the library's own text as the detail.
    static func map(_ error: any Error, connected: Bool, target: String = "the server") -> TransportError {
        if let error = error as? TransportError { return error }
        let detail = Self.detail(of: error)
        func failure(_ code: TransportError.Code, _ message: String) -> TransportError {
            TransportError(code, message, detail: detail)
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout, .getConnectionFromPoolTimeout:
                return failure(.connectFailed, "no answer from \(target) within the connect timeout")
            case .tlsHandshakeTimeout:
                return failure(.connectFailed, "the TLS handshake with \(target) timed out")
            case .deadlineExceeded:
                return failure(.handshakeFailed, "\(target) sent no HTTP response within the handshake deadline")
            case .readTimeout:
                return failure(.noData, "no bytes from \(target) within the no-data timeout")
            case .remoteConnectionClosed:
                return failure(
                    connected ? .serverClosed : .handshakeFailed,
                    connected ? "\(target) closed the connection" : "\(target) closed the connection before answering")
            case .invalidURL, .emptyHost, .emptyScheme:
                return failure(.invalidURL, "the URL cannot be requested")
            case .redirectLimitReached:
                return failure(.handshakeFailed, "\(target) redirected more than 5 times")
            case .redirectCycleDetected:
                return failure(.handshakeFailed, "\(target) redirected in a cycle")
            default:
                return failure(
                    connected ? .readFailed : .connectFailed,
                    connected ? "reading from \(target) failed" : "cannot connect to \(target)")
            }
        }
        if let error = error as? HTTPParserError, error == .invalidEOFState, connected {
            // The body ended before the length the response announced: a cut connection, not a protocol error.
            return failure(.serverClosed, "\(target) closed the connection before the end of the response")
        }
        if error is HTTPParserError {
            // Connected, but what came back is not HTTP: the handshake of this protocol failed.
            return failure(
                connected ? .protocolViolation : .handshakeFailed, "\(target) answered with something that is not HTTP")
        }
        if let error = error as? NIOConnectionError {
            let resolved = error.dnsAError == nil || error.dnsAAAAError == nil
            if !resolved && error.connectionErrors.isEmpty {
                return failure(.dnsFailed, "cannot resolve the host name \(error.host)")
            }
            let refused = error.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
            return failure(
                .connectFailed,
                refused ? "\(target) refused the connection" : "cannot connect to \(error.host):\(error.port)")
        }
        if error is SocketAddressError {
            return failure(.dnsFailed, "cannot resolve the host name of \(target)")
        }
        if error is NIOSSLError || error is BoringSSLError {
            return failure(.connectFailed, "the TLS connection to \(target) failed (an untrusted certificate?)")
        }
        if case .connectTimeout = error as? ChannelError {
            return failure(.connectFailed, "no answer from \(target) within the connect timeout")
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return failure(.connectFailed, "\(target) refused the connection")
            case ECONNRESET where connected: return failure(.serverClosed, "\(target) reset the connection")
            case ECONNRESET: return failure(.connectFailed, "\(target) reset the connection before answering")
            case ENETUNREACH, EHOSTUNREACH: return failure(.connectFailed, "\(target) cannot be reached (no route)")
            case ETIMEDOUT: return failure(.connectFailed, "no answer from \(target)")
            default: break
            }
        }
        return failure(
            connected ? .readFailed : .connectFailed,
            connected ? "reading from \(target) failed" : "cannot connect to \(target)")
    }
}
