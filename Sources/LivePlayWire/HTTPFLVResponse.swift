/// What the player makes of the HTTP response a live FLV stream arrives in (RFC 9110, RFC 9112): the head
/// says whether a stream follows and whether it has a length, the body's end whether the stream finished
/// or was cut.
///
/// HTTP framing (status line, header syntax, chunked coding) is SwiftNIO's; this value decides what the
/// parsed response means. FLV over HTTP has no end-of-stream message, so only a body that reaches its
/// announced `Content-Length` is finished (a file); a live body, which has none, that ends is cut.
public struct HTTPFLVResponse: Sendable, Hashable {
    public let status: Int
    /// The body's length from `Content-Length`, or `nil` for a live body (chunked or close-delimited).
    public let expectedLength: Int?
    /// Body bytes so far.
    public private(set) var received = 0

    /// How a body ended.
    public enum End: Sendable, Hashable {
        /// All `Content-Length` bytes arrived: a finished file.
        case finished
        /// A live body ended, or a file's ended short: the server closed the stream.
        case cut
    }

    /// Checks a response head.
    ///
    /// - Throws: ``WireError/Code/httpStatus`` for a status outside 2xx; ``WireError/Code/protocolViolation``
    ///   for a `Content-Length` that is not a number or disagrees with another (RFC 9112 §6.3: unrecoverable).
    public init(status: Int, reason: String, headers: some Sequence<(name: String, value: String)>) throws(WireError) {
        guard (200..<300).contains(status) else {
            // The reason phrase is the server's text: shortened, and the event log escapes it.
            throw WireError(.httpStatus, "HTTP \(status) \(reason.prefix(64))", httpStatus: status)
        }
        self.status = status
        var lengths: Set<Int> = []
        var chunked = false
        for (name, value) in headers {
            switch name.lowercased() {
            case "transfer-encoding":
                chunked = true
            case "content-length":
                // RFC 9110 §8.6: a list of identical values is the same as one.
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    let digits = item.trimmingSpaces
                    guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                        let length = Int(digits)
                    else {
                        throw WireError(.protocolViolation, "Content-Length \"\(value.prefix(32))\" is not a length")
                    }
                    lengths.insert(length)
                }
            default:
                break
            }
        }
        guard lengths.count <= 1 else {
            throw WireError(.protocolViolation, "\(lengths.count) different Content-Length values")
        }
        // RFC 9112 §6.3: Transfer-Encoding overrides Content-Length; 204 has no body.
        expectedLength = status == 204 ? 0 : chunked ? nil : lengths.first
    }

    /// Counts a body chunk of `count` bytes.
    ///
    /// - Throws: ``WireError/Code/protocolViolation`` when the body runs past its `Content-Length`.
    public mutating func receive(_ count: Int) throws(WireError) {
        received += count
        if let expectedLength, received > expectedLength {
            throw WireError(.protocolViolation, "body of \(received) bytes is longer than its Content-Length \(expectedLength)")
        }
    }

    /// How the body ended, now that it has.
    public var end: End {
        if let expectedLength, received == expectedLength { return .finished }
        return .cut
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (RFC 9110 §5.6.3, optional whitespace).
    fileprivate var trimmingSpaces: Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
