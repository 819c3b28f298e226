/// What a stream URL names, checked before anything connects: its scheme, host, port and path.
///
/// Every field a person can mistype is checked here, once, with a message that says what is wrong: a port
/// outside 1…65535 or with other characters than digits, an unterminated IPv6 literal, a missing host, a
/// scheme liveplay does not play. Nothing here traps on any input (fuzzed by `FuzzTargets.streamAddress`);
/// the transports parse again only what they pass on to their libraries. A string without `://` is a local
/// path; `file://` URLs are local paths too (RFC 8089: `file:///path` or `file://localhost/path`).
public struct StreamAddress: Sendable, Hashable {
    public enum Scheme: String, Sendable, CaseIterable {
        case http, https, rtmp, rtmps, file
    }

    public var scheme: Scheme
    /// The host as written, without the brackets of an IPv6 literal; empty for a local file.
    public var host: String
    /// The port the URL gives, or the scheme's default (80, 443, 1935, 443 for `rtmps`); 0 for a file.
    public var port: Int
    /// Whether the URL gave the port explicitly.
    public var hasExplicitPort: Bool
    /// The path and query as written (`/live/stream.flv?token=…`); the file's path for a local file.
    public var path: String

    /// The schemes librtmp knows that liveplay refuses, and why.
    static let refusedSchemes: Set<String> = ["rtmpe", "rtmpt", "rtmpte", "rtmpts"]

    /// Parses `url`; throws ``StreamAddressError`` with a sentence a person can act on.
    public init(parsing url: String) throws(StreamAddressError) {
        guard !url.isEmpty else { throw StreamAddressError("the URL is empty") }
        guard let separator = url.firstRange(of: "://") else {
            self.init(scheme: .file, host: "", port: 0, hasExplicitPort: false, path: url)
            return
        }
        let schemeText = url[..<separator.lowerBound].lowercased()
        guard let scheme = Scheme(rawValue: schemeText) else {
            if Self.refusedSchemes.contains(schemeText) {
                throw StreamAddressError(
                    "\(schemeText):// is not supported: liveplay checks every RTMP message before librtmp does, "
                        + "which encrypted or HTTP-tunnelled RTMP prevents; use rtmp:// or rtmps://")
            }
            let shown = schemeText.count > 16 || !schemeText.allSatisfy(\.isASCII) ? "this" : "\(schemeText)://"
            throw StreamAddressError(
                "\(shown) URLs are not supported; use http(s):// for HTTP-FLV, rtmp(s):// for RTMP, or a file path")
        }
        let rest = url[separator.upperBound...]
        if scheme == .file {
            // file:///path, or file://localhost/path.
            let path = rest.hasPrefix("localhost/") ? rest.dropFirst("localhost".count) : rest
            guard path.hasPrefix("/") else {
                throw StreamAddressError("a file:// URL names an absolute path on this machine (file:///path)")
            }
            self.init(scheme: .file, host: "", port: 0, hasExplicitPort: false, path: Self.percentDecoded(path))
            return
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        // User info (`user:password@`) is passed on as it is; only the host and port matter here.
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw StreamAddressError("the IPv6 address in the URL has no closing ']'")
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw StreamAddressError("unexpected text after the IPv6 address in the URL")
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." || $0 == "%" }) else {
                throw StreamAddressError("the text between '[' and ']' in the URL is not an IPv6 address")
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw StreamAddressError("the URL has no host name") }
        guard host.allSatisfy({ !$0.isWhitespace && $0 != "[" && $0 != "]" && $0.asciiValue.map { $0 > 0x20 } ?? true })
        else {
            throw StreamAddressError("the host name in the URL contains spaces, brackets or control characters")
        }
        var port = Self.defaultPort(scheme)
        if let portText {
            // Digits only, and at most five of them, so no conversion can overflow whatever is written.
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int(portText), (1...65535).contains(value)
            else {
                let shown = portText.count > 12 ? "\(portText.prefix(12))…" : String(portText)
                throw StreamAddressError("the port '\(shown)' in the URL is not a number from 1 to 65535")
            }
            port = value
        }
        let path = String(rest[authorityEnd...])
        if scheme == .rtmp || scheme == .rtmps {
            // Both the application and the stream: `rtmp://host/live` alone plays nothing on any server.
            let segments = path.prefix { $0 != "?" && $0 != "#" }.split(separator: "/")
                .filter { $0.contains { $0 != " " } }
            guard path.hasPrefix("/"), segments.count >= 2 else {
                let missing = segments.count == 1 ? " (\(segments[0].prefix(32)) names the application; the stream is missing)" : ""
                throw StreamAddressError(
                    "an RTMP URL names an application and a stream: rtmp://host[:port]/app/stream\(missing)")
            }
        }
        self.init(scheme: scheme, host: String(host), port: port, hasExplicitPort: portText != nil, path: path)
    }

    public init(scheme: Scheme, host: String, port: Int, hasExplicitPort: Bool, path: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.hasExplicitPort = hasExplicitPort
        self.path = path
    }

    /// `host:port`, with brackets around an IPv6 literal.
    public var hostAndPort: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    public var isLocalFile: Bool { scheme == .file }

    static func defaultPort(_ scheme: Scheme) -> Int {
        switch scheme {
        case .http: 80
        case .https, .rtmps: 443
        case .rtmp: 1935
        case .file: 0
        }
    }

    /// `%20` and friends in a file URL's path; a malformed escape stays as written.
    static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let high = hexValue(utf8[utf8.startIndex]),
                let low = hexValue(utf8[utf8.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Why a stream URL cannot be played, in one sentence.
public struct StreamAddressError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
