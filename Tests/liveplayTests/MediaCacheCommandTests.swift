import Foundation
import LivePlayLab
import LivePlayTesting
import Testing

@testable import liveplay

/// `liveplay download` and `liveplay URL --media-cache` against nginx serving files: what the server's access log
/// shows of each request, and what a person finds in the cache.
@Suite(.serialized) struct MediaCacheCommandTests {
    /// nginx serving a copy of `fixture` as `name`, the cache directory to use, and the copy's path.
    static func serve(_ source: String, as name: String, rateLimit: Int? = nil) throws -> (NginxRTMPServer, String, String)? {
        let root = NSTemporaryDirectory() + "liveplay-media-cache-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: root + "/files", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: source, toPath: root + "/files/" + name)
        do {
            return (try NginxRTMPServer(staticFiles: root + "/files", rateLimit: rateLimit), root + "/cache", root + "/files/" + name)
        } catch {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("nginx is needed under CI: \(error)") }
            return nil
        }
    }

    static func requests(_ server: NginxRTMPServer) -> [String] {
        server.accessLog.split(separator: "\n").map(String.init)
    }

    /// `liveplay download URL --media-cache-dir CACHE`, started and left running.
    static func startDownload(_ url: String, cache: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = ["download", url, "--media-cache-dir", cache]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Bytes of media the cache directory holds so far (its entries' `.flv` files, as they are written).
    static func heldBytes(_ cache: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []
        return names.filter { $0.hasSuffix(".flv") }.reduce(0) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: cache + "/" + name)
            return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
        }
    }

    static func sha256(_ path: String) throws -> String {
        String(try ExternalTool.check("sha256sum", [path]).text.prefix(64))
    }

    /// The lab's live server: an HTTP-FLV response with no Content-Length, as a live stream has.
    static func live() async throws -> (LiveFLVServer, String) {
        let server = try LiveFLVServer(path: try Fixture.h264AAC.path(), configuration: .init(port: 0, threads: 1))
        return (server, "http://127.0.0.1:\(try await server.start())/live.flv")
    }

    /// What a cache directory holds: its index's entries, and its files other than `index.json` and `index.lock`.
    static func contents(_ cache: String) throws -> (entries: [String: Any], files: [String]) {
        let index = try #require(FileManager.default.contents(atPath: cache + "/index.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: index) as? [String: Any])
        let files = try FileManager.default.contentsOfDirectory(atPath: cache).filter { !$0.hasPrefix("index.") }
        return (try #require(object["entries"] as? [String: Any]), files.sorted())
    }

    @Test func theSecondPlayComesFromTheCacheWithNoRequest() throws {
        let source = try Fixture.h264BFramesAAC.path()
        guard let (server, cache, _) = try Self.serve(source, as: "vod.flv") else { return }
        defer { server.stop() }
        let url = server.fileURL("vod.flv") + "?token=s3cr3t"
        let arguments = [url, "--media-cache-dir", cache, "--volatile-param", "token", "--trace-frames", "--json"]
        let first = try Binary.run(arguments)
        #expect(first.status == 0, "\(first.standardError)")
        #expect(Self.requests(server).count == 1, "\(Self.requests(server))")
        // Another token, the same file: played from disk.
        let second = try Binary.run(arguments.map { $0 == url ? server.fileURL("vod.flv") + "?token=other" : $0 })
        #expect(second.status == 0, "\(second.standardError)")
        #expect(Self.requests(server).count == 1, "no request the second time: \(Self.requests(server))")
        let expected = try OnDemandTests.pictures(source)
        #expect(try OnDemandTests.frames(first.text).map(\.pts) == expected)
        #expect(try OnDemandTests.frames(second.text).map(\.pts) == expected, "the same pictures from the cache")
        let codes = try EdgeTests.codes(second.text)
        #expect(codes.contains(2006), "played to its end: \(codes)")
        let list = try Binary.run(["download", "--list", "--media-cache-dir", cache])
        #expect(list.text.contains("\"complete\":true") && !list.text.contains("s3cr3t"), "\(list.text)")
    }

    @Test func aPartialEntryPlaysWhatItHoldsAndFetchesTheRestWithRange() async throws {
        let source = try Fixture.h264BFramesAAC.path()
        guard let (server, cache, copy) = try Self.serve(source, as: "part.flv", rateLimit: 32 << 10) else { return }
        defer { server.stop() }
        let url = server.fileURL("part.flv")
        // A download stopped part-way (SIGTERM pauses it) leaves a partial entry.
        let process = try Self.startDownload(url, cache: cache)
        // Part-way: a second of the 32 kB/s transfer is on disk.
        #expect(await eventually { Self.heldBytes(cache) >= 32 << 10 }, "the download got going")
        process.terminate()
        process.waitUntilExit()
        let list = try Binary.run(["download", "--list", "--media-cache-dir", cache]).text
        #expect(list.contains("\"complete\":false"), "\(list)")
        let output = try Binary.run([url, "--media-cache-dir", cache, "--trace-frames", "--json"])
        #expect(output.status == 0, "\(output.standardError)")
        #expect(try OnDemandTests.frames(output.text).map(\.pts) == OnDemandTests.pictures(source), "every picture, once")
        let requests = Self.requests(server)
        #expect(requests.count == 2 && requests[1].hasPrefix("206 bytes="), "the rest with Range: \(requests)")
        let after = try Binary.run(["download", "--list", "--media-cache-dir", cache]).text
        #expect(after.contains("\"complete\":true"), "\(after)")
        let path = try #require(after.split(separator: "\"path\":\"").last?.split(separator: "\"").first.map(String.init))
        #expect(try Self.sha256(path) == Self.sha256(copy), "the entry is the file, byte for byte")
    }

    @Test func aDownloadKilledWithSIGKILLResumesWhereItStopped() async throws {
        var bytes = [UInt8](repeating: 0, count: 4 << 20)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 2654435761 >> 13) }
        let seedFile = NSTemporaryDirectory() + "liveplay-killed-\(UUID().uuidString.prefix(8)).flv"
        try Data(bytes).write(to: URL(fileURLWithPath: seedFile))
        guard let (server, cache, copy) = try Self.serve(seedFile, as: "big.flv", rateLimit: 2 << 20) else { return }
        defer { server.stop() }
        let url = server.fileURL("big.flv")
        let process = try Self.startDownload(url, cache: cache)
        // Killed at a random point between a quarter and three quarters of the 4 MB.
        let killAt = Int.random(in: (1 << 20)...(3 << 20))
        #expect(await eventually { Self.heldBytes(cache) >= killAt }, "\(killAt) bytes written before the kill")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let resumed = try Binary.run(["download", url, "--media-cache-dir", cache])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        let lines = resumed.text.split(separator: "\n")
        let started = try #require(lines.first { $0.contains("\"event\":\"started\"") })
        print("resumed: \(started)")
        #expect(!started.contains("\"bytes\":0,"), "went on from what the killed run had written: \(started)")
        let completed = try #require(lines.first { $0.contains("\"event\":\"completed\"") }, "\(resumed.text)")
        let path = try #require(completed.split(separator: "\"path\":\"").last?.split(separator: "\"").first.map(String.init))
        #expect(try Self.sha256(path) == Self.sha256(copy), "byte-identical after the kill")
        let requests = Self.requests(server)
        #expect(requests.last?.hasPrefix("206 bytes=") == true, "\(requests)")
    }

    @Test func aLiveURLIsRefusedOnStderrAndLeavesNothingInTheCache() async throws {
        let (server, url) = try await Self.live()
        let cache = NSTemporaryDirectory() + "liveplay-live-download-\(UUID().uuidString.prefix(8))"
        let output = try Binary.run(["download", url, "--media-cache-dir", cache])
        await server.stop()
        #expect(output.status == ExitStatus.unavailable, "\(output.text)")
        #expect(output.text.contains("\"event\":\"failed\"") && output.text.contains("\"cause\":\"not_a_file\""),
                "\(output.text)")
        // One plain sentence: what, where, what to do instead.
        let said = output.standardError.split(separator: "\n")
        #expect(said.count == 1, "\(output.standardError)")
        #expect(said.first?.hasPrefix("liveplay: \(url) is a live stream") == true, "\(output.standardError)")
        #expect(said.first?.contains("--record") == true, "\(output.standardError)")
        let (entries, files) = try Self.contents(cache)
        #expect(entries.isEmpty, "no entry for a live stream: \(entries)")
        #expect(files.isEmpty, "no partial file, no lock file: \(files)")
    }

    /// An HTML error page answered with 200 and a Content-Length is no file to keep: `not_flv`, exit 65, nothing in
    /// the cache (it was stored as a complete `.flv` entry) (issue 45, point 13).
    @Test func anHTMLPageIsNotDownloadedAsAFile() throws {
        let page = Array("<!DOCTYPE html><html><body>Access denied</body></html>".utf8)
        let server = try ScriptedHTTPServer { _, _ in .init(headers: [("Content-Type", "text/html")], body: page) }
        defer { server.stop() }
        let cache = NSTemporaryDirectory() + "liveplay-html-download-\(UUID().uuidString.prefix(8))"
        let output = try Binary.run(["download", "http://127.0.0.1:\(server.port)/movie.flv", "--media-cache-dir", cache])
        #expect(output.status == ExitStatus.dataError, "\(output.text)\(output.standardError)")
        #expect(output.text.contains("\"cause\":\"not_flv\""), "\(output.text)")
        #expect(output.standardError.contains("is not an FLV file: it is an HTML or XML page"), "\(output.standardError)")
        let (entries, files) = try Self.contents(cache)
        #expect(entries.isEmpty && files.isEmpty, "nothing kept: \(entries) \(files)")
    }

    @Test func aLiveStreamPlayedThroughTheCachePassesThroughUntouched() async throws {
        let (server, url) = try await Self.live()
        let cache = NSTemporaryDirectory() + "liveplay-live-play-\(UUID().uuidString.prefix(8))"
        let output = try Binary.run([url, "--media-cache-dir", cache, "--duration", "2", "--no-decode", "--json"])
        await server.stop()
        #expect(output.status == 0, "\(output.standardError)")
        let (entries, files) = try Self.contents(cache)
        #expect(entries.isEmpty && files.isEmpty, "nothing of a live stream is cached: \(entries), \(files)")
    }

    @Test func optionsAreValidatedAndDocumented() throws {
        #expect(try Binary.run(["download"]).status == ExitStatus.usage, "no URL")
        #expect(try Binary.run(["download", "rtmp://127.0.0.1:1/live/a"]).status == ExitStatus.usage, "not HTTP")
        #expect(try Binary.run(["download", "http://127.0.0.1:1/a.flv", "--max-concurrent", "0"]).status == ExitStatus.usage)
        #expect(try Binary.run(["http://127.0.0.1:1/a.flv", "--media-cache-entries", "0"]).status == ExitStatus.usage)
        let download = DownloadCommand.helpMessage(for: DownloadCommand.self)
        for option in ["--media-cache-dir", "--media-cache-entries", "--min-free", "--volatile-param", "--max-concurrent",
                       "--delete", "--list"] {
            #expect(download.contains(option), "download's help lacks \(option)")
        }
        let play = LivePlayCommand.helpMessage(for: PlayCommand.self)
        for option in ["--media-cache", "--media-cache-dir", "--record", "--record-segment"] {
            #expect(play.contains(option), "play's help lacks \(option)")
        }
        #expect(LivePlayCommand.helpText(columns: 100).contains("download"))
    }
}
