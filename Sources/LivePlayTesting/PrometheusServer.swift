import Foundation

/// Debian's Prometheus server on a free loopback port, scraping the given targets every `interval`, its data in a
/// temporary directory; PromQL through its HTTP API. Stopped by ``stop()`` or when released.
///
/// `@unchecked Sendable`: its one mutable flag is read and written under `lock`; the rest is immutable.
public final class PrometheusServer: @unchecked Sendable {
    public let port: UInt16
    public let directory: String
    private let process: Process
    private let lock = NSLock()
    private var stopped = false

    public static let path = "/usr/bin/prometheus"

    /// Why Prometheus cannot run here, or `nil` if it can.
    public static var unavailableReason: String? {
        FileManager.default.isExecutableFile(atPath: path) ? nil : "\(path) is not installed (apt-get install prometheus)"
    }

    /// - Parameter targets: `host:port` of each exporter, scraped at `/metrics` as job `liveplay`.
    public init(targets: [String], interval: Duration = .seconds(1)) throws {
        if let reason = Self.unavailableReason { throw LoopbackError(reason) }
        port = try LoopbackPort.free()
        directory = NSTemporaryDirectory() + "liveplay-prometheus-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        // Prometheus durations are whole units: milliseconds.
        let seconds = "\(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)ms"
        let configuration = """
            global:
              scrape_interval: \(seconds)
              evaluation_interval: \(seconds)
            scrape_configs:
              - job_name: liveplay
                static_configs:
                  - targets: [\(targets.map { "\"\($0)\"" }.joined(separator: ", "))]

            """
        try configuration.write(toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.path)
        process.arguments = [
            "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
            "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: directory + "/prometheus.log", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: directory + "/prometheus.log")
        try ChildProcess.run(process)
        let port = port
        let process = process
        guard LoopbackPort.wait(timeout: .seconds(20), until: { !process.isRunning || LoopbackPort.isAccepting(port) }),
            process.isRunning
        else {
            stop()
            let log = (try? String(contentsOfFile: directory + "/prometheus.log", encoding: .utf8)) ?? ""
            throw LoopbackError("prometheus did not start on port \(port): \(log.suffix(1000))")
        }
    }

    deinit {
        stop()
    }

    /// One sample of an instant vector: its labels and value.
    public struct Sample: Sendable, Hashable {
        public var labels: [String: String]
        public var value: Double
    }

    /// An instant query (`/api/v1/query`).
    public func query(_ promQL: String) throws -> [Sample] {
        let result = try request("query", ["query": promQL])
        return result.compactMap { item in
            guard let labels = item["metric"] as? [String: String], let pair = item["value"] as? [Any],
                let text = pair.last as? String, let value = Double(text)
            else { return nil }
            return Sample(labels: labels, value: value)
        }
    }

    /// A range query's values for each series of `promQL` over the last `seconds` (a range vector selector, e.g.
    /// `metric[20s]`), oldest first.
    public func series(_ promQL: String) throws -> [(labels: [String: String], values: [Double])] {
        let result = try request("query", ["query": promQL])
        return result.compactMap { item in
            guard let labels = item["metric"] as? [String: String], let values = item["values"] as? [[Any]] else { return nil }
            return (labels, values.compactMap { ($0.last as? String).flatMap(Double.init) })
        }
    }

    private func request(_ endpoint: String, _ parameters: [String: String]) throws -> [[String: Any]] {
        var components = URLComponents(string: "http://127.0.0.1:\(port)/api/v1/\(endpoint)")!
        components.queryItems = parameters.map { URLQueryItem(name: $0.key, value: $0.value) }
        let output = try ExternalTool.check("curl", ["-s", "--max-time", "10", components.url!.absoluteString])
        guard let json = try JSONSerialization.jsonObject(with: output.standardOutput) as? [String: Any],
            json["status"] as? String == "success", let data = json["data"] as? [String: Any],
            let result = data["result"] as? [[String: Any]]
        else { throw LoopbackError("prometheus answered: \(output.text.prefix(500))") }
        return result
    }

    public func stop() {
        let alreadyStopped = lock.withLock {
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return }
        ChildProcess.terminate(process, signal: SIGTERM)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
