import Foundation
import Logging

/// The library's own diagnostics (librtmp, the FLV demuxer, the transport) on stderr in the CLI's one voice:
/// `liveplay: librtmp: …`, through the log so a status line is redrawn below them. They are for someone
/// looking into a problem: shown from `--log-level debug` down, never at the default level, where the events
/// say what matters to a viewer.
struct PlainLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level
    private let log: EventLog

    init(log: EventLog, level: LogLevelOption) {
        self.log = log
        logLevel = level <= .debug ? level.swiftLogLevel : .critical
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let details = merged.keys.sorted().map { "\($0)=\(merged[$0]!)" }
        // A library's module name says nothing to a viewer; a C library's name (librtmp) does.
        let source = event.source.hasPrefix("LivePlay") || event.source.isEmpty ? "" : "\(event.source): "
        log.error(
            "liveplay: \(source)\(event.message)" + (details.isEmpty ? "" : " (\(details.joined(separator: ", ")))"))
    }
}
