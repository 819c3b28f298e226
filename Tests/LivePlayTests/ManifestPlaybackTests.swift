import Foundation
import LivePlayLab
import LivePlayTesting
import Testing

@testable import LivePlay

/// LAS manifests (a URL or file whose path ends in `.json`) played against real servers: nginx serves the manifest
/// over HTTP; the renditions are nginx-rtmp fed by ffmpeg and the lab's HTTP-FLV server. The start rendition plays
/// (with its `backupUrl`s as backups), the renditions are told in 9022, and a manifest that cannot be played is
/// refused with its sentence.
@Suite struct ManifestPlaybackTests {
    /// nginx serving `files` (name → body) over HTTP, and the folder it serves.
    static func serve(_ files: [String: [UInt8]]) throws -> (server: NginxRTMPServer, root: String) {
        let root = NSTemporaryDirectory() + "liveplay-manifest-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for (name, body) in files { try Data(body).write(to: URL(fileURLWithPath: "\(root)/\(name)")) }
        return (try NginxRTMPServer(staticFiles: root), root)
    }

    static func manifest(_ representations: [(id: Int, url: String, backups: [String], kbits: Int, selected: Bool)]) -> [UInt8] {
        let items = representations.map { item in
            let backups = item.backups.map { "\"\($0)\"" }.joined(separator: ",")
            return """
                {"id": \(item.id), "url": "\(item.url)", "backupUrl": [\(backups)], "maxBitrate": \(item.kbits),
                 "width": 320, "height": 240, "codec": "avc1.64000d,mp4a.40.2", "qualityType": "Q\(item.id)",
                 "hidden": false, "disabledFromAdaptive": false, "defaultSelected": \(item.selected)}
                """
        }
        return Array(#"{"version": "1.0.0", "adaptationSet": [{"duration": 1000, "representation": ["#.utf8)
            + Array(items.joined(separator: ",").utf8) + Array("]}]}".utf8)
    }

    static func skipUnlessCI() {
        if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("\(PublishedStream.missing)") }
    }

    @Test func aManifestFromNginxPlaysItsDefaultRenditionFromNginxRTMP() async throws {
        guard let published = try await PublishedStream.start() else { return Self.skipUnlessCI() }
        defer { published.stop() }
        let (lab, labPort) = try await LabSessionTests.server()
        defer { Task { await lab.stop() } }
        let rtmp = published.url(port: published.port)
        let (files, _) = try Self.serve([
            "las.json": Self.manifest([
                (1, "http://127.0.0.1:\(labPort)/live.flv", [], 500, false), (2, rtmp, [], 1200, true),
            ])
        ])
        defer { files.stop() }
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(files.port)/las.json?token=secret",
            configuration: LabSessionTests.configuration(retries: 3), limit: .seconds(15),
            stopWhen: BackupSourceTests.played(2))
        let told = try #require(recording.first(.renditions), "\(recording.codes)")
        #expect(told.parameters["renditions"] == .string("1:500:320x240,2:1200:320x240"))
        #expect(told.parameters["rendition"] == .int(2) && told.parameters["count"] == .int(2))
        #expect(told.parameters["url"] == .string(rtmp))
        let began = try #require(recording.first(.playBegin), "\(recording.codes)")
        #expect(began.elapsedMilliseconds > told.elapsedMilliseconds)
        #expect(recording.first(.rtmpStreamBegin) != nil, "played over RTMP, from nginx-rtmp: \(recording.codes)")
        #expect(!recording.events.contains { $0.message.contains("secret") }, "the manifest URL's token stays secret")
    }

    /// The start rendition refuses: its `backupUrl` (the lab's server) plays, as a `--backup` would.
    @Test func aRenditionThatRefusesPlaysFromItsBackupUrl() async throws {
        let (lab, labPort) = try await LabSessionTests.server()
        defer { Task { await lab.stop() } }
        let refused = try BackupSourceTests.refusedURL()
        let backup = "http://127.0.0.1:\(labPort)/live.flv"
        let path = NSTemporaryDirectory() + "liveplay-\(UUID().uuidString).json"
        try Data(Self.manifest([(4, refused, [backup], 800, true)])).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recording = await SessionRecording.record(
            path, configuration: LabSessionTests.configuration(retries: 3), limit: .seconds(15),
            stopWhen: BackupSourceTests.played(2))
        #expect(recording.first(.renditions)?.parameters["rendition"] == .int(4), "\(recording.codes)")
        let changed = try #require(recording.first(.sourceChanged), "\(recording.codes)")
        #expect(changed.parameters["source"] == .int(1) && changed.parameters["url"] == .string(backup))
        #expect(recording.first(.playBegin) != nil, "\(recording.codes)")
        #expect(!recording.codes.contains(PlayEventCode.networkDisconnected.rawValue))
        #expect(recording.statuses.last?.source == backup)
    }

    /// Served by nginx: a page that is not JSON, JSON that is not LAS, a body of 1 GB (sparse: only 1 MiB and a byte
    /// of it is read), a manifest that is not there.
    @Test func aManifestThatCannotBePlayedIsRefusedWithASentence() async throws {
        guard NginxRTMPServer.unavailableReason == nil else { return Self.skipUnlessCI() }
        let (files, root) = try Self.serve([
            "page.json": Array("<html><body>502 Bad Gateway</body></html>".utf8),
            "other.json": Array(#"{"version": "1", "streams": ["http://127.0.0.1/a.flv"]}"#.utf8),
            "script.json": Array(#"{"version":"1","adaptationSet":[{"representation":[{"id":1,"url":"javascript:x"}]}]}"#.utf8),
        ])
        defer { files.stop() }
        let huge = FileManager.default.createFile(atPath: "\(root)/huge.json", contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: "\(root)/huge.json"))
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        #expect(huge)
        let cases: [(name: String, code: PlayEventCode, says: String)] = [
            ("page.json", .unplayable, "it is not JSON"),
            ("other.json", .unplayable, "it has no `adaptationSet`: not a LAS manifest"),
            ("script.json", .unplayable, "representation 0 has a URL that is not HTTP(S) or RTMP(S)"),
            ("huge.json", .unplayable, "it is larger than 1 MiB: not a manifest"),
            ("missing.json", .fileNotFound, "answered 404"),
        ]
        for (name, code, says) in cases {
            let started = ContinuousClock.now
            let recording = await SessionRecording.record(
                "http://127.0.0.1:\(files.port)/\(name)", configuration: LabSessionTests.configuration(retries: 3),
                limit: .seconds(15))
            let failed = try #require(recording.events.first { $0.code.rawValue < 0 }, "\(name): \(recording.codes)")
            #expect(failed.code == code && failed.message.contains(says), "\(name): \(failed.message)")
            #expect(recording.first(.connectSucceeded) == nil && recording.first(.playBegin) == nil)
            #expect(ContinuousClock.now - started < .seconds(5), "\(name) refused at once")
        }
    }

    /// A manifest whose body stops short of its `Content-Length`, trickles a byte every 100 ms, or stops after its first
    /// 40 bytes: an error within the handshake and no-data timeouts together (3 s here), never a manifest read from
    /// half a body, never a hang (a trickled one was once read to its end, and a stalled one would have hung).
    @Test(arguments: ["cut short", "trickled", "stalled"])
    func aManifestCutShortOrTrickledIsAnErrorInBoundedTime(_ fault: String) async throws {
        let body = Array(#"{"version": "1", "adaptationSet": [{"representation": [{"id": 1, "url": "http://127.0.0.1:9/a.flv"}]}]}"#.utf8)
        let server = try ScriptedHTTPServer { _, _ in
            fault == "cut short"
                ? .init(headers: [("Content-Length", "\(body.count)")], body: Array(body.prefix(40)), contentLength: false)
                : .init(body: body, pacing: fault == "trickled" ? (1, .milliseconds(100)) : (40, .seconds(60)))
        }
        defer { server.stop() }
        let started = ContinuousClock.now
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(server.port)/las.json", configuration: LabSessionTests.configuration(retries: 3),
            limit: .seconds(15))
        let failed = try #require(recording.events.first { $0.code.rawValue < 0 }, "\(fault): \(recording.codes)")
        #expect(failed.code == .networkDisconnected, "\(fault): \(failed.message)")
        #expect(failed.message.hasPrefix("the manifest http://127.0.0.1:\(server.port)/las.json cannot be read"))
        #expect(recording.first(.renditions) == nil && recording.first(.connectSucceeded) == nil)
        #expect(ContinuousClock.now - started < .seconds(6), "\(fault): within the timeouts")
    }
}
