import Foundation
import LivePlay

/// What `GET /probe?target=URL&seconds=S` asks for, checked before anything plays: a request that cannot be
/// probed is a 400 that says why, never a probe of something else (a `seconds` that is not a number is not 5).
/// A probe reaches out over the network only: a local path or `file://` URL is refused unread (whether a file exists
/// is not told to whoever reaches the port), and with ``ProbeAllowance`` entries only their hosts are probed.
struct ProbeRequest: Sendable, Hashable {
    var target: String
    var duration: Duration

    static let defaultSeconds = 5.0

    init(_ items: [URLQueryItem], allowed: [ProbeAllowance] = []) throws(MonitorError) {
        guard let target = items.first(where: { $0.name == "target" })?.value, !target.isEmpty else {
            throw MonitorError(.badProbe, "probe needs target=URL (an http, https, rtmp or rtmps URL)")
        }
        // `play`'s check of a URL, then the network schemes only.
        let address: StreamAddress
        do {
            address = try StreamAddress(parsing: target)
        } catch {
            throw MonitorError(.badProbe, "target=\(Self.shown(Redaction.url(target))): \(error.message)")
        }
        guard !address.isLocalFile else {
            throw MonitorError(
                .badProbe, "a probe takes a network URL (http, https, rtmp or rtmps), not a local path or file:// URL")
        }
        if !allowed.isEmpty, !allowed.contains(where: { $0.admits(address) }) {
            throw MonitorError(
                .badProbe,
                "target=\(Self.shown(Redaction.url(target))): \(Self.shown(address.hostAndPort)) is not in --probe-allow")
        }
        let limit = MetricsServer.maximumProbeSeconds
        var seconds = Self.defaultSeconds
        if let text = items.first(where: { $0.name == "seconds" })?.value {
            guard let value = Double(text) else {
                throw MonitorError(.badProbe, "seconds=\(Self.shown(text)) is not a number of seconds")
            }
            seconds = value
        }
        guard seconds.isFinite, seconds > 0, seconds <= limit else {
            throw MonitorError(.badProbe, "seconds must be more than 0 and at most \(Int(limit)), got \(seconds)")
        }
        self.target = target
        duration = .milliseconds(Int64(seconds * 1000))
    }

    /// A value quoted in a reply, cut short: the reply is for a person, not an echo of whatever was sent.
    private static func shown(_ text: String) -> String {
        text.count > 64 ? "\(text.prefix(64))…" : text
    }
}

/// One `--probe-allow HOST[:PORT]`: the host a probe may reach, on any port or on that one. Hosts compare
/// without case, as written in the URL (no name is resolved to decide).
public struct ProbeAllowance: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int?

    /// `HOST`, `HOST:PORT`, `[v6]` or `[v6]:PORT`; nil for anything else.
    public init?(parsing text: String) {
        var host = Substring(text)
        var port: Int?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let after = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let value = Int(after.dropFirst()) else { return nil }
                port = value
            }
        } else if let colon = host.firstIndex(of: ":") {
            guard let value = Int(host[host.index(after: colon)...]) else { return nil }
            port = value
            host = host[..<colon]
        }
        if let port, !(1...65535).contains(port) { return nil }
        guard !host.isEmpty, !host.contains("/"), !host.contains("@") else { return nil }
        self.host = host.lowercased()
        self.port = port
    }

    func admits(_ address: StreamAddress) -> Bool {
        address.host.lowercased() == host && (port.map { $0 == address.port } ?? true)
    }

    public var description: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return port.map { "\(shown):\($0)" } ?? shown
    }
}
