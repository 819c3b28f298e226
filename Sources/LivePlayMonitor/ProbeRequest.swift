import Foundation
import LivePlay

/// What `GET /probe?target=URL&seconds=S` asks for, checked before anything plays: a request that cannot be
/// probed is a 400 that says why, never a probe of something else (a `seconds` that is not a number is not 5).
struct ProbeRequest: Sendable, Hashable {
    var target: String
    var duration: Duration

    static let defaultSeconds = 5.0

    init(_ items: [URLQueryItem]) throws(MonitorError) {
        guard let target = items.first(where: { $0.name == "target" })?.value, !target.isEmpty else {
            throw MonitorError(.badProbe, "probe needs target=URL (an HTTP-FLV, RTMP or file URL)")
        }
        // `play`'s check of a URL; a file's existence is not told to whoever can reach the port.
        do {
            _ = try StreamAddress(parsing: target)
        } catch {
            throw MonitorError(.badProbe, "target=\(Self.shown(Redaction.url(target))): \(error.message)")
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
