import ArgumentParser
import Foundation
import LivePlay
import Logging

/// `liveplay URL`: play a live stream; print its events and once-per-second status, for a person or (JSON
/// lines) for monitoring; optionally write the decoded pictures and sound.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play an HTTP(S)-FLV or RTMP URL and log its events and status.",
        discussion: """
            Without a URL (or with `demo`), plays the built-in demo stream from a stream-lab server started \
            in-process on a free loopback port. The log is JSON lines (schema v1, docs/event-log.md) when stdout \
            is not a terminal or with --json, and readable lines with a live status line on a terminal or with \
            --human; every line is flushed as it happens. When --video-out or --audio-out is `-`, stdout carries \
            the media and the log goes to stderr. URLs are printed with query values and passwords hidden unless \
            --show-secrets is given.

            Exit codes: 0 the stream ended, --duration or --frames was reached, or SIGINT/SIGTERM stopped it \
            (the log is flushed and the session summary written); 64 bad usage; 65 the stream is not playable \
            (not FLV, the decoder cannot open); 69 the server is unreachable, refused the stream, or the \
            connection was lost after every retry; 74 an output could not be written.
            """
    )

    @Argument(help: "http(s)://…/stream.flv or rtmp://host[:port]/app/stream; none or `demo` for the demo stream")
    var url: String?

    @Flag(help: "Log JSON lines (the default when stdout is not a terminal).")
    var json = false

    @Flag(help: "Log readable lines and a live status line (the default on a terminal).")
    var human = false

    @Flag(help: "Also log one JSON line per presented picture: stream time, wall-clock time shown, rate.")
    var traceFrames = false

    @Option(help: "Stop after this many seconds of playing.")
    var duration: Double?

    @Option(help: "Stop after this many pictures have been shown (1: right after the first).")
    var frames: Int?

    @Flag(help: "Probe: transport, demux and timing figures without decoding (cheap monitoring).")
    var noDecode = false

    @Flag(help: "Report in-stream messages: script data and user-data SEI (enableMessage, event 2012).")
    var messages = false

    @Flag(help: "Report onMetaData (enableMetaData, event 2028).")
    var metadata = false

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

    @OptionGroup(title: "Outputs")
    var outputs: OutputOptions

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
        if let frames, frames <= 0 { throw ValidationError("--frames must be positive") }
        if json && human { throw ValidationError("--json and --human exclude each other") }
        if noDecode && (frames != nil || outputs.decodes || traceFrames) {
            throw ValidationError("--no-decode shows no pictures: it excludes --frames, --trace-frames and outputs")
        }
        for value in [cacheTime, minCache, maxCache].compactMap({ $0 }) where value <= 0 || value > 60 {
            throw ValidationError("cache times must be in (0, 60] seconds, got \(value)")
        }
        if let minCache, let maxCache, minCache > maxCache {
            throw ValidationError("--min-cache must not exceed --max-cache")
        }
        for header in headers where HTTPHeaderField(parsing: header) == nil {
            throw ValidationError("--header must look like 'Name: value', got '\(header)'")
        }
        try outputs.validate()
    }

    func run() async throws {
        // A reader that goes away (`| head`, a closed ffplay) is a write error to handle, not a fatal signal.
        signal(SIGPIPE, SIG_IGN)
        let logToStandardError = outputs.usesStandardOutput
        let terminal = isatty(logToStandardError ? STDERR_FILENO : STDOUT_FILENO) == 1
        let style: EventLog.Style = json || (!human && !terminal) ? .json : .human(statusLine: terminal)
        let log = EventLog(style: style, output: logToStandardError ? .standardError : .standardOutput)

        var demo: DemoStream?
        let target: String
        if let url, url != "demo" {
            target = url
        } else {
            do {
                let stream = try await DemoStream.start()
                demo = stream
                target = stream.url
            } catch {
                Standard.error("liveplay: cannot start the demo stream: \(error)")
                throw ExitCode(ExitStatus.ioError)
            }
            log.note("liveplay: the built-in demo stream, served in-process at \(target)")
        }
        log.note("liveplay: playing \(showSecrets ? target : Redaction.url(target))")

        let stop = StopSignal()
        let sinks: Outputs
        do {
            sinks = try outputs.make()
        } catch {
            Standard.error("liveplay: \(error.message)")
            throw ExitCode(ExitStatus.ioError)
        }
        let presented = PresentedFrames(limit: frames, log: traceFrames ? log : nil, stop: stop)
        let player = LivePlayer(
            configuration: makeConfiguration(), videoSink: VideoFanOut([presented] + sinks.video),
            audioSink: sinks.audio, logger: Self.logger)
        player.listener = log
        let signals = SignalWatch([SIGINT, SIGTERM]) { stop.fire(.interrupted) }
        let duration = duration
        let outcome = await withTaskGroup(of: StopReason?.self) { group in
            group.addTask { .played(await player.run(url: target)) }
            group.addTask { await stop.reason() }
            if let duration {
                group.addTask {
                    try? await Task.sleep(for: .seconds(duration))
                    return .duration
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            // The player's task finishes its summary before the group returns.
            var reason = first
            while let next = await group.next() {
                if case .played = next, reason == nil { reason = next }
            }
            return reason ?? .interrupted
        }
        signals.cancel()
        let outputFailure = sinks.finish()
        log.close()
        await demo?.stop()
        if let outputFailure {
            Standard.error("liveplay: \(outputFailure.message)")
            throw ExitCode(ExitStatus.ioError)
        }
        if let status = outcome.exitStatus, status != ExitStatus.success { throw ExitCode(status) }
    }

    private func makeConfiguration() -> LivePlayConfiguration {
        var transport = TransportOptions(
            connectTimeout: .seconds(connectTimeout), noDataTimeout: .seconds(readTimeout),
            headers: headers.compactMap(HTTPHeaderField.init(parsing:)), allowsInsecureTLS: insecure)
        transport.handshakeTimeout = max(transport.handshakeTimeout, transport.connectTimeout)
        var latency = LatencyParameters.preset(mode.mode)
        if let cacheTime { latency.cacheTime = .seconds(cacheTime) }
        if let minCache { latency.minAutoAdjustCacheTime = .seconds(minCache) }
        if let maxCache { latency.maxAutoAdjustCacheTime = .seconds(maxCache) }
        latency.maxAutoAdjustCacheTime = max(latency.maxAutoAdjustCacheTime, latency.minAutoAdjustCacheTime)
        return LivePlayConfiguration(
            connectRetryCount: retries, connectRetryInterval: .seconds(retryInterval), enableMessage: messages,
            enableMetaData: metadata, decodes: !noDecode,
            transport: transport, latency: latency)
    }

    private static var logger: Logger {
        var logger = Logger(label: "liveplay")
        logger.logLevel = .error
        return logger
    }
}

/// Why `liveplay URL` stopped.
enum StopReason: Sendable {
    case played(PlaybackOutcome)
    case duration
    case frames
    case interrupted

    /// The documented exit status; `nil` means success.
    var exitStatus: Int32? {
        guard case .played(.failed(let code)) = self else { return nil }
        switch code {
        case .unplayable, .hevcDecodeFailed: return ExitStatus.dataError
        default: return ExitStatus.unavailable
        }
    }
}

/// The first reason to stop, from whoever sees it (a signal, the frame count).
final class StopSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var fired: StopReason?
    private var waiter: CheckedContinuation<StopReason?, Never>?

    func fire(_ reason: StopReason) {
        let waiter: CheckedContinuation<StopReason?, Never>? = lock.withLock {
            guard fired == nil else { return nil }
            fired = reason
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: reason)
    }

    /// Waits for the reason; `nil` if the task is cancelled first.
    func reason() async -> StopReason? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: (Bool, StopReason?) = lock.withLock {
                    if let fired { return (true, fired) }
                    if Task.isCancelled { return (true, nil) }
                    waiter = continuation
                    return (false, nil)
                }
                if ready.0 { continuation.resume(returning: ready.1) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<StopReason?, Never>? = lock.withLock {
                defer { self.waiter = nil }
                return self.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}

/// SIGINT / SIGTERM turned into a clean stop.
final class SignalWatch {
    private let sources: [any DispatchSourceSignal]

    init(_ signals: [Int32], handler: @escaping @Sendable () -> Void) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}

/// Counts presented pictures for `--frames`, and traces them for `--trace-frames`.
final class PresentedFrames: VideoSink, @unchecked Sendable {
    private let limit: Int?
    private let log: EventLog?
    private let stop: StopSignal
    private var count = 0

    init(limit: Int?, log: EventLog?, stop: StopSignal) {
        self.limit = limit
        self.log = log
        self.stop = stop
    }

    func present(_ frame: VideoFrame, timing: FrameTiming) {
        log?.frame(timing, shownAt: Date())
        count += 1
        if let limit, count == limit { stop.fire(.frames) }
    }
}

/// Hands each picture to several sinks, in order.
final class VideoFanOut: VideoSink {
    private let sinks: [any VideoSink]

    init(_ sinks: [any VideoSink]) {
        self.sinks = sinks
    }

    func present(_ frame: VideoFrame, timing: FrameTiming) {
        for sink in sinks { sink.present(frame, timing: timing) }
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
