import Foundation

/// rtmplite3 (PyPI), a legacy RTMP server nobody here wrote, relaying what is published to it on a free loopback
/// port (`Tests/tools/legacy-rtmp-server`). Its AMF0 reader rejects Enhanced RTMP's `connect` ("Missing app path")
/// and accepts librtmp's plain one; it logs each connect it accepts or rejects. Stopped by ``stop()`` or when
/// released.
///
/// `@unchecked Sendable`: `process` is only started and stopped; the log is a file read on demand.
public final class LegacyRTMPServer: @unchecked Sendable {
    public let port: UInt16
    private let process = Process()
    private let logPath = NSTemporaryDirectory() + "liveplay-legacy-rtmp-\(UUID().uuidString).log"

    /// Why it cannot run here (rtmplite3 is not installed), or nil.
    public static var unavailableReason: String? {
        let check = try? ExternalTool.run("python3", ["-c", "import rtmplite3"])
        return check?.status == 0 ? nil : "rtmplite3 is not installed (pip install rtmplite3==0.4.0)"
    }

    public init() throws {
        port = try LoopbackPort.free()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tests/tools/legacy-rtmp-server").path
        guard let python = ExternalTool.find("python3") else { throw LoopbackError("python3 not found on PATH") }
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-u", script, String(port)]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: logPath)
        process.standardError = process.standardOutput
        try ChildProcess.run(process)
        guard LoopbackPort.wait(timeout: .seconds(10), until: { self.log.contains("listening on") }) else {
            stop()
            throw LoopbackError("the legacy RTMP server did not start: \(log.suffix(1000))")
        }
    }

    deinit {
        stop()
    }

    /// `rtmp://127.0.0.1:PORT/live/NAME`.
    public func url(stream name: String) -> String {
        "rtmp://127.0.0.1:\(port)/live/\(name)"
    }

    /// What the server printed so far: a line per connect accepted (`connect accepted`) or rejected
    /// (`connect REJECTED`).
    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    public func stop() {
        ChildProcess.terminate(process, signal: SIGTERM)
    }
}
