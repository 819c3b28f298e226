/// The lab's network rule: it binds and connects on loopback only.
public enum Loopback {
    /// The hosts the lab accepts.
    public static let allowedHosts: Set<String> = ["127.0.0.1", "::1", "localhost", "[::1]"]

    /// The literal address for `host` (`localhost` becomes 127.0.0.1, so name resolution cannot leave
    /// the machine); throws ``LabError/Code/notLoopback`` for anything else.
    public static func address(_ host: String) throws(LabError) -> String {
        switch host.lowercased() {
        case "127.0.0.1", "localhost": return "127.0.0.1"
        case "::1", "[::1]": return "::1"
        default: throw LabError(.notLoopback, "refusing non-loopback host '\(host)'")
        }
    }

    /// Splits `HOST:PORT` (IPv6 as `[::1]:PORT`) and checks the host.
    public static func endpoint(_ text: String) throws(LabError) -> (host: String, port: Int) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw LabError(.invalidURL, "missing port in '\(text)'") }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw LabError(.invalidURL, "missing port in '\(text)'") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw LabError(.invalidURL, "bad port in '\(text)'")
        }
        return (try address(String(host)), port)
    }
}
