/// The one error type of LivePlayTransport.
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
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
