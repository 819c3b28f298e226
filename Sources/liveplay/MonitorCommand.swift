import ArgumentParser
import Foundation
import LivePlay
import LivePlayMonitor
import Logging

/// `liveplay monitor`: many streams in one process, with Prometheus metrics, for as long as it runs.
struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Watch many streams at once: JSON lines per stream, Prometheus metrics, sharding across replicas.",
        discussion: """
            Streams come from --streams FILE (lines `ID URL [--decode] [--mode M]`, # comments) and from URLs \
            given here (their ID is host-port-path). Each plays in probe mode (no decoding) unless --decode, with \
            TXLivePlayer's reconnects and, when those give up, again after a backoff (2 s, doubling to 60 s): a \
            stream that is down is reported down, never dropped. SIGHUP reads the file again: streams added, \
            removed or changed start or stop, the others play on and keep their counters. --shard I/N keeps the \
            streams whose ID rendezvous-hashes to shard I of N, so N replicas split one list with no overlap. \
            With --metrics-listen, GET /metrics, /healthz and /probe?target=URL&seconds=S (S 5 by default, at most \
            120; network URLs only, and only --probe-allow's hosts when given; docs/monitoring.md).

            The log is JSON lines on stdout: each stream's events and statuses (with `id`), and the monitor's own \
            `monitor` lines (listening, loaded, started, down, stopped) and `reload` lines. stderr has errors only.

            Files: monitor reads --streams and writes none (as a service: liveplay-monitor.service reads \
            /etc/liveplay/streams.list, and its log goes to the journal).

            Exit codes: 0 stopped by SIGINT or SIGTERM; 64 bad usage: an option, or a URL or list line that \
            `play` would refuse (a malformed URL, an unsupported scheme, a file that does not exist), told with \
            its line and reason; 71 the --metrics-listen address cannot be listened on (in use, not this \
            machine's, not permitted), told before any stream starts.

            Examples:
              liveplay monitor --streams streams.list --metrics-listen 127.0.0.1:9464
                                                      every stream, metrics for Prometheus
              liveplay monitor URL1 URL2 --no-statuses
                                                      two streams, events only
              liveplay monitor --streams s.list --shard 1/3 --metrics-listen 0.0.0.0:9464
                                                      replica 2 of 3 (in a pod)
              liveplay monitor --streams streams.list --decode --play-threads 0
                                                      decode, a thread per stream
              kill -HUP PID                           read the list again
            """
    )

    @Argument(help: "Stream URLs to watch besides those of --streams.")
    var urls: [String] = []

    @Option(help: "The stream list: one `ID URL [options]` per line; SIGHUP reads it again.")
    var streams: String?

    @Option(help: "This replica's shard, I/N (0-based): keep the streams whose ID hashes to I of N.")
    var shard: String = "0/1"

    @Option(help: "Serve /metrics, /healthz and /probe on ADDR:PORT (e.g. 127.0.0.1:9464, or 0.0.0.0:9464 in a pod).")
    var metricsListen: String?

    @Option(help: "/probe reaches only this HOST or HOST:PORT (repeatable; default: any http, https, rtmp or rtmps URL).")
    var probeAllow: [String] = []

    @Flag(help: "Decode every stream (default: probe mode, transport and timing figures only).")
    var decode = false

    @Option(help: HardwareDecodingOption.help)
    var hwdec: HardwareDecodingOption = .no

    @Option(help: "Threads the streams' players share (0: a thread per stream; default: one per core).")
    var playThreads: Int?

    @Option(help: "Milliseconds between reads of an HTTP-FLV socket: each read takes what arrived meanwhile (0: at once).")
    var readInterval = 100

    @Option(help: "Streams started per second at most when many start at once (the list, a reload; 0: all at once).")
    var startRate = 100.0

    @Flag(help: "Leave the once-a-second status lines out of the log (the metrics have them).")
    var noStatuses = false

    @Option(help: "Events below this level are left out of the log: trace, debug, info, warning, error.")
    var logLevel: LogLevelOption = .info

    @Flag(help: "Show URLs with their query values and passwords.")
    var showSecrets = false

    func validate() throws {
        guard streams != nil || !urls.isEmpty else { throw ValidationError("give --streams FILE or URLs to watch") }
        guard Shard(parsing: shard) != nil else { throw ValidationError("--shard takes I/N with 0 ≤ I < N, e.g. 0/3") }
        if let metricsListen, Self.listenAddress(metricsListen) == nil {
            throw ValidationError("--metrics-listen takes ADDR:PORT, e.g. 127.0.0.1:9464 or [::1]:9464")
        }
        for url in urls {
            do {
                try StreamURL.check(url)
            } catch {
                throw ValidationError("cannot watch \(showSecrets ? url : Redaction.url(url)): \(error.message)")
            }
        }
        for allowance in probeAllow where ProbeAllowance(parsing: allowance) == nil {
            throw ValidationError("--probe-allow takes HOST or HOST:PORT (e.g. origin.example:1935, [::1]), got '\(allowance)'")
        }
        if !probeAllow.isEmpty, metricsListen == nil { throw ValidationError("--probe-allow needs --metrics-listen") }
        guard startRate >= 0, startRate.isFinite else { throw ValidationError("--start-rate must be 0 or more") }
        guard (0...1000).contains(readInterval) else { throw ValidationError("--read-interval must be 0…1000 ms") }
        if let playThreads, !(0...256).contains(playThreads) {
            throw ValidationError("--play-threads must be 0…256")
        }
        if let streams { _ = try Self.read(streams) }
    }

    /// `ADDR:PORT` (`[v6]:PORT` for IPv6) as host and port.
    static func listenAddress(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    /// The list file's streams, each line's options checked.
    static func read(_ path: String) throws -> [MonitoredStream] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ValidationError("cannot read the stream list \(path): no such file")
        }
        guard !isDirectory.boolValue else {
            throw ValidationError("cannot read the stream list \(path): it is a directory; give the list file in it")
        }
        guard FileManager.default.isReadableFile(atPath: path), let data = FileManager.default.contents(atPath: path)
        else { throw ValidationError("cannot read the stream list \(path): permission denied") }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw ValidationError("cannot read the stream list \(path): it is not UTF-8 text")
        }
        do {
            let streams = try StreamList.parse(text)
            for stream in streams {
                if let problem = MonitorOptions.check(stream) { throw ValidationError("\(path): \(stream.id): \(problem)") }
            }
            return streams
        } catch let error as StreamList.ParseError {
            throw ValidationError("\(path): \(error)")
        }
    }

    /// The file's streams and the command line's.
    private func list() throws -> [MonitoredStream] {
        let fromFile = try streams.map(Self.read) ?? []
        return fromFile + urls.map { MonitoredStream(id: StreamList.derivedID(for: $0), url: $0) }
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        let shard = Shard(parsing: shard)!
        let output = LogOutput(.standardOutput)
        let notes = EventLog(style: .json, output: output)
        let (statuses, level, secrets) = (!noStatuses, logLevel, showSecrets)
        // The players' own diagnostics in the CLI's one voice, only from --log-level debug (as `play`'s).
        LoggingSystem.bootstrap { _ in PlainLogHandler(log: notes, level: level) }
        var configuration = LivePlayConfiguration(decodes: decode)
        configuration.decoder.hardware = hwdec.value
        let threads = playThreads ?? ProcessInfo.processInfo.activeProcessorCount
        if threads > 0 { configuration.threads = PlaybackThreadGroup(threads: threads) }
        configuration.transport.readInterval = .milliseconds(readInterval)
        let monitor = Monitor(
            shard: shard, options: MonitorOptions(configuration: configuration, startsPerSecond: startRate),
            listeners: { stream in
                let log = EventLog(style: .json, output: output, streamID: stream.id, level: level)
                log.start(url: secrets ? stream.url : Redaction.url(stream.url), mode: "monitor")
                return statuses ? log : EventsOnly(log)
            },
            onNote: { note in notes.monitor(note) })
        // The metrics address first: one in use ends the run with its own code before any stream starts.
        var metrics: MetricsServer.Listener?
        if let metricsListen, let (host, port) = Self.listenAddress(metricsListen) {
            let listener: MetricsServer.Listener
            do {
                listener = try await MetricsServer(
                    host: host, port: port, monitor: monitor,
                    probeAllowance: probeAllow.compactMap(ProbeAllowance.init(parsing:))
                ).listen()
            } catch {
                Standard.error("liveplay monitor: \(error.message)")
                throw ExitCode(ExitStatus.cannotListen)
            }
            let shown = host.contains(":") ? "[\(host)]" : host
            if logLevel <= .info { notes.monitorListening(url: "http://\(shown):\(listener.port)/metrics") }
            metrics = listener
        }
        let plan = monitor.load(try list())
        if logLevel <= .info { notes.monitorLoaded(shard: "\(shard)", streams: plan.start.count) }
        let stop = StopSignal()
        let quit = SignalWatch([SIGINT, SIGTERM]) { stop.fire(.interrupted) }
        let reload = SignalWatch([SIGHUP]) {
            do {
                let plan = monitor.load(try list())
                notes.reloaded(plan)
            } catch {
                notes.error("liveplay monitor: the list was not reloaded: \(error)")
            }
        }
        defer {
            quit.cancel()
            reload.cancel()
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await monitor.run() }
            if let metrics { group.addTask { try await metrics.run() } }
            group.addTask { _ = await stop.reason() }
            try await group.next()
            group.cancelAll()
        }
    }
}

/// A stream's log without its status lines.
private final class EventsOnly: LivePlayListener, Sendable {
    let log: EventLog
    init(_ log: EventLog) { self.log = log }
    func onPlayEvent(_ event: PlayEvent) { log.onPlayEvent(event) }
}

extension EventLog {
    /// What the monitor did to a stream: `{"kind":"monitor","id":…,"event":"started"|"down"|"stopped",…}`.
    func monitor(_ note: MonitorNote) {
        var line = JSONLine()
        line.add("v", Self.schemaVersion)
        line.add("kind", "monitor")
        line.add("ts", Timestamp.iso8601(Date()))
        line.add("id", note.stream)
        line.add("event", note.kind.rawValue)
        if let retry = note.retryIn { line.add("retry_ms", Int64(retry.components.seconds * 1000 + retry.components.attoseconds / 1_000_000_000_000_000)) }
        if let outcome = note.outcome { line.add("outcome", outcome) }
        writeLine(line.line)
    }

    /// The metrics are served at `url` (`{"kind":"monitor","event":"listening","url":…}`).
    func monitorListening(url: String) {
        var line = monitorLine(event: "listening")
        line.add("url", url)
        writeLine(line.line)
    }

    /// The list was read: how many of its streams are this shard's (`{"kind":"monitor","event":"loaded",…}`).
    func monitorLoaded(shard: String, streams: Int) {
        var line = monitorLine(event: "loaded")
        line.add("shard", shard)
        line.add("streams", streams)
        writeLine(line.line)
    }

    /// The start of a `monitor` line about the monitor itself (no stream `id`).
    private func monitorLine(event: String) -> JSONLine {
        var line = JSONLine()
        line.add("v", Self.schemaVersion)
        line.add("kind", "monitor")
        line.add("ts", Timestamp.iso8601(Date()))
        line.add("event", event)
        return line
    }

    /// A SIGHUP's new list, as it changed this shard.
    func reloaded(_ plan: MonitorPlan) {
        var line = JSONLine()
        line.add("v", Self.schemaVersion)
        line.add("kind", "reload")
        line.add("ts", Timestamp.iso8601(Date()))
        line.add("started", plan.start.map(\.id).joined(separator: ","))
        line.add("stopped", plan.stop.joined(separator: ","))
        line.add("restarted", plan.restart.map(\.id).joined(separator: ","))
        writeLine(line.line)
    }
}
