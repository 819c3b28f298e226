/// The one error type of LivePlayDemo: a code, what it was about, and the underlying error if any.
public struct DemoError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// A host other than 127.0.0.1, ::1 or localhost: the server never binds anything off this machine.
        case notLoopback
        /// The input is not an FLV stream the server can loop (no header, no tags).
        case invalidFLV
        /// A `HOST:PORT` without a port, or with one out of range.
        case invalidURL
        /// Reading the input file failed.
        case readFailed
        /// The server is already running, or was stopped.
        case invalidState
        /// Binding failed.
        case networkFailed
    }

    public var code: Code
    /// What the error is about (a host, a path, the offending text).
    public var context: String
    /// The error that caused it, as text so the type stays `Equatable`.
    public var cause: String?

    public init(_ code: Code, _ context: String, cause: (any Error)? = nil) {
        self.code = code
        self.context = context
        self.cause = cause.map { String(describing: $0) }
    }

    public var description: String {
        var text = "\(code.rawValue): \(context)"
        if let cause { text += " (\(cause))" }
        return text
    }
}
