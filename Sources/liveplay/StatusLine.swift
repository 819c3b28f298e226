import Foundation
import LivePlay

/// The live status line on a terminal: the net status in a few words, made to fit the terminal's width by leaving
/// out the least important fields (as ffmpeg's and mpv's status lines do), never by wrapping. A live stream shows
/// its latency; media on demand its position and duration.
enum StatusLine {
    /// The line for `status`, at most `columns - 1` wide (the last column wraps on some terminals).
    static func text(_ status: NetStatus, columns: Int) -> String {
        // Each field with its rank: the lowest-ranked one goes first when the line is too long.
        var fields: [(text: String, rank: Int)] = [
            (status.reason.map { "\(status.state) (\($0.replacingOccurrences(of: "_", with: " ")))" } ?? status.state, 9)
        ]
        if let position = status.positionMilliseconds {
            let duration = status.durationMilliseconds.map { clock(Double($0) / 1000) } ?? "?"
            fields.append(("\(clock(Double(position) / 1000)) / \(duration)", 8))
        } else {
            fields.append(("latency \(seconds(status.latencyMilliseconds))", 8))
            if let e2e = status.endToEndLatencyMilliseconds { fields.append(("e2e \(seconds(e2e))", 2)) }
        }
        fields.append(("buffer \(seconds(status.cacheMilliseconds))", 7))
        fields.append((String(format: "%.0f fps", status.videoFPS), 6))
        if status.rate != 1 { fields.append((String(format: "rate %.2fx", status.rate), 5)) }
        fields.append(("\(status.videoBitrateKbps + status.audioBitrateKbps) kbit/s", 4))
        fields.append(("stutters \(status.stutters)", 3))
        if status.videoWidth > 0 { fields.append(("\(status.videoWidth)x\(status.videoHeight)", 1)) }
        let room = max(10, columns - 1)
        var line = fields.map(\.text).joined(separator: "  ")
        while line.count > room, fields.count > 1, let lowest = fields.indices.min(by: { fields[$0].rank < fields[$1].rank }) {
            fields.remove(at: lowest)
            line = fields.map(\.text).joined(separator: "  ")
        }
        return line.count <= room ? line : String(line.prefix(room - 1)) + "…"
    }

    /// `m:ss`, or `h:mm:ss` from an hour.
    static func clock(_ seconds: Double) -> String {
        let total = Int(max(0, seconds.isFinite ? seconds : 0))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0
            ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }

    private static func seconds(_ milliseconds: Int) -> String {
        String(format: "%.2f s", Double(milliseconds) / 1000)
    }
}
