import ArgumentParser
import Foundation
import LivePlay
import Logging

/// `liveplay URL`: play a live stream and print every event, for a person or (with `--json`) for monitoring.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play an HTTP(S)-FLV or RTMP URL and print its events.",
        discussion: """
            Each event is one line: for a person by default, or with --json one JSON object per line on stdout \
            (see docs/event-log.md). URLs are printed with query values and passwords hidden unless \
            --show-secrets is given. Exits 0 when the stream ends or --duration elapses, 1 after a PLAY_ERR_* \
            event, 130 when interrupted.
            """
    )

    @Argument(help: "http(s)://…/stream.flv or rtmp://host[:port]/app/stream")
    var url: String

    @Flag(help: "Print events as JSON lines.")
    var json = false

    @Option(help: "Stop after this many seconds of playing.")
    var duration: Double?

    @Option(help: "Reconnect attempts after a loss (connectRetryCount).")
    var retries = 3

    @Option(help: "Seconds to wait before each reconnect attempt (connectRetryInterval).")
    var retryInterval: Double = 3

    @Option(name: .customLong("header"), help: "An HTTP request header 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(help: "Seconds without any bytes before the connection counts as lost.")
    var readTimeout: Double = 5

    @Option(help: "Seconds allowed for the TCP connection.")
    var connectTimeout: Double = 5

    @Option(help: "Latency mode: auto (1–5 s adaptive), speed (1 s, catches up), smooth (5 s fixed cache).")
    var mode: LatencyModeOption = .auto

    @Option(help: "cacheTime in seconds: the fixed cache (smooth) and what loading waits for.")
    var cacheTime: Double?

    @Option(help: "minAutoAdjustCacheTime in seconds (auto / speed).")
    var minCache: Double?

    @Option(help: "maxAutoAdjustCacheTime in seconds (auto / speed).")
    var maxCache: Double?

    @Flag(help: "Accept TLS certificates that cannot be verified (self-signed; testing only).")
    var insecure = false

    @Flag(help: "Show URLs with their query values and passwords.")
    var showSecrets = false

    func validate() throws {
        guard (0...10).contains(retries) else { throw ValidationError("--retries must be 0…10") }
        guard retryInterval >= 0, readTimeout > 0, connectTimeout > 0 else {
            throw ValidationError("--retry-interval, --read-timeout and --connect-timeout must be positive")
        }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        for value in [cacheTime, minCache, maxCache].compactMap({ $0 }) where value <= 0 || value > 60 {
            throw ValidationError("cache times must be in (0, 60] seconds, got \(value)")
        }
        if let minCache, let maxCache, minCache > maxCache {
            throw ValidationError("--min-cache must not exceed --max-cache")
        }
        for header in headers where HTTPHeaderField(parsing: header) == nil {
            throw ValidationError("--header must look like 'Name: value', got '\(header)'")
        }
    }

    func run() async throws {
        var transport = TransportOptions(
            connectTimeout: .seconds(connectTimeout), noDataTimeout: .seconds(readTimeout),
            headers: headers.compactMap(HTTPHeaderField.init(parsing:)), allowsInsecureTLS: insecure)
        transport.handshakeTimeout = max(transport.handshakeTimeout, transport.connectTimeout)
        var latency = LatencyParameters.preset(mode.mode)
        if let cacheTime { latency.cacheTime = .seconds(cacheTime) }
        if let minCache { latency.minAutoAdjustCacheTime = .seconds(minCache) }
        if let maxCache { latency.maxAutoAdjustCacheTime = .seconds(maxCache) }
        latency.maxAutoAdjustCacheTime = max(latency.maxAutoAdjustCacheTime, latency.minAutoAdjustCacheTime)
        let configuration = LivePlayConfiguration(
            connectRetryCount: retries, connectRetryInterval: .seconds(retryInterval), transport: transport,
            latency: latency)
        var logger = Logger(label: "liveplay")
        logger.logLevel = .error
        let (url, duration, sessionLogger) = (url, duration, logger)
        let printer = EventPrinter(json: json, showSecrets: showSecrets, url: url)
        printer.started()
        let outcome = await withTaskGroup(of: PlaybackOutcome?.self) { group in
            group.addTask {
                let session = LiveSession(
                    url: url, configuration: configuration, clock: ContinuousClock(), logger: sessionLogger)
                return await session.run { printer.print($0) }
            }
            if let duration {
                group.addTask {
                    try? await Task.sleep(for: .seconds(duration))
                    return nil
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .stopped
        }
        switch outcome {
        case .ended, .stopped: return
        case .failed: throw ExitCode(ExitStatus.playbackError)
        }
    }
}

/// `--mode` choices.
enum LatencyModeOption: String, CaseIterable, ExpressibleByArgument {
    case auto
    case speed
    case smooth

    var mode: LatencyMode {
        switch self {
        case .auto: .auto
        case .speed: .speed
        case .smooth: .smooth
        }
    }
}

/// Writes events as lines; one instance per run.
final class EventPrinter: Sendable {
    let json: Bool
    let showSecrets: Bool
    let url: String

    init(json: Bool, showSecrets: Bool, url: String) {
        self.json = json
        self.showSecrets = showSecrets
        self.url = url
    }

    func started() {
        guard !json else { return }
        Standard.error("liveplay: playing \(showSecrets ? url : Redaction.url(url))")
    }

    func print(_ event: PlayEvent) {
        let line: String
        if json {
            var object = JSONLine()
            object.add("time_ms", event.elapsedMilliseconds)
            object.add("code", event.code.rawValue)
            object.add("symbol", event.code.symbol)
            object.add("message", event.message)
            object.add("params", parameters: event.parameters)
            line = object.line
        } else {
            let seconds = String(format: "%7.3f", Double(event.elapsedMilliseconds) / 1000)
            let extras = event.parameters.keys.sorted().map { "\($0)=\(event.parameters[$0]!)" }.joined(separator: " ")
            line = "\(seconds)s \(event.code.rawValue) \(event.code.symbol) \(event.message)"
                + (extras.isEmpty ? "" : " [\(extras)]")
        }
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
