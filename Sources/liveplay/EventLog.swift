import Foundation
import LivePlay

/// Where `liveplay URL` writes what happens: JSON lines for monitoring (schema v1, docs/event-log.md) or
/// readable lines and a live status line for a person. Thread-safe: the player's delivery thread, the
/// frame tracer on the play loop and the command all write here. Every line is flushed as it is written,
/// so `liveplay URL | tool` sees events as they happen.
final class EventLog: LivePlayListener, Sendable {
    /// The version of the JSON lines' schema (`"v"`); fields are only ever added within a version.
    static let schemaVersion = 1

    enum Style {
        case json
        case human(statusLine: Bool)
    }

    let style: Style
    /// Identifies this run's lines when several logs are merged.
    let sessionID: String
    /// The operator's name for the stream (`--id`), on every JSON line.
    let streamID: String?
    /// Events below this level are not logged (statuses always are): `info` logs every event.
    let level: LogLevelOption
    /// Where the lines go; logs of several streams share one, so their lines never interleave.
    let output: LogOutput
    /// `-q`: errors only. No status lines; the start line and the 9006 summary only where the JSON log was asked
    /// for by name (`-q --json`, what monitoring reads of a quiet run).
    let quiet: Quiet?

    enum Quiet {
        case errorsOnly
        case errorsAndSummary
    }

    init(
        style: Style, output: LogOutput, streamID: String? = nil, level: LogLevelOption = .info, quiet: Quiet? = nil
    ) {
        self.style = style
        self.output = output
        self.streamID = streamID
        self.level = level
        self.quiet = quiet
        sessionID = String(UInt32.random(in: 0...UInt32.max), radix: 16).leftPadded(to: 8)
    }

    /// The first JSON line of a run: which stream this session is (the URL as shown, the `--id`).
    /// The run's first line; `resumeAt`: media on demand resumes there (``ResumePositions``).
    func start(url: String, mode: String, resumeAt: Duration? = nil) {
        if let resumeAt {
            note("liveplay: resuming at \(StatusLine.clock(resumeAt.seconds)), where it was left (--no-resume or --start 0: from the start)")
        }
        guard case .json = style, quiet != .errorsOnly else { return }
        var line = header(kind: "start")
        line.add("url", url)
        line.add("mode", mode)
        line.add("version", LivePlayCommand.version)
        if let resumeAt { line.add("resume_ms", resumeAt.milliseconds) }
        write(line.line)
    }

    /// A switch to another stream of the list was asked for (its first picture follows as
    /// `LIVEPLAY_EVT_SWITCHED` with the time it took).
    func switched(to url: String, index: Int, preloaded: Bool) {
        switch style {
        case .json:
            var line = header(kind: "switch")
            line.add("url", url)
            line.add("index", index)
            line.add("preloaded", preloaded)
            write(line.line)
        case .human:
            write("liveplay: switching to \(url)\(preloaded ? " (preloaded)" : "")")
        }
    }

    func onPlayEvent(_ event: PlayEvent) {
        // A JSON log keeps the summary at every level: what monitoring reads of a quiet run (`-q --json`).
        let keeps = level.logs(event.code) || event.code == .sessionSummary && isJSON && quiet != .errorsOnly
        guard keeps else { return }
        if let caption = event.caption {
            self.caption(caption, at: event.elapsedMilliseconds)
            return
        }
        switch style {
        case .json:
            var line = header(kind: "event")
            line.add("time_ms", event.elapsedMilliseconds)
            line.add("code", event.code.rawValue)
            line.add("symbol", event.code.symbol)
            line.add("message", event.message)
            line.add("params", parameters: event.parameters)
            write(line.line)
        case .human(let statusLine):
            // The status line already shows the progress, every second.
            if statusLine, event.code == .playProgress { return }
            let seconds = String(format: "%7.3f", Double(event.elapsedMilliseconds) / 1000)
            let extras = event.parameters.keys.sorted().map { "\($0)=\(event.parameters[$0]!)" }
            let text = "\(seconds)s \(event.code.rawValue) \(event.code.symbol) \(event.message)"
                + (extras.isEmpty ? "" : " [\(extras.joined(separator: " "))]")
            write(Self.printable(text))
        }
    }

    func onNetStatus(_ status: NetStatus) {
        guard quiet == nil else { return }
        switch style {
        case .json:
            var line = header(kind: "status")
            line.add("time_ms", status.elapsedMilliseconds)
            line.add("status", parameters: status.dictionary)
            write(line.line)
        case .human(let statusLine):
            if statusLine {
                output.showStatus(status)
            } else {
                let text = StatusLine.text(status, columns: .max)
                write(String(format: "%7.3fs status ", Double(status.elapsedMilliseconds) / 1000) + text)
            }
        }
    }

    private var isJSON: Bool {
        if case .json = style { return true }
        return false
    }

    /// A caption left the screen (event 9020): its own line, `kind: "caption"`.
    private func caption(_ caption: Caption, at elapsed: Int64) {
        switch style {
        case .json:
            var line = header(kind: "caption")
            line.add("time_ms", elapsed)
            line.add("start_ms", caption.start.milliseconds)
            line.add("end_ms", caption.end.milliseconds)
            line.add("text", caption.text)
            line.add("channel", caption.channel.rawValue)
            write(line.line)
        case .human:
            let span = String(
                format: "%.3f–%.3f s", Double(caption.start.milliseconds) / 1000, Double(caption.end.milliseconds) / 1000)
            let text = caption.text.split(separator: "\n").joined(separator: " / ")
            write(Self.printable(String(format: "%7.3fs ", Double(elapsed) / 1000) + "caption \(caption.channel.rawValue) \(span): \(text)"))
        }
    }

    /// A snapshot the person asked for (the window's `s`) was written: where.
    func snapshot(path: String) {
        switch style {
        case .json:
            var line = header(kind: "snapshot")
            line.add("path", path)
            write(line.line)
        case .human:
            write("liveplay: snapshot written to \(path)")
        }
    }

    /// `--trace-frames`: one line per presented picture.
    func frame(_ timing: FrameTiming, shownAt: Date) {
        var line = header(kind: "frame")
        line.add("pts_ms", timing.pts.milliseconds)
        line.add("shown_at_ms", Int64((shownAt.timeIntervalSince1970 * 1000).rounded()))
        line.add("position_ms", timing.position.milliseconds)
        line.add("rate", timing.rate)
        line.add("dropped_before", timing.droppedBefore)
        write(line.line)
    }

    /// A line for a person that is not an event (the URL being played, how it ended).
    /// A JSON line made elsewhere (the monitor's own lines), written as the others are.
    func writeLine(_ text: String) {
        write(text)
    }

    func note(_ text: String) {
        if case .human = style, level <= .info { write(text) }
    }

    /// A sentence for stderr, whatever the log's format; on a terminal the status line is redrawn below it.
    func error(_ text: String) {
        output.error(text)
    }

    /// Clears the live status line: the summary above it has the run's last figures, and the shell prompt starts
    /// on a clean line.
    func close() {
        output.clearStatus()
    }

    /// Whether writing failed (the reader went away): the command stops then.
    var broken: Bool { output.broken }

    /// Draws the status line again at once (the terminal was resized: `SIGWINCH`).
    func redrawStatus() {
        output.redrawStatus()
    }

    /// Text from the stream (metadata, messages) shown on a terminal: control characters are written as
    /// `\u{…}`, so a hostile stream cannot move the cursor, retitle the window or hide lines.
    static func printable(_ text: String) -> String {
        var output = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                output += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    private func header(kind: String) -> JSONLine {
        var line = JSONLine()
        line.add("v", Self.schemaVersion)
        line.add("kind", kind)
        line.add("session", sessionID)
        line.add("ts", Timestamp.iso8601(Date()))
        if let streamID { line.add("id", streamID) }
        return line
    }

    private func write(_ text: String) {
        output.write(text)
    }
}

/// UTC timestamps for log lines: `2026-11-22T21:45:00.123Z`.
enum Timestamp {
    static func iso8601(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var time = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(milliseconds % 1000))
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
