import Foundation
public import LivePlay

/// A real run kept in the repository (`Tests/traces`): what arrived, as an arrival trace (docs/arrival-trace.md),
/// and what the player reported each second, both gzipped JSON lines. Small: timestamps and sizes, no media.
/// Made by `swift run liveplay-simulate record-traces Tests/traces` (the demo stream, speed mode, through the
/// impairment proxy); the simulator's table in docs/latency-modes.md is replayed from them.
public struct TraceFixture: Sendable {
    /// The mode the run was recorded in.
    public static let mode = LatencyMode.speed

    public var scenario: NetworkScenario
    public var arrivals: [ArrivalRead]
    public var samples: [RunSample]

    public init(scenario: NetworkScenario, arrivals: [ArrivalRead], samples: [RunSample]) {
        self.scenario = scenario
        self.arrivals = arrivals
        self.samples = samples
    }

    /// The repository's `Tests/traces`.
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tests/traces").standardized.path

    public static func load(_ scenario: NetworkScenario, from directory: String = directory) throws -> TraceFixture {
        let base = "\(directory)/\(scenario.slug)"
        let decoder = JSONDecoder()
        func lines<T: Decodable>(_ path: String, as type: T.Type) throws -> [T] {
            try gunzip(path).split(separator: 0x0A).map { try decoder.decode(T.self, from: Data($0)) }
        }
        return TraceFixture(
            scenario: scenario, arrivals: try lines("\(base).arrivals.jsonl.gz", as: ArrivalRead.self),
            samples: try lines("\(base).samples.jsonl.gz", as: RunSample.self))
    }

    public func save(in directory: String) throws {
        let base = "\(directory)/\(scenario.slug)"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func write<T: Encodable>(_ items: [T], to path: String) throws {
            var text = Data()
            for item in items { text += try encoder.encode(item) + [0x0A] }
            try Self.gzip(text, to: path)
        }
        try write(arrivals, to: "\(base).arrivals.jsonl.gz")
        try write(samples, to: "\(base).samples.jsonl.gz")
    }

    private static func gzip(_ data: Data, to path: String) throws {
        let plain = path.replacingOccurrences(of: ".gz", with: "")
        try data.write(to: URL(fileURLWithPath: plain))
        try run(["gzip", "-9", "-n", "-f", plain])
    }

    private static func gunzip(_ path: String) throws -> Data {
        try run(["gzip", "-d", "-c", path])
    }

    @discardableResult
    private static func run(_ arguments: [String]) throws -> Data {
        guard let tool = ExternalTool.find(arguments[0]) else { throw LoopbackError("\(arguments[0]) not found on PATH") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = Array(arguments.dropFirst())
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw LoopbackError("\(arguments.joined(separator: " ")) failed") }
        return data
    }
}
