import LivePlayWire

/// The one error type of LivePlayTransport: why a connection failed or was lost.
///
/// Thrown by ``ByteConnection/next()``; the player maps codes to TXLivePlayer events
/// (`dnsFailed` → 3001, `connectFailed` → 3002, `handshakeFailed` → 3003, `serverClosed` → 3004,
/// `readFailed` → 3005, `httpStatus` 404 → -2303).
public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file or resource does not exist.
        public static let notFound = Code(rawValue: "not_found")
        /// Reading failed after the source was open.
        public static let readFailed = Code(rawValue: "read_failed")
        /// The source could not be opened for another reason (permissions, not a regular file…).
        public static let openFailed = Code(rawValue: "open_failed")
        /// The URL cannot be played (scheme, host, path).
        public static let invalidURL = Code(rawValue: "invalid_url")
        /// The host name did not resolve within the deadline.
        public static let dnsFailed = Code(rawValue: "dns_failed")
        /// No TCP (or TLS) connection within the deadline, or refused.
        public static let connectFailed = Code(rawValue: "connect_failed")
        /// Connected, but the protocol handshake (RTMP handshake, connect, play) did not complete.
        public static let handshakeFailed = Code(rawValue: "handshake_failed")
        /// The server closed a live stream.
        public static let serverClosed = Code(rawValue: "server_closed")
        /// No bytes arrived for longer than the no-data timeout while the connection stayed open.
        public static let noData = Code(rawValue: "no_data")
        /// Media arrived far slower than real time for longer than the goodput window.
        public static let tooSlow = Code(rawValue: "too_slow")
        /// The server answered with an HTTP error status (see ``TransportError/httpStatus``).
        public static let httpStatus = Code(rawValue: "http_status")
        /// The server sent something that breaks the protocol or a safety limit (AMF nesting, sizes).
        public static let protocolViolation = Code(rawValue: "protocol_violation")
    }

    public var code: Code
    /// One plain sentence for a person: what failed and where (`127.0.0.1:8080 refused the connection`).
    public var message: String
    /// The HTTP status, for ``Code/httpStatus``.
    public var httpStatus: Int?
    /// What the library underneath said (an errno text, a SwiftNIO or AsyncHTTPClient error), for logs.
    public var detail: String?

    public init(_ code: Code, _ message: String, httpStatus: Int? = nil, detail: String? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.detail = detail
    }

    public var description: String { "\(code): \(message)" }
}

extension TransportError {
    /// What a check of the server's bytes (LivePlayWire) found, as this module reports it.
    init(_ error: WireError) {
        self.init(
            error.code == .httpStatus ? .httpStatus : .protocolViolation, error.message, httpStatus: error.httpStatus)
    }
}
