import LivePlayCore

/// The scheme, host and port of an RTMP URL: what the player connects to itself.
///
/// librtmp's `RTMP_ParseURL` still parses the app, play path and tcUrl (it keeps pointers into its own
/// copy of the URL), but it cannot read an IPv6 literal (`[::1]`: it splits the host at the first colon),
/// so host and port come from here. Default ports as in librtmp: 1935, and 443 for `rtmps`.
struct RTMPURL: Sendable, Hashable {
    var scheme: String
    var host: String
    var port: UInt16

    static let supportedSchemes: Set<String> = ["rtmp", "rtmps"]

    init(scheme: String, host: String, port: UInt16) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// Parses `scheme://host[:port]/app/playpath[?query][ option=value…]`.
    init(parsing url: String) throws(TransportError) {
        let address = url.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
        guard let separator = address.range(of: "://") else {
            throw TransportError(.invalidURL, "not an RTMP URL: \(Redaction.url(address))")
        }
        let scheme = address[..<separator.lowerBound].lowercased()
        guard Self.supportedSchemes.contains(scheme) else {
            throw TransportError(.invalidURL, "unsupported scheme \(scheme)://; rtmp:// and rtmps:// are")
        }
        let rest = address[separator.upperBound...]
        guard let slash = rest.firstIndex(of: "/"), rest[rest.index(after: slash)...].contains(where: { $0 != "/" })
        else {
            throw TransportError(.invalidURL, "no application or stream name in \(Redaction.url(address))")
        }
        let authority = rest[..<slash]
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw TransportError(.invalidURL, "unterminated IPv6 address in \(Redaction.url(address))")
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty {
                throw TransportError(.invalidURL, "unexpected text after the IPv6 address")
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw TransportError(.invalidURL, "no host in \(Redaction.url(address))") }
        var port: UInt16 = scheme == "rtmps" ? 443 : 1935
        if let portText {
            guard let value = UInt16(portText), value > 0 else {
                throw TransportError(.invalidURL, "invalid port \(portText)")
            }
            port = value
        }
        self.init(scheme: scheme, host: String(host), port: port)
    }
}
