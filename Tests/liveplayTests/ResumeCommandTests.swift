import Foundation
import LivePlay
import LivePlayTesting
import Testing

/// `liveplay FILE` resumes where it was left (issue 49): stopped by a signal at about 12 s, the next run starts there
/// and says so; `--no-resume` starts at 0; a file played to its end starts at 0 the next time. Each run has a state
/// directory of the test's own.
@Suite struct ResumeCommandTests {
    let state = NSTemporaryDirectory() + "liveplay-resume-\(UUID().uuidString)"

    /// Runs `liveplay ARGUMENTS --json --trace-frames` until `until` holds for its output (stdout and stderr) or it
    /// exits, then SIGTERM.
    func run(
        _ arguments: [String], state: String? = nil, until: @escaping @Sendable (String) -> Bool
    ) async throws -> (log: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = arguments + ["--json", "--trace-frames"]
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_STATE_HOME": state ?? self.state]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let log = Locked("")
        Thread {
            while case let chunk = output.fileHandleForReading.availableData, !chunk.isEmpty {
                log.set(log.get() + String(decoding: chunk, as: UTF8.self))
            }
        }.start()
        _ = await eventually(within: .seconds(40)) { until(log.get()) || !process.isRunning }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        // The last of its output (the session's summary, 9006), read by the thread after the exit.
        _ = await eventually(within: .seconds(2)) { log.get().contains("\"code\":9006") }
        return (log.get(), process.terminationStatus)
    }

    static func framePTS(_ log: String) -> [Int64] {
        log.split(separator: "\n").filter { $0.contains("\"kind\":\"frame\"") }.compactMap { line in
            guard let range = line.range(of: "\"pts_ms\":") else { return nil }
            return Int64(line[range.upperBound...].prefix { $0.isNumber })
        }
    }

    static func resumeMilliseconds(_ log: String) -> Int64? {
        guard let start = log.split(separator: "\n").first(where: { $0.contains("\"kind\":\"start\"") }),
            let range = start.range(of: "\"resume_ms\":")
        else { return nil }
        return Int64(start[range.upperBound...].prefix { $0.isNumber })
    }

    @Test func aFileStoppedBySignalResumesWhereItWasLeft() async throws {
        defer { try? FileManager.default.removeItem(atPath: state) }
        let path = try Fixture.flashBeep.path()  // 20 s, a keyframe a second
        let first = try await run([path, "--start", "10"]) { Self.framePTS($0).last ?? 0 >= 12_300 }
        #expect(Self.resumeMilliseconds(first.log) == nil, "--start: not resumed")
        let stopped = try #require(Self.framePTS(first.log).last)
        let kept = try String(contentsOfFile: state + "/liveplay/positions", encoding: .utf8)
        #expect(kept.hasPrefix(URL(fileURLWithPath: path).standardizedFileURL.path + "\t"), "\(kept)")

        let again = try await run([path]) { !Self.framePTS($0).isEmpty }
        let resumed = try #require(Self.resumeMilliseconds(again.log), "the start line says where: \(again.log.prefix(400))")
        let firstPicture = try #require(Self.framePTS(again.log).first)
        print("stopped at \(stopped) ms; resumed at \(resumed) ms, first picture \(firstPicture) ms")
        #expect(abs(resumed - stopped) <= 1_100, "where it was left, within the status's second")
        #expect(abs(firstPicture - resumed) <= 1_000, "the picture there, within a GOP")

        let fresh = try await run([path, "--no-resume"]) { !Self.framePTS($0).isEmpty }
        #expect(Self.resumeMilliseconds(fresh.log) == nil)
        #expect(Self.framePTS(fresh.log).first ?? -1 < 100, "--no-resume: from the start")
    }

    /// A state directory that cannot be made (under a file): one warning, and playback is what it would have been.
    @Test func aPositionThatCannotBeKeptIsAWarningNotAFailure() async throws {
        let path = try Fixture.flashBeep.path()
        let result = try await run([path], state: "/dev/null/state") { Self.framePTS($0).last ?? 0 >= 1_500 }
        #expect(result.status == 0, "\(result.log.suffix(600))")
        #expect(result.log.contains("could not keep where"), "\(result.log.suffix(600))")
    }

    @Test func aFilePlayedToItsEndStartsAtZeroNextTime() async throws {
        defer { try? FileManager.default.removeItem(atPath: state) }
        let path = try Fixture.flashBeep.path()
        let stopped = try await run([path, "--start", "8"]) { Self.framePTS($0).last ?? 0 >= 9_500 }
        #expect(stopped.status == 0)
        let end = try await run([path]) { _ in false }
        #expect(Self.resumeMilliseconds(end.log) != nil, "resumed at about 9.5 s")
        #expect(end.log.contains("\"code\":2006"), "played to its end")
        let after = try await run([path]) { !Self.framePTS($0).isEmpty }
        #expect(Self.resumeMilliseconds(after.log) == nil, "finished: forgotten")
        #expect(Self.framePTS(after.log).first ?? -1 < 100)
    }
}
