/// The one error type of the stream lab: a code, what it was about, and the underlying error if any. The live
/// server and the loopback rule, from LivePlayDemo, throw that module's ``DemoError``.
public struct LabError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// A timeline, toxic or duration that does not parse.
        case invalidTimeline
        /// A URL the load generator cannot use.
        case invalidURL
        /// The proxy is already running, or was stopped.
        case invalidState
        /// Binding or connecting failed.
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
