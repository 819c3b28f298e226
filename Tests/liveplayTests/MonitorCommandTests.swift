import Foundation
import LivePlayLab
import LivePlayTesting
import Logging
import Testing

@testable import liveplay

/// `liveplay monitor` as an operator runs it: two replicas sharding one list of lab and nginx-rtmp streams, scraped by
/// a real Prometheus server, queried with PromQL; a SIGHUP with an edited list; the deploy files checked offline.
@Suite(.serialized) struct MonitorCommandTests {
    /// Prometheus, nginx-rtmp and promtool, or a reason to skip (a failure under CI).
    static func requirements() -> String? {
        let reason = PrometheusServer.unavailableReason ?? NginxRTMPServer.unavailableReason
            ?? (ExternalTool.find("promtool") == nil ? "promtool is not installed" : nil)
        guard let reason else { return nil }
        if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("required under CI: \(reason)") }
        return reason
    }

    /// One `liveplay monitor` process, its stdout collected.
    final class Replica: @unchecked Sendable {
        let process = Process()
        let metricsPort: UInt16
        private let output = Locked<String>("")

        init(list: String, shard: String) throws {
            metricsPort = try LoopbackPort.free()
            process.executableURL = URL(fileURLWithPath: Binary.path)
            process.arguments = ["monitor", "--streams", list, "--shard", shard, "--metrics-listen", "127.0.0.1:\(metricsPort)"]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            let output = output
            pipe.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                if !data.isEmpty { output.set(output.get() + String(decoding: data, as: UTF8.self)) }
            }
            try process.run()
        }

        var lines: [[String: Any]] {
            output.get().split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }

        func metrics() throws -> String {
            try ExternalTool.check("curl", ["-s", "--max-time", "10", "http://127.0.0.1:\(metricsPort)/metrics"]).text
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// The newest latency (s) a replica's JSON log gave for a stream.
    static func loggedLatency(_ lines: [[String: Any]], _ id: String) -> Double? {
        lines.last { $0["kind"] as? String == "status" && $0["id"] as? String == id }
            .flatMap { (($0["status"] as? [String: Any])?["latency_ms"] as? Double).map { $0 / 1000 } }
    }

    @Test func twoReplicasShareAListThatPrometheusScrapesAndASighupReloadsIt() async throws {
        if let reason = Self.requirements() {
            print("skipping: \(reason)")
            return
        }
        var quiet = Logger(label: "lab")
        quiet.logLevel = .critical
        let fixture = try Fixture.longH264AAC.path()
        var labs: [LiveFLVServer] = []
        var urls: [String] = []
        for _ in 0..<3 {
            let lab = try LiveFLVServer(path: fixture, configuration: .init(port: 0, threads: 1), logger: quiet)
            urls.append("http://127.0.0.1:\(try await lab.start())/live.flv?token=s3cret")
            labs.append(lab)
        }
        let nginx = try NginxRTMPServer()
        let publisher = try FFmpegPublisher(file: fixture, url: nginx.url(stream: "cam"))
        defer {
            publisher.stop()
            nginx.stop()
        }
        let dead = try LoopbackPort.free()
        let directory = NSTemporaryDirectory() + "liveplay-monitor-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let list = directory + "/streams.txt"
        try """
            news  \(urls[0])
            sport  \(urls[1])
            cam  \(nginx.url(stream: "cam"))
            dead  http://127.0.0.1:\(dead)/live.flv

            """.write(toFile: list, atomically: true, encoding: .utf8)
        // By the documented hash (docs/monitoring.md), of 2 shards: news, sport and cam are 0's, dead and music 1's.
        let replicas = try ["0/2", "1/2"].map { try Replica(list: list, shard: $0) }
        defer { for replica in replicas { replica.stop() } }
        let prometheus = try PrometheusServer(targets: replicas.map { "127.0.0.1:\($0.metricsPort)" })
        defer { prometheus.stop() }
        // Until Prometheus has every stream, the three live ones up, both latencies, and 4 scrapes of each
        // byte counter for the "only grow" check below to compare. A Prometheus still starting answers with no
        // result yet (not JSON): that is "not yet" too.
        let scraped = await eventually(within: .seconds(30)) {
            let up = (try? prometheus.query("liveplay_up")) ?? []
            let playing = Set(up.filter { $0.value == 1 }.compactMap { $0.labels["stream"] })
            guard Set(up.compactMap { $0.labels["stream"] }) == ["news", "sport", "cam", "dead"],
                playing.isSuperset(of: ["news", "sport", "cam"]),
                (try? prometheus.query("liveplay_latency_seconds{stream=~\"news|cam\"}"))?.count == 2
            else { return false }
            let counters = (try? prometheus.series("liveplay_received_bytes_total[6s]")) ?? []
            return counters.count >= 3 && counters.allSatisfy { $0.values.count >= 4 }
        }
        #expect(scraped, "Prometheus has scraped both replicas")

        // Every stream exactly once across the two replicas, with the right `up`.
        let up = try prometheus.query("liveplay_up")
        let byStream = Dictionary(grouping: up, by: { $0.labels["stream"] ?? "" })
        #expect(Set(byStream.keys) == ["news", "sport", "cam", "dead"], "\(up)")
        #expect(byStream.values.allSatisfy { $0.count == 1 }, "no stream on both replicas: \(up)")
        #expect(Set(up.map { $0.labels["instance"] ?? "" }).count == 2, "both replicas have streams")
        for id in ["news", "sport", "cam"] { #expect(byStream[id]?.first?.value == 1, "\(id) plays: \(up)") }
        #expect(byStream["dead"]?.first?.value == 0)
        // Latency as the JSON log says it (the same player's figure, a scrape and a second apart at most).
        for sample in try prometheus.query("liveplay_latency_seconds{stream=~\"news|cam\"}") {
            let id = sample.labels["stream"] ?? ""
            let logged = replicas.compactMap { Self.loggedLatency($0.lines, id) }.first
            #expect(logged.map { abs($0 - sample.value) < 1.0 } == true, "\(id): \(sample.value) s vs the log's \(logged ?? -1)")
        }
        // Counters only grow.
        for series in try prometheus.series("liveplay_received_bytes_total[6s]") {
            #expect(zip(series.values, series.values.dropFirst()).allSatisfy { $0 <= $1 }, "\(series)")
        }
        #expect(!(try replicas.map { try $0.metrics() }.joined()).contains("s3cret"), "no token on a metrics page")

        // sport's server stops: Prometheus sees it go down (TXLivePlayer's 3 retries at 3 s, then down).
        await labs[1].stop()
        let down = LoopbackPort.wait(timeout: .seconds(25)) {
            (try? prometheus.query("liveplay_up{stream=\"sport\"}").first?.value) == 0
        }
        #expect(down, "sport shows down")

        // SIGHUP with an edited list: dead removed, sport changed, music added; news and cam untouched.
        let owner = try #require(replicas.first { (try? $0.metrics().contains("stream=\"news\"")) == true })
        let before = try Self.counter(owner.metrics(), "liveplay_received_bytes_total{stream=\"news\"}")
        try """
            news  \(urls[0])
            sport  \(urls[1]) --mode speed
            music  \(urls[2])
            cam  \(nginx.url(stream: "cam"))

            """.write(toFile: list, atomically: true, encoding: .utf8)
        for replica in replicas { kill(replica.process.processIdentifier, SIGHUP) }
        func reloadLines() -> [[String: Any]] {
            replicas.flatMap { $0.lines.filter { $0["kind"] as? String == "reload" } }
        }
        #expect(await eventually { reloadLines().count >= 2 }, "both replicas reloaded")
        let reloads = reloadLines()
        #expect(reloads.count == 2, "\(reloads)")
        func ids(_ key: String) -> Set<String> {
            Set(reloads.flatMap { ($0[key] as? String ?? "").split(separator: ",").map(String.init) })
        }
        #expect(ids("started") == ["music"] && ids("stopped") == ["dead"] && ids("restarted") == ["sport"], "\(reloads)")
        let after = try Self.counter(owner.metrics(), "liveplay_received_bytes_total{stream=\"news\"}")
        #expect(after >= before, "news kept its counter: \(before) → \(after)")
        let wentOn = try await eventually {
            try Self.counter(owner.metrics(), "liveplay_received_bytes_total{stream=\"news\"}") > after
        }
        #expect(wentOn, "news went on after the reload")
        let deadGone = try await eventually {
            !(try replicas.map { try $0.metrics() }.joined()).contains("stream=\"dead\"")
        }
        #expect(deadGone, "dead's series leave the pages")
        let notes = replicas.flatMap { $0.lines.filter { $0["kind"] as? String == "monitor" } }
        let startedAgain = notes.filter { $0["event"] as? String == "started" }.compactMap { $0["id"] as? String }
        #expect(startedAgain.filter { $0 == "news" }.count == 1, "news was never restarted: \(startedAgain)")
        for lab in labs { await lab.stop() }
    }

    static func counter(_ page: String, _ series: String) throws -> Double {
        try #require(page.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last!) })
    }

    @Test func theDeployFilesPassTheirOfflineChecks() throws {
        if let reason = Self.requirements() {
            print("skipping: \(reason)")
            return
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let output = try ExternalTool.run("bash", ["\(root)/deploy/check"])
        #expect(output.status == 0, "\(output.text)\(output.standardError)")
        print(output.text)
    }

    /// `liveplay ARGUMENTS`, sent SIGTERM after `seconds` if it still runs (a monitor runs until stopped).
    static func run(seconds: Int, _ arguments: [String]) throws -> ExternalTool.Output {
        try ExternalTool.run("timeout", ["--preserve-status", "-s", "TERM", String(seconds), Binary.path] + arguments)
    }

    /// A --metrics-listen address that another process holds ends the run with its own code (71, not 1) and a
    /// sentence naming the address, before any stream starts.
    @Test func aMetricsAddressInUseExitsWithItsOwnCodeBeforeAnyStreamStarts() throws {
        let taken = try LoopbackPort.listen()
        defer { close(taken.descriptor) }
        let url = "http://127.0.0.1:\(try LoopbackPort.free())/a.flv"
        let output = try Self.run(seconds: 20, ["monitor", url, "--metrics-listen", "127.0.0.1:\(taken.port)"])
        #expect(output.status == ExitStatus.cannotListen, "\(output.standardError)")
        #expect(output.standardError.contains("127.0.0.1:\(taken.port)"), "\(output.standardError)")
        #expect(output.standardError.contains("already in use"), "\(output.standardError)")
        #expect(output.text.isEmpty, "no stream started: \(output.text)")
        let help = MonitorCommand.helpMessage(for: MonitorCommand.self, columns: 1000)
        #expect(help.contains("71 the --metrics-listen address"), "monitor's help documents 71")
    }

    /// A list line that `play` would refuse stops the monitor at load, with its line and `play`'s reason.
    @Test func aListLineThatPlayWouldRefuseIsToldWithItsReason() throws {
        let list = NSTemporaryDirectory() + "liveplay-refused-\(UUID().uuidString.prefix(8)).txt"
        try "ok http://127.0.0.1:1/a.flv\ncam http://127.0.0.1:70000/live.flv\n"
            .write(toFile: list, atomically: true, encoding: .utf8)
        let port = try Binary.run(["monitor", "--streams", list])
        #expect(port.status == ExitStatus.usage, "\(port.standardError)")
        let reason = "line 2: cam: the port '70000' in the URL is not a number from 1 to 65535"
        #expect(port.standardError.contains(reason), "\(port.standardError)")
        let missing = try Self.run(seconds: 20, ["monitor", "/nonexistent/old.flv"])
        #expect(missing.status == ExitStatus.usage, "\(missing.standardError)")
        #expect(missing.standardError.contains("no such file: /nonexistent/old.flv"), "\(missing.standardError)")
    }

    /// The monitor's own news (where the metrics are, how many streams this shard has) is in the log, by level;
    /// stderr is for errors, and a normal run leaves it empty.
    @Test func theMonitorsOwnLinesAreInTheLogAndStandardErrorStaysQuiet() throws {
        let url = "http://127.0.0.1:\(try LoopbackPort.free())/a.flv"
        let port = try LoopbackPort.free()
        let arguments = ["monitor", "--no-statuses", url, "--metrics-listen", "127.0.0.1:\(port)"]
        let output = try Self.run(seconds: 2, arguments)
        #expect(output.standardError.isEmpty, "\(output.standardError)")
        let lines = try EdgeTests.lines(output.text).filter { $0["kind"] as? String == "monitor" }
        let loaded = try #require(lines.first { $0["event"] as? String == "loaded" }, "\(output.text)")
        #expect(loaded["streams"] as? Int == 1 && loaded["shard"] as? String == "0/1")
        let listening = lines.first { $0["event"] as? String == "listening" }
        #expect(listening?["url"] as? String == "http://127.0.0.1:\(port)/metrics")
        let quiet = try Self.run(seconds: 2, arguments + ["--log-level", "warning"])
        #expect(quiet.standardError.isEmpty, "\(quiet.standardError)")
        #expect(!quiet.text.contains("\"listening\"") && !quiet.text.contains("\"loaded\""), "left out below info")
        let help = try Binary.run(["help", "monitor"]).text
        #expect(help.contains("Examples:") && help.contains("liveplay monitor --streams"), "\(help)")
        #expect(!help.contains("(default: 2)") && !help.contains("one per core). (default"), "no doubled default")
    }

    @Test func optionsAreValidated() throws {
        #expect(try Binary.run(["monitor"]).status == ExitStatus.usage, "no streams")
        #expect(try Binary.run(["monitor", "http://127.0.0.1:1/a.flv", "--shard", "2/2"]).status == ExitStatus.usage)
        #expect(try Binary.run(["monitor", "http://127.0.0.1:1/a.flv", "--metrics-listen", "nowhere"]).status == ExitStatus.usage)
        let list = NSTemporaryDirectory() + "liveplay-bad-list-\(UUID().uuidString.prefix(8)).txt"
        try "a http://127.0.0.1:1/a.flv --frobnicate\n".write(toFile: list, atomically: true, encoding: .utf8)
        let bad = try Binary.run(["monitor", "--streams", list])
        #expect(bad.status == ExitStatus.usage && bad.standardError.contains("--frobnicate"), "\(bad.standardError)")
        let help = MonitorCommand.helpMessage(for: MonitorCommand.self)
        #expect(try Binary.run(["monitor", "http://127.0.0.1:1/a.flv", "--read-interval", "5000"]).status == ExitStatus.usage)
        #expect(try Binary.run(["monitor", "http://127.0.0.1:1/a.flv", "--play-threads", "-1"]).status == ExitStatus.usage)
        #expect(try Binary.run(["monitor", "http://127.0.0.1:1/a.flv", "--start-rate", "-3"]).status == ExitStatus.usage)
        for option in [
            "--streams", "--shard", "--metrics-listen", "--decode", "--no-statuses", "--play-threads", "--read-interval",
            "--start-rate",
        ] {
            #expect(help.contains(option), "monitor's help lacks \(option)")
        }
    }
}
