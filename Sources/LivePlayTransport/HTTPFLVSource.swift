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
            // Redirects are followed by ``HTTPFLVConnection`` itself, each target checked first: AsyncHTTPClient
            // traps on a redirect to an IP literal with a port over 65535 (a server could crash the player).
            redirectConfiguration: .disallow,
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

    fileprivate func request(_ url: String, offset: Int64, ifRange: String?) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        for field in options.headers { request.headers.add(name: field.name, value: field.value) }
        if offset > 0 { request.headers.replaceOrAdd(name: "Range", value: "bytes=\(offset)-") }
        if offset > 0, let ifRange { request.headers.replaceOrAdd(name: "If-Range", value: ifRange) }
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
        case .connected(let iterator, var response):
            let chunk: ByteBuffer?
            let advanced: HTTPClientResponse.Body.AsyncIterator
            do {
                (chunk, advanced) = try await Self.read(
                    iterator, within: source.options.noDataTimeout, sleep: source.sleep)
            } catch {
                state = .finished
                throw Self.map(error, connected: true, target: target)
            }
            let iterator = advanced
            guard let chunk else {
                state = .finished
                if response.end == .finished { return nil }
                throw TransportError(.serverClosed, "\(target) ended the live stream (after \(response.received) bytes)")
            }
            do throws(WireError) {
                try response.receive(chunk.readableBytes)
            } catch {
                state = .finished
                throw TransportError(error)
            }
            state = .connected(iterator, response)
            if partial, case .seek = continuation, response.received == chunk.readableBytes {
                return .bytes(resumedStreamHeader + Array(chunk.readableBytesView))
            }
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
        let deadline = NIODeadline.now() + .nanoseconds(source.options.handshakeTimeout.nanoseconds)
        var url = source.url
        var visited: Set<String> = [url]
        var response: HTTPClientResponse
        while true {
            source.log.debug("HTTP-FLV request", metadata: ["url": "\(Redaction.url(url))"])
            do {
                response = try await source.httpClient.execute(
                    source.request(url, offset: offset, ifRange: ifRange), deadline: deadline, logger: source.log)
            } catch {
                state = .finished
                throw Self.map(error, connected: false, target: target)
            }
            guard Self.redirectStatuses.contains(response.status.code),
                let location = response.headers.first(name: "Location")
            else { break }
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
            state = .finished
            var failure = TransportError(error)
            failure.message += " for \(redacted)"
            throw failure
        }
        partial = offset > 0 && response.status.code == 206
        if partial, let range = response.headers.first(name: "Content-Range"), Self.rangeStart(range) != offset {
            state = .finished
            throw TransportError(
                .protocolViolation, "\(target) sent a range (\(range.prefix(64))) that does not start at \(offset)")
        }
        state = .connected(response.body.makeAsyncIterator(), head)
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

    /// Sorts AsyncHTTPClient's and SwiftNIO's errors into the stages TXLivePlayer reports, each with a plain
    /// sentence naming `target` (`host:port`) and the library's own text as the detail.
    static func map(_ error: any Error, connected: Bool, target: String = "the server") -> TransportError {
        if let error = error as? TransportError { return error }
        let detail = "\(error)"
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

private enum ReadResult: Sendable {
    case chunk(ByteBuffer?)
    case timedOut
}

/// Carries the body iterator into the reading child task. Only one task touches it at a time: the
/// child while the group runs, the connection after the group (which awaits all children) returns.
///
/// `@unchecked Sendable`: one task at a time touches the iterator (above).
private final class IteratorBox: @unchecked Sendable {
    var iterator: HTTPClientResponse.Body.AsyncIterator

    init(_ iterator: HTTPClientResponse.Body.AsyncIterator) {
        self.iterator = iterator
    }

    func next() async throws -> ByteBuffer? {
        try await iterator.next()
    }
}
