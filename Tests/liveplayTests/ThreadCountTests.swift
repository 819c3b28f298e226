import Foundation
import LivePlayLab
import LivePlayTesting
import Testing

@testable import liveplay

/// The threads a playing `liveplay` runs, counted from `/proc/PID/task` by name while it plays: the table of threads
/// in the LivePlay module doc (Sources/LivePlay/LivePlay.swift), case by case.
@Suite(.serialized) struct ThreadCountTests {
    /// `liveplay ARGUMENTS` started, sampled once it has played (its first net status after `PLAY_BEGIN`, or the
    /// monitor's first status line), then stopped. Returns the count of threads by name (`comm`).
    static func threads(_ arguments: [String], statuses: Int = 1) async throws -> [String: Int] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let (chunks, chunk) = AsyncStream.makeStream(of: String.self)
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { chunk.finish() } else { chunk.yield(String(decoding: data, as: UTF8.self)) }
        }
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
            pipe.fileHandleForReading.readabilityHandler = nil
        }
        // Reads its output as it comes until it has played (or it ends, or 20 s pass: then the counts below fail).
        _ = try? await withDeadline(.seconds(20)) {
            var output = ""
            for await text in chunks {
                output += text
                let lines = output.split(separator: "\n")
                let begun = lines.firstIndex { $0.contains("\"code\":2004") || $0.contains("\"kind\":\"status\"") }
                if let begun, lines[begun...].filter({ $0.contains("\"kind\":\"status\"") }).count >= statuses { return }
            }
        }
        var names: [String: Int] = [:]
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task")
        for task in tasks {
            let comm = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\(task)/comm", encoding: .utf8))
            names[comm?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?", default: 0] += 1
        }
        print("liveplay \(arguments.prefix(3).joined(separator: " ")): \(tasks.count) threads \(names.sorted { $0.key < $1.key })")
        return names
    }

    static func count(_ names: [String: Int], _ prefix: String) -> Int {
        names.filter { $0.key.hasPrefix(prefix) }.values.reduce(0, +)
    }

    static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// One HTTP-FLV stream: the play loop's thread and its listener's, SwiftNIO's event loops (one a core), no
    /// RTMP thread.
    @Test func anHTTPFLVStreamRunsTwoPlaybackThreadsAndNIOsLoops() async throws {
        let server = try LiveFLVServer(path: try Fixture.longH264AAC.path(), configuration: .init(port: 0, threads: 1))
        let url = "http://127.0.0.1:\(try await server.start())/live.flv"
        let names = try await Self.threads([url, "--json", "-t", "20"], statuses: 2)
        await server.stop()
        #expect(names["liveplay-play"] == 2, "\(names)")
        #expect(Self.count(names, "NIO-SGLTN") == Self.cores, "\(names)")
        #expect(Self.count(names, "liveplay-rtmp") == 0 && Self.count(names, "liveplay-watch") == 0, "\(names)")
    }

    /// One RTMP stream (nginx-rtmp, ffmpeg publishing): the two playback threads, librtmp's reader and its watchdog.
    @Test func anRTMPStreamAddsLibrtmpsReaderAndWatchdog() async throws {
        if let reason = NginxRTMPServer.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("nginx-rtmp is required under CI: \(reason)") }
            return
        }
        let nginx = try NginxRTMPServer()
        let publisher = try FFmpegPublisher(file: try Fixture.longH264AAC.path(), url: nginx.url(stream: "threads"))
        defer {
            publisher.stop()
            nginx.stop()
        }
        let names = try await Self.threads([nginx.url(stream: "threads"), "--json", "-t", "20"], statuses: 2)
        #expect(names["liveplay-play"] == 2, "\(names)")
        #expect(names["liveplay-rtmp"] == 1 && names["liveplay-watch"] == 1, "\(names)")
    }

    /// Three streams, two kept preloaded: the playing session and its listener, a session for each preloaded stream,
    /// and the pool's thread for its notices; no more (nothing preloaded runs on a thread of its own beyond these).
    @Test func twoPreloadedStreamsAddASessionThreadEachAndThePoolsOne() async throws {
        let (servers, urls) = try await SwitchCommandTests.threeStreams()
        let names = try await Self.threads(urls + ["--preload", "2", "--json", "-t", "20"], statuses: 2)
        for server in servers { await server.stop() }
        #expect(names["liveplay-play"] == 2 + 2 + 1, "\(names)")
    }

    /// A monitor of many streams on a thread group (the default: one thread a core): the threads do not grow with
    /// the streams, since their sessions and listeners share the group's threads.
    @Test func aMonitorsThreadsDoNotGrowWithItsStreams() async throws {
        let server = try LiveFLVServer(path: try Fixture.longH264AAC.path(), configuration: .init(port: 0, threads: 1))
        let port = try await server.start()
        var counts: [Int] = []
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("threads-\(UUID()).list").path
        defer { try? FileManager.default.removeItem(atPath: list) }
        for streams in [4, 24] {
            let lines = (0..<streams).map { "stream\($0) http://127.0.0.1:\(port)/live.flv" }
            try lines.joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
            let names = try await Self.threads(["monitor", "--streams", list], statuses: streams)
            #expect(names["liveplay-play"] == Self.cores, "the group's threads: \(names)")
            counts.append(names.values.reduce(0, +))
        }
        await server.stop()
        #expect(counts[0] == counts[1], "as many threads for 24 streams as for 4: \(counts)")
    }
}
