public import Foundation

/// Runs a command-line tool (ffmpeg, ffprobe, the liveplay binary) and captures its output.
public enum ExternalTool {
    public struct Failure: Error, CustomStringConvertible {
        public var command: [String]
        public var status: Int32
        public var standardError: String
        public var description: String {
            "\(command.joined(separator: " ")) exited \(status): \(standardError.suffix(2000))"
        }
    }

    public struct Output: Sendable {
        public var status: Int32
        public var standardOutput: Data
        public var standardError: String
        public var text: String { String(decoding: standardOutput, as: UTF8.self) }
    }

    /// The path of an executable this package builds (`liveplay`, a sample), next to the running test bundle
    /// (or in `.build/debug` when run otherwise).
    public static func builtProduct(_ name: String) -> String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for directory in [bundle, bundle.deletingLastPathComponent()] {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/\(name)").path
    }

    /// The absolute path of `name` on `PATH`, if it is there.
    public static func find(_ name: String) -> String? {
        if name.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs the tool to completion; output is read concurrently so large outputs cannot deadlock it.
    public static func run(_ name: String, _ arguments: [String], input: Data? = nil) throws -> Output {
        guard let executable = find(name) else {
            throw Failure(command: [name] + arguments, status: -1, standardError: "\(name) not found on PATH")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdout = Pipe()
        let stderr = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try process.run()
        if let input {
            try stdin.fileHandleForWriting.write(contentsOf: input)
            try stdin.fileHandleForWriting.close()
        }
        let collector = PipeReader(stderr.fileHandleForReading)
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let standardError = collector.wait(upTo: .seconds(3600)) ?? Data()
        return Output(
            status: process.terminationStatus, standardOutput: data,
            standardError: String(decoding: standardError, as: UTF8.self))
    }

    /// Like ``run(_:_:input:)``, but a non-zero exit is an error.
    @discardableResult
    public static func check(_ name: String, _ arguments: [String]) throws -> Output {
        let output = try run(name, arguments)
        guard output.status == 0 else {
            throw Failure(command: [name] + arguments, status: output.status, standardError: output.standardError)
        }
        return output
    }
}

/// Reads a pipe to its end on a thread of its own, so a test can bound how long it waits for the writer.
///
/// `@unchecked Sendable`: the collected output is written under `lock` and read after `done` is signalled.
public final class PipeReader: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    public init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            let all = handle.readDataToEndOfFile()
            lock.withLock { data = all }
            done.signal()
        }
    }

    /// Everything read once the writer closed, or `nil` if it did not close within `limit`.
    public func wait(upTo limit: Duration = .seconds(30)) -> Data? {
        guard done.wait(timeout: .now() + .nanoseconds(Int(limit.nanoseconds))) == .success else { return nil }
        return lock.withLock { data }
    }
}
