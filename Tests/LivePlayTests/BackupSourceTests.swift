import Foundation
import LivePlayLab
import LivePlayTesting
import Testing

@testable import LivePlay

/// `--backup` (``LivePlayConfiguration/backupURLs``) against real servers: nginx (its 404, and nginx-rtmp fed by
/// ffmpeg) and the lab's HTTP-FLV server. A source that refuses, answers 404, ends or dies moves playback to the next
/// with 9021 and no −2301; every source dead is one −2301, each having had its retries.
@Suite struct BackupSourceTests {
    static func configuration(retries: Int, backups: [String]) -> LivePlayConfiguration {
        var configuration = LabSessionTests.configuration(retries: retries)
        configuration.backupURLs = backups
        return configuration
    }

    /// Stops once the session has played `seconds` past its first 2004.
    static func played(_ seconds: Int64) -> @Sendable (PlayEvent) -> Bool {
        let played = PlayedFor(milliseconds: seconds * 1000)
        return { played.reached($0) }
    }

    static func refusedURL(_ scheme: String = "http") throws -> String {
        let port = try LoopbackPort.free()
        return scheme == "http" ? "http://127.0.0.1:\(port)/live.flv?token=secret" : "rtmp://127.0.0.1:\(port)/live/x"
    }

    @Test func aRefusedPrimaryPlaysFromTheBackupAtOnce() async throws {
        let (lab, port) = try await LabSessionTests.server()
        defer { Task { await lab.stop() } }
        let backup = "http://127.0.0.1:\(port)/live.flv"
        let sink = RecordingSink()
        let recording = await SessionRecording.record(
            try Self.refusedURL(), configuration: Self.configuration(retries: 3, backups: [backup]), limit: .seconds(15),
            sink: sink, stopWhen: Self.played(2))
        let changed = try #require(recording.first(.sourceChanged), "\(recording.codes)")
        #expect(changed.parameters["source"] == .int(1))
        #expect(changed.parameters["reason"] == .string("connect_failed"))
        #expect(changed.parameters["url"] == .string(backup))
        // At once, not after the primary's three retries (300 ms apart).
        #expect(changed.elapsedMilliseconds < 300, "\(changed.elapsedMilliseconds) ms")
        #expect(!recording.codes.contains(PlayEventCode.reconnect.rawValue), "the primary is not retried first")
        #expect(!recording.codes.contains(PlayEventCode.networkDisconnected.rawValue))
        #expect(recording.first(.playBegin) != nil)
        #expect(sink.pictures.count >= 40, "\(sink.pictures.count) pictures")
        let status = try #require(recording.statuses.last)
        #expect(status.source == backup && status.dictionary["source"] == .string(backup))
    }

    @Test func aPrimaryAnswering404PlaysFromNginxRTMP() async throws {
        guard let published = try await PublishedStream.start() else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("\(PublishedStream.missing)") }
            return
        }
        defer { published.stop() }
        let empty = NSTemporaryDirectory() + "liveplay-empty-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let files = try NginxRTMPServer(staticFiles: empty)
        defer { files.stop() }
        let primary = "http://127.0.0.1:\(files.port)/missing.flv"
        let backup = published.url(port: published.port)
        let recording = await SessionRecording.record(
            primary, configuration: Self.configuration(retries: 3, backups: [backup]), limit: .seconds(15),
            stopWhen: Self.played(2))
        let changed = try #require(recording.first(.sourceChanged), "\(recording.codes)")
        #expect(changed.parameters["reason"] == .string("http_status"))
        #expect(changed.message.contains("404"), "\(changed.message)")
        #expect(!recording.codes.contains(PlayEventCode.fileNotFound.rawValue), "404 ends the primary's turn only")
        #expect(!recording.codes.contains(PlayEventCode.networkDisconnected.rawValue))
        #expect(recording.first(.playBegin) != nil, "\(recording.codes)")
    }

    /// The primary (nginx-rtmp, ffmpeg publishing) ends: ffmpeg stops, nginx tells the viewer the stream is
    /// unpublished; playback goes on from the lab's server with no −2301 and no 2006.
    @Test func aPrimaryThatEndsGoesOnFromTheBackup() async throws {
        guard let published = try await PublishedStream.start() else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("\(PublishedStream.missing)") }
            return
        }
        defer { published.stop() }
        let (lab, port) = try await LabSessionTests.server()
        defer { Task { await lab.stop() } }
        let sink = RecordingSink()
        let recording = await SessionRecording.record(
            published.url(port: published.port),
            configuration: Self.configuration(retries: 3, backups: ["http://127.0.0.1:\(port)/live.flv"]),
            limit: .seconds(20), sink: sink,
            script: { probe in
                // A second of pictures from the primary first.
                await probe.wait(for: .playProgress, count: 2)
                published.publisher.stop()
                await probe.wait(for: .sourceChanged, timeout: .seconds(10))
                // Two seconds of pictures from the backup, then stop.
                let shown = sink.pictures.count
                _ = await eventually(within: .seconds(10)) { sink.pictures.count >= shown + 50 }
                probe.stop()
            })
        let changed = try #require(recording.first(.sourceChanged), "\(recording.codes)")
        #expect(changed.parameters["source"] == .int(1))
        #expect(!recording.codes.contains(PlayEventCode.networkDisconnected.rawValue))
        #expect(!recording.codes.contains(PlayEventCode.playEnd.rawValue), "a live source that ends is not the end")
        #expect(!recording.codes.contains(PlayEventCode.reconnect.rawValue), "an ended stream is not retried first")
        let begins = recording.events.filter { $0.code == .playBegin }
        // About 25 pictures from the primary, then 50 from the backup.
        #expect(sink.pictures.count >= 70, "pictures go on from the backup: \(sink.pictures.count)")
        #expect(changed.parameters["reason"] == .string("server_closed"), "\(recording.codes)")
        #expect(begins.count >= 1, "\(recording.codes)")
    }

    /// The first source (the lab's server behind the impairment proxy) stalls for good: its connection and each retry
    /// go silent, so its retries are spent on no-data timeouts; then the backup (nginx-rtmp) plays, with no −2301.
    @Test func aFirstSourceThatStallsForGoodMovesOnOnceItsRetriesAreSpent() async throws {
        guard let published = try await PublishedStream.start() else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("\(PublishedStream.missing)") }
            return
        }
        defer { published.stop() }
        let primary = try await ProxiedStream.startLab(path: "/live.flv")
        let sink = RecordingSink()
        let recording = await SessionRecording.record(
            primary.url, configuration: Self.configuration(retries: 1, backups: [published.url(port: published.port)]),
            limit: .seconds(25), sink: sink,
            script: { probe in
                await probe.wait(for: .playProgress, count: 2)
                primary.proxy.set(.stall(.seconds(60)))
                await probe.wait(for: .sourceChanged, timeout: .seconds(15))
                let shown = sink.pictures.count
                _ = await eventually(within: .seconds(10)) { sink.pictures.count >= shown + 50 }
                probe.stop()
            })
        await primary.stop()
        let changed = try #require(recording.first(.sourceChanged), "\(recording.codes)")
        #expect(changed.parameters["source"] == .int(1))
        // Silence (2104), its one retry (2103), whose handshake the stalled proxy never completes; then the backup.
        #expect(recording.codes.contains(PlayEventCode.receiveDataLag.rawValue), "\(recording.codes)")
        #expect(changed.parameters["reason"] == .string("handshake_failed"), "\(changed.parameters)")
        #expect(recording.codes.filter { $0 == PlayEventCode.reconnect.rawValue }.count == 1, "\(recording.codes)")
        #expect(!recording.codes.contains(PlayEventCode.networkDisconnected.rawValue))
        #expect(sink.pictures.count >= 70, "\(sink.pictures.count) pictures")
    }

    /// The first source (the lab's server) is down at the start, so nginx-rtmp's stream plays; the server starts, the
    /// probe finds it, and playback moves back to it between two reads, without a stall.
    @Test func theFirstSourceComingBackIsPlayedAgainWithoutAStutter() async throws {
        guard let published = try await PublishedStream.start() else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("\(PublishedStream.missing)") }
            return
        }
        defer { published.stop() }
        let port = Int(try LoopbackPort.free())
        let servers = Locked<[LiveFLVServer]>([])
        var configuration = Self.configuration(retries: 3, backups: [published.url(port: published.port)])
        configuration.backupProbeInterval = .milliseconds(500)
        let sink = RecordingSink()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: configuration, limit: .seconds(20), sink: sink,
            script: { probe in
                await probe.wait(for: .playProgress, count: 2)
                if let (server, _) = try? await LabSessionTests.server(port: port) { servers.withLock { $0.append(server) } }
                await probe.wait(for: .sourceChanged, count: 2, timeout: .seconds(10))
                let shown = sink.pictures.count
                _ = await eventually(within: .seconds(10)) { sink.pictures.count >= shown + 50 }
                probe.stop()
            })
        for server in servers.withLock({ $0 }) { await server.stop() }
        let changes = recording.events.filter { $0.code == .sourceChanged }
        #expect(changes.map { $0.parameters["source"] } == [.int(1), .int(0)], "\(recording.codes)")
        let back = try #require(changes.last)
        #expect(back.parameters["reason"] == .string("back"))
        let after = recording.events.filter { $0.elapsedMilliseconds >= back.elapsedMilliseconds }.map(\.code)
        #expect(!after.contains(.videoPlayLag) && !after.contains(.playLoading), "no stall on the way back: \(after)")
        #expect(!recording.codes.contains(PlayEventCode.reconnect.rawValue))
        #expect(recording.statuses.last?.source == "http://127.0.0.1:\(port)/live.flv")
        #expect(sink.pictures.count >= 100, "\(sink.pictures.count) pictures")
    }

    @Test func everySourceDeadIsOneDisconnectAfterEachHadItsRetries() async throws {
        let primary = try Self.refusedURL()
        let backup = try Self.refusedURL("rtmp")
        let recording = await SessionRecording.record(
            primary, configuration: Self.configuration(retries: 1, backups: [backup]), limit: .seconds(15))
        let codes = recording.codes
        #expect(codes.filter { $0 == PlayEventCode.networkDisconnected.rawValue }.count == 1, "\(codes)")
        #expect(codes.filter { $0 == PlayEventCode.serverConnectFailed.rawValue }.count == 4, "two attempts each: \(codes)")
        #expect(recording.events.filter { $0.code == .sourceChanged }.map { $0.parameters["source"] } == [
            .int(1), .int(0), .int(1),
        ])
        #expect(recording.outcome == .failed(.networkDisconnected))
    }
}
