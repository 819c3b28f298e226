import Foundation

/// The ffmpeg CLI publishing a file to an RTMP URL in real time, looped:
/// `ffmpeg -re -stream_loop -1 -i FILE -c copy -f flv URL`. Stopped by ``stop()`` or when released.
///
/// `@unchecked Sendable`: its one mutable flag is read and written under `lock`; `Process` is only started and stopped.
public final class FFmpegPublisher: @unchecked Sendable {
    public let url: String
    private let process: Process
    private let logPath: String
    private let lock = NSLock()
    private var stopped = false

    public init(file: String, url: String) throws {
        self.url = url
        logPath = NSTemporaryDirectory() + "liveplay-ffmpeg-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process = Process()
        guard let ffmpeg = ExternalTool.find("ffmpeg") else { throw LoopbackError("ffmpeg not found on PATH") }
        process.executableURL = URL(fileURLWithPath: ffmpeg)
        process.arguments = [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-stream_loop", "-1", "-i", file,
            "-c", "copy", "-f", "flv", url,
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try ChildProcess.run(process)
    }

    deinit {
        stop()
    }

    public var isRunning: Bool { process.isRunning }

    /// What ffmpeg wrote to stderr so far.
    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Pauses the publisher (SIGSTOP): its TCP connection stays open and silent.
    public func suspend() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGSTOP) }
    }

    public func resume() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGCONT) }
    }

    /// Stops ffmpeg with SIGTERM, which lets it close the stream properly.
    public func stop() {
        terminate(signal: SIGTERM)
    }

    /// Kills ffmpeg (SIGKILL): its connection just drops, as when a publisher crashes.
    public func kill() {
        terminate(signal: SIGKILL)
    }

    private func terminate(signal: Int32) {
        let alreadyStopped = lock.withLock {
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGCONT) }
        ChildProcess.terminate(process, signal: signal)
        try? FileManager.default.removeItem(atPath: logPath)
    }
}
