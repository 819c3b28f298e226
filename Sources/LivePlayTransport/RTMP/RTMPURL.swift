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

    /// Parses `scheme://host[:port]/app/playpath[?query][ option=value…]`; the fields are checked by
    /// ``StreamAddress``, the one URL check every transport shares.
    init(parsing url: String) throws(TransportError) {
        let text = url.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
        let address: StreamAddress
        do {
            address = try StreamAddress(parsing: text)
        } catch {
            throw TransportError(.invalidURL, error.message)
        }
        guard Self.supportedSchemes.contains(address.scheme.rawValue), let port = UInt16(exactly: address.port) else {
            throw TransportError(.invalidURL, "not an RTMP URL: \(Redaction.url(text))")
        }
        self.init(scheme: address.scheme.rawValue, host: address.host, port: port)
    }
}
