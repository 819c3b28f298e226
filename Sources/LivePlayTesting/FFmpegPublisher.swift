import Foundation

/// The ffmpeg CLI publishing a file to an RTMP URL in real time, looped:
/// `ffmpeg -re -stream_loop -1 -i FILE -c copy -f flv URL`; or, for Enhanced RTMP, PyAV's FFmpeg 8 publishing
/// elementary sources with its own FLV muxer and RTMP client (`Tests/tools/pyav-publish`), which this machine's
/// ffmpeg 5.1 cannot. Stopped by ``stop()`` or when released.
///
/// `@unchecked Sendable`: its one mutable flag is read and written under `lock`; `Process` is only started and stopped.
public final class FFmpegPublisher: @unchecked Sendable {
    public let url: String
    private let process: Process
    private let logPath: String
    private let lock = NSLock()
    private var stopped = false

    public convenience init(file: String, url: String) throws {
        try self.init(
            tool: "ffmpeg", url: url,
            arguments: [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-stream_loop", "-1", "-i", file,
                "-c", "copy", "-f", "flv", url,
            ])
    }

    /// FFmpeg 8 (PyAV) publishing `sources` as one Enhanced RTMP stream, a stream per source: the first of each
    /// type as track 0 in the plain v2 form, the others in OneTrack multitrack messages, as FFmpeg's muxer does.
    public convenience init(enhancedSources sources: [String], url: String) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tests/tools/pyav-publish").path
        try self.init(tool: "python3", url: url, arguments: [script, url] + sources)
    }

    private init(tool: String, url: String, arguments: [String]) throws {
        self.url = url
        logPath = NSTemporaryDirectory() + "liveplay-ffmpeg-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process = Process()
        guard let path = ExternalTool.find(tool) else { throw LoopbackError("\(tool) not found on PATH") }
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try ChildProcess.run(process)
    }

    deinit {
        stop()
    }

    public var isRunning: Bool { process.isRunning }

    /// What the publisher wrote to stderr so far.
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

    /// Stops the publisher with SIGTERM, which lets it close the stream properly.
    public func stop() {
        terminate(signal: SIGTERM)
    }

    /// Kills the publisher (SIGKILL): its connection just drops, as when a publisher crashes.
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
