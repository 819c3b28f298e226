/// The one error type of LivePlayWire: what a server sent breaks the protocol or a limit, or refuses.
public struct WireError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Breaks the protocol or a safety limit (sizes, AMF nesting, a body longer than announced).
        public static let protocolViolation = Code(rawValue: "protocol_violation")
        /// An HTTP status other than 2xx (see ``WireError/httpStatus``).
        public static let httpStatus = Code(rawValue: "http_status")
    }

    public var code: Code
    public var message: String
    /// The HTTP status, for ``Code/httpStatus``.
    public var httpStatus: Int?

    public init(_ code: Code, _ message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
    }

    public var description: String { "\(code): \(message)" }
}
