import ArgumentParser
import Foundation
import LivePlayLab
import Logging

/// `liveplay-lab`: the stream lab on the command line.
@main
struct LabCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "liveplay-lab",
        abstract: "A live FLV server, a TCP impairment proxy and a load generator, on loopback only.",
        discussion: """
            Examples:
              liveplay-lab serve stream.flv --port 8080
              liveplay-lab proxy --listen 8081 --upstream 127.0.0.1:8080 --latency 200 --jitter 50 \\
                  --timeline 'at=5s stall=3s; at=10s reset; at=15s down=4s'
              liveplay-lab load http://127.0.0.1:8080/live.flv --clients 100 --duration 20
            """,
        subcommands: [ServeCommand.self, ProxyCommand.self, LoadCommand.self]
    )
}

/// Options every subcommand has.
struct CommonOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Log debug messages to stderr.")
    var verbose = false

    @Option(help: "Event loop threads (default: one per core).")
    var threads: Int = ProcessInfo.processInfo.activeProcessorCount

    func logger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = verbose ? .debug : .info
        return logger
    }
}

/// Prints a line to stdout at once (scripts wait for it).
func announce(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Runs until the process is interrupted.
func waitForever() async throws {
    while true {
        try await Task.sleep(for: .seconds(3600))
    }
}

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Loop an FLV file as a live HTTP-FLV stream.",
        discussion: """
            Any path ending in .flv is the live stream; /file.flv is the whole file once (Content-Length).
            Per-request options: ?gop=0 (no GOP cache), ?chunked=0 (close-delimited body),
            ?close_after=SECONDS (end the body), ?startPts=MS (LAS: start at the GOP of the keyframe at MS, or, negative,
            that far behind the live edge; up to 10 s back). Prints 'listening http://HOST:PORT/live.flv' when ready.
            Live streams carry an onLivePlayClock wall-clock tag every second, for end-to-end latency.
            Its fields are in docs/wall-clock-tags.md. With --rendition NAME=FILE (repeatable) it serves
            renditions of one programme instead, each at /NAME.flv, paced by one clock from one instant (files made
            with the same GOP carry their keyframes at the same timestamps), as a LAS origin does; FILE then names
            the first rendition, /live.flv.
            """
    )

    @Argument(help: "The FLV file to loop.")
    var file: String

    @Option(name: .customLong("rendition"), help: "Another rendition, NAME=FILE, served at /NAME.flv (repeatable).")
    var renditions: [String] = []

    @Option(help: "Loopback address to bind: 127.0.0.1, ::1 or localhost.")
    var host = "127.0.0.1"

    @Option(help: "Port to bind (0: a free port).")
    var port = 8080

    @Flag(help: "Start every client at the live edge instead of the last keyframe.")
    var noGopCache = false

    @Flag(help: "Ignore ?startPts= as a server that does not speak LAS does.")
    var noStartPts = false

    @Flag(help: "Play the file once, then end every body.")
    var noLoop = false

    @Option(help: "Unsent bytes per client before it counts as slow, in MiB.")
    var maxPendingMib = 8

    @Option(help: "What to do with a slow client: disconnect or skip-to-keyframe.", transform: choice)
    var slowClient: LiveFLVServer.SlowClientPolicy = .disconnect

    @Flag(help: "Send no onLivePlayClock wall-clock tags.")
    var noWallClock = false

    @Option(help: "Seconds between onLivePlayClock wall-clock tags (default: 1).")
    var wallClockInterval: Double?

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        guard maxPendingMib > 0 else { throw ValidationError("--max-pending-mib must be positive") }
        if let wallClockInterval {
            guard !noWallClock else { throw ValidationError("--wall-clock-interval and --no-wall-clock conflict") }
            guard wallClockInterval >= 0.001, wallClockInterval <= 3600 else {
                throw ValidationError("--wall-clock-interval must be 0.001...3600 seconds")
            }
        }
        guard common.threads > 0 else { throw ValidationError("--threads must be positive") }
        for rendition in renditions where !rendition.contains("=") || rendition.hasPrefix("=") || rendition.hasSuffix("=") {
            throw ValidationError("--rendition \(rendition): NAME=FILE")
        }
    }

    func run() async throws {
        var configuration = LiveFLVServer.Configuration(
            host: host, port: port, gopCache: !noGopCache, loops: !noLoop, maximumPendingBytes: maxPendingMib << 20,
            slowClientPolicy: slowClient, threads: common.threads,
            wallClockInterval: noWallClock ? nil : .milliseconds(Int64(((wallClockInterval ?? 1) * 1000).rounded())))
        if noStartPts { configuration.startPtsWindow = nil }
        var programs = [(name: renditions.isEmpty ? "" : "live", program: try LiveFLVProgram(contentsOfFile: file))]
        for rendition in renditions {
            let parts = rendition.split(separator: "=", maxSplits: 1)
            programs.append((String(parts[0]), try LiveFLVProgram(contentsOfFile: String(parts[1]))))
        }
        let server = LiveFLVServer(
            renditions: programs, configuration: configuration, logger: common.logger("liveplay.lab.serve"))
        let bound = try await server.start()
        let shown = host.contains(":") ? "[\(host)]" : host
        announce("listening http://\(shown):\(bound)/live.flv")
        try await waitForever()
    }
}

/// Parses one of an enum's raw values (the lab's option enums are not `ExpressibleByArgument`, to keep
/// ArgumentParser out of the library).
func choice<Value: RawRepresentable & CaseIterable>(_ text: String) throws -> Value where Value.RawValue == String {
    guard let value = Value(rawValue: text.lowercased()) else {
        throw ValidationError("'\(text)' is not one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    return value
}

struct ProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Forward a TCP stream (HTTP-FLV, RTMP) to an upstream, impaired.",
        discussion: """
            Toxics from the flags apply from the start to the --direction given (default downstream, i.e.
            upstream to player). A timeline switches things on and off over time; entries are separated by ';':
              at=5s stall=3s          no bytes for 3 s, connection stays open
              at=10s reset            TCP reset of both sides
              at=15s down=4s          cut all connections and refuse new ones for 4 s
              at=20s latency=200 jitter=50   (milliseconds)
              at=25s bandwidth=1500   (kbit/s)
              at=30s slice=100 variation=50 slice_delay=5
              at=40s clear            (or clear=latency); add dir=up|down|both to an entry
            """
    )

    @Option(help: "Port to listen on (0: a free port).")
    var listen = 0

    @Option(help: "Loopback address to listen on.")
    var listenHost = "127.0.0.1"

    @Option(help: "Upstream HOST:PORT (loopback only).")
    var upstream: String

    @Option(help: "Added latency in milliseconds.")
    var latency: Int?

    @Option(help: "Latency jitter (±) in milliseconds.")
    var jitter: Int?

    @Option(help: "Bandwidth cap in kbit/s.")
    var bandwidth: Int?

    @Option(help: "Split writes into segments of about this many bytes.")
    var slice: Int?

    @Option(help: "Segment size variation (±) in bytes.")
    var sliceVariation = 0

    @Option(help: "Delay between segments in milliseconds.")
    var sliceDelay = 0

    @Option(help: "Direction the flag toxics apply to: downstream, upstream or both.", transform: choice)
    var direction: ProxyDirection = .downstream

    @Option(help: "Timeline of actions, e.g. 'at=5s stall=3s; at=10s reset; at=15s down=4s'.")
    var timeline: String?

    @Option(
        help: "What timeline times count from: proxy (its start) or connection (each connection's start).",
        transform: choice)
    var timelineOrigin: ImpairmentTimeline.Origin = .proxyStart

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard (0...65535).contains(listen) else { throw ValidationError("--listen must be 0...65535") }
        if jitter != nil, latency == nil { throw ValidationError("--jitter needs --latency") }
        if let latency, latency < 0 { throw ValidationError("--latency must not be negative") }
        if let bandwidth, bandwidth <= 0 { throw ValidationError("--bandwidth must be positive") }
        if let slice, slice <= 0 { throw ValidationError("--slice must be positive") }
        if slice == nil, sliceVariation != 0 || sliceDelay != 0 {
            throw ValidationError("--slice-variation and --slice-delay need --slice")
        }
        if let timeline {
            do {
                _ = try ImpairmentTimeline.parse(timeline)
            } catch {
                throw ValidationError("--timeline: \(error)")
            }
        }
        do {
            _ = try Loopback.endpoint(upstream)
            _ = try Loopback.address(listenHost)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func run() async throws {
        let (upstreamHost, upstreamPort) = try Loopback.endpoint(upstream)
        var list: [Toxic] = []
        if let latency { list.append(.latency(.milliseconds(latency), jitter: .milliseconds(jitter ?? 0))) }
        if let bandwidth { list.append(.bandwidth(bytesPerSecond: max(1, bandwidth * 1000 / 8))) }
        if let slice {
            list.append(.slicer(averageSize: slice, sizeVariation: sliceVariation, delay: .milliseconds(sliceDelay)))
        }
        let toxics = ToxicSet(list)
        let configuration = ImpairmentProxy.Configuration(
            listenHost: listenHost, listenPort: listen, upstreamHost: upstreamHost, upstreamPort: upstreamPort,
            downstream: direction == .upstream ? ToxicSet() : toxics,
            upstream: direction == .downstream ? ToxicSet() : toxics,
            timeline: try timeline.map { try ImpairmentTimeline.parse($0, origin: timelineOrigin) }
                ?? ImpairmentTimeline(origin: timelineOrigin),
            threads: common.threads)
        let proxy = ImpairmentProxy(configuration: configuration, logger: common.logger("liveplay.lab.proxy"))
        let bound = try await proxy.start()
        announce("listening \(listenHost):\(bound) -> \(upstreamHost):\(upstreamPort)")
        try await waitForever()
    }
}

struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Read a live HTTP-FLV stream with many concurrent clients and report throughput.",
        discussion: """
            A client keeps up when, after the warm-up, media time advanced as much as wall time minus the
            lag tolerance. Prints a summary (or one JSON object with --json) and exits 0.
            """
    )

    @Argument(help: "The stream URL, e.g. http://127.0.0.1:8080/live.flv (loopback only).")
    var url: String

    @Option(help: "Concurrent clients.")
    var clients = 100

    @Option(help: "Seconds to read.")
    var duration: Double = 20

    @Option(help: "Seconds before the keep-up window starts.")
    var warmup: Double = 3

    @Option(help: "Media-time lag, in milliseconds, that still counts as keeping up.")
    var lagTolerance = 500

    @Flag(help: "Print one JSON object instead of the summary.")
    var json = false

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard clients > 0 else { throw ValidationError("--clients must be positive") }
        guard duration > warmup, warmup >= 0 else { throw ValidationError("--duration must exceed --warmup") }
    }

    func run() async throws {
        let generator = LoadGenerator(
            configuration: LoadGenerator.Configuration(
                url: url, clients: clients, duration: .milliseconds(Int64(duration * 1000)),
                warmup: .milliseconds(Int64(warmup * 1000)), lagTolerance: .milliseconds(lagTolerance),
                threads: common.threads),
            logger: common.logger("liveplay.lab.load"))
        let report = try await generator.run()
        announce(json ? report.json : report.summary)
    }
}
