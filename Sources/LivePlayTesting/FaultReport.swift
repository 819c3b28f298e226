import Foundation
public import LivePlay

/// One line of figures from the fault matrix (`Tests/LivePlayTests/FaultMatrixTests.swift`), appended to a
/// JSON-lines report that `Tests/fault-table` prints as a table. A line (wrapped here) reads:
///
/// ```json
/// {"fault":"stall","transport":"http-flv","pass":true,"events":"2001@5 2004@40 2104@1537",
///  "detection_ms":506,"peak_rss_mib":61.2}
/// ```
public struct FaultReport: Sendable {
    public var fault: String
    /// `http-flv` or `rtmp`.
    public var transport: String
    /// Whether every check of the case held.
    public var pass: Bool
    /// `code@ms` (ms since the session started) for every event but the once-a-second progress (2005) and
    /// the session summary (9006).
    public var events: String
    /// From the moment the fault was injected to the first event that reported it; `nil` when the fault
    /// is not one to be reported (the player is meant to ride it out).
    public var detectionMilliseconds: Int64?
    /// Peak resident memory of the test process during the case.
    public var peakRSSMiB: Double
    public var note: String?

    public init(
        fault: String, transport: String, pass: Bool, events: [PlayEvent], detectionMilliseconds: Int64?,
        peakRSSMiB: Double, note: String? = nil
    ) {
        self.fault = fault
        self.transport = transport
        self.pass = pass
        self.events = Self.summary(events)
        self.detectionMilliseconds = detectionMilliseconds
        self.peakRSSMiB = peakRSSMiB
        self.note = note
    }

    /// `2001@3 2004@41 3004@2120 …`: progress and the summary left out.
    public static func summary(_ events: [PlayEvent]) -> String {
        events.filter { $0.code != .playProgress && $0.code != .sessionSummary }
            .map { "\($0.code.rawValue)@\($0.elapsedMilliseconds)" }.joined(separator: " ")
    }

    /// The report's path: `LIVEPLAY_FAULT_REPORT` if set, else `.build/fault-matrix.jsonl` in the package.
    public static func path(packageRoot: String) -> String {
        if let path = ProcessInfo.processInfo.environment["LIVEPLAY_FAULT_REPORT"], !path.isEmpty { return path }
        return packageRoot + "/.build/fault-matrix.jsonl"
    }

    /// The line, keys in a fixed order (the order above), without a trailing newline.
    public var jsonLine: String {
        var fields = [
            "\"fault\":\(Self.quoted(fault))", "\"transport\":\(Self.quoted(transport))", "\"pass\":\(pass)",
            "\"events\":\(Self.quoted(events))",
            "\"detection_ms\":\(detectionMilliseconds.map(String.init) ?? "null")",
            "\"peak_rss_mib\":\(String(format: "%.1f", peakRSSMiB))",
        ]
        if let note { fields.append("\"note\":\(Self.quoted(note))") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// Appends the line to `path`, creating the file and its directory if needed.
    public func append(to path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard descriptor >= 0 else { throw LoopbackError("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        // One write with O_APPEND: a line is never interleaved with another writer's.
        let bytes = Array((jsonLine + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw LoopbackError("cannot write \(path)") }
    }

    /// A JSON string literal (RFC 8259 §7).
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

/// Samples this process's resident memory (`VmRSS` in `/proc/self/status`) on a thread of its own and
/// keeps the peak, so a test can bound the memory a case used while it ran.
///
/// `@unchecked Sendable`: every mutable field is read and written under `condition`.
public final class RSSSampler: @unchecked Sendable {
    private let condition = NSCondition()
    private var peak = 0
    private var samples = 0
    private var stopped = false
    private var finished = false

    /// Starts sampling every `interval`.
    public init(interval: Duration = .milliseconds(50)) {
        peak = Self.residentBytes() ?? 0
        Thread.detachNewThread { [self] in
            condition.lock()
            while !stopped {
                condition.unlock()
                let now = Self.residentBytes()
                condition.lock()
                if let now {
                    peak = max(peak, now)
                    samples += 1
                }
                _ = condition.wait(until: Date(timeIntervalSinceNow: interval / .seconds(1)))
            }
            finished = true
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Stops sampling (call it once the case is over: the thread runs until then); returns the peak in bytes
    /// and how many samples were taken.
    @discardableResult
    public func stop() -> (peakBytes: Int, samples: Int) {
        condition.lock()
        defer { condition.unlock() }
        stopped = true
        condition.broadcast()
        while !finished { condition.wait() }
        if let now = Self.residentBytes() { peak = max(peak, now) }
        return (peak, samples)
    }

    /// `VmRSS` of this process in bytes, or `nil` where `/proc` does not have it.
    public static func residentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        let kilobytes = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
        return kilobytes.map { $0 * 1024 }
    }
}
