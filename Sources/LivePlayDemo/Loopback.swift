/// The network rule of the demo server and the lab built on it: they bind and connect on loopback only.
public enum Loopback {
    /// The hosts they accept.
    public static let allowedHosts: Set<String> = ["127.0.0.1", "::1", "localhost", "[::1]"]

    /// The literal address for `host` (`localhost` becomes 127.0.0.1, so name resolution cannot leave
    /// the machine); throws ``DemoError/Code/notLoopback`` for anything else.
    public static func address(_ host: String) throws(DemoError) -> String {
        switch host.lowercased() {
        case "127.0.0.1", "localhost": return "127.0.0.1"
        case "::1", "[::1]": return "::1"
        default: throw DemoError(.notLoopback, "refusing non-loopback host '\(host)'")
        }
    }

    /// Splits `HOST:PORT` (IPv6 as `[::1]:PORT`) and checks the host.
    public static func endpoint(_ text: String) throws(DemoError) -> (host: String, port: Int) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw DemoError(.invalidURL, "missing port in '\(text)'") }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw DemoError(.invalidURL, "missing port in '\(text)'") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw DemoError(.invalidURL, "bad port in '\(text)'")
        }
        return (try address(String(host)), port)
    }
}
