import Foundation
import LivePlayLab
import LivePlayManifest
import LivePlayTesting
import Testing

@testable import LivePlay

/// Playlists on real servers (issue 49): an M3U file whose items are a file beside it, the lab's live HTTP-FLV
/// stream that ends, and a stream nginx answers with 404, played with `--loop-playlist`'s loop: each plays in turn,
/// the 404 is told and skipped, and the list starts again; the next item is preloaded, so the change is a switch's.
@Suite(.serialized) struct PlaylistPlaybackTests {
    /// A folder of copies of `fixture`, one per name (each its own URL), and the folder.
    static func files(_ names: [String], of fixture: Fixture = .h264AAC) throws -> String {
        let folder = NSTemporaryDirectory() + "liveplay-playlist-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in names { try FileManager.default.copyItem(atPath: try fixture.path(), toPath: "\(folder)/\(name)") }
        return folder
    }

    static func items(_ updates: AdaptiveBitrateTests.Updates) -> [PlayEvent] {
        updates.events.map(\.event).filter { $0.code == .playlistItem }
    }

    @Test func aLoopedPlaylistPlaysEachItemSkipsWhatFailsAndStartsAgain() async throws {
        let live = try LiveFLVServer(
            path: try Fixture.longH264AAC.path(), configuration: .init(port: 0, loops: false, threads: 1),
            logger: LabSessionTests.quiet())
        let livePort = try await live.start()
        let folder = try Self.files(["one.flv"])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let nginx = try NginxRTMPServer(staticFiles: folder)
        defer { nginx.stop() }
        let list = "\(folder)/list.m3u"
        try Data(
            """
            #EXTM3U
            #EXTINF:3,A file
            one.flv
            #EXTINF:-1,The lab, live
            http://127.0.0.1:\(livePort)/live.flv
            http://127.0.0.1:\(nginx.port)/missing.flv?token=secret
            """.utf8
        ).write(to: URL(fileURLWithPath: list))
        let playlist = LivePlaylist(try await M3UPlaylist.read(list), loop: .playlist)
        let reached = Locked<[LivePlaylist.ReachLast]>([])
        playlist.onReachLast = { reach in reached.withLock { $0.append(reach) } }
        let (player, sink, updates) = AdaptiveBitrateTests.player()
        let pool = PreloadPool(configuration: LabSessionTests.configuration(retries: 0), logger: LabSessionTests.quiet())
        async let outcome = player.run(playlist: playlist, preload: pool)
        let again = await eventually(within: .seconds(40)) { Self.items(updates).count >= 4 }
        await player.stopPlay()
        _ = await outcome
        await live.stop()

        let events = updates.events.map(\.event)
        let told = events.filter { [9023, 9024, 2006, 9012].contains($0.code.rawValue) || $0.code.isError }
            .map { "\($0.code.rawValue) \($0.parameters["index"].map { "\($0)" } ?? "")" }
        print("playlist: \(told)")
        #expect(again, "the loop came back to the first item: \(told)")
        #expect(Self.items(updates).prefix(4).map(\.parameters["index"]) == [.int(0), .int(1), .int(2), .int(0)])
        #expect(Self.items(updates).first?.parameters["title"] == .string("A file"))
        #expect(Self.items(updates)[2].parameters["url"] == .string("http://127.0.0.1:\(nginx.port)/missing.flv?token=***"))
        // The file played to its end; the live stream, once it ended, was lost after its retries (−2301: what
        // a live HTTP-FLV stream whose server closes it is); the 404 failed at once (−2303); playback went on.
        #expect(events.first { $0.code == .playEnd } != nil, "\(told)")
        #expect(events.filter { $0.code == .playBegin }.count >= 2, "the file and the live stream played: \(told)")
        let failures = events.filter(\.code.isError).map(\.code)
        #expect(failures.prefix(2) == [.networkDisconnected, .fileNotFound], "\(told)")
        #expect(reached.get().map(\.pass) == [0], "once in the first pass, at its last item: \(reached.get())")
        #expect(events.filter { $0.code == .playlistReachLast }.count == 1)
        // The change to the live item was a switch from the preloaded stream.
        let switched = try #require(events.first { $0.code == .switched }, "\(told)")
        #expect(switched.parameters["preloaded"] == .bool(true), "\(switched.parameters)")
        if case .double(let milliseconds)? = switched.parameters["switch_ms"] {
            print("playlist: the live item's first picture \(milliseconds) ms after the file's end")
            #expect(milliseconds < 300, "a preloaded switch: \(switched.parameters)")
        }
        #expect(Set(sink.pictures.map(\.width)) == [320], "pictures from the file and the live stream")
    }

    /// What is added, removed or replaced while an item plays changes what comes next.
    @Test func editsWhilePlayingChangeWhatComesNext() async throws {
        let folder = try Self.files(["a.flv", "b.flv", "c.flv", "d.flv"], of: .videoOnly)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let playlist = LivePlaylist([.init("\(folder)/a.flv"), .init("\(folder)/b.flv")])
        let (player, _, updates) = AdaptiveBitrateTests.player()
        async let outcome = player.run(playlist: playlist)
        _ = await eventually(within: .seconds(10)) { updates.events.contains { $0.event.code == .playBegin } }
        playlist.insert(.init("\(folder)/c.flv", title: "inserted"), after: 0)  // a, c, b
        playlist.replace(at: 2, with: .init("\(folder)/d.flv"))  // a, c, d
        playlist.remove(at: 0)  // c, d: a plays on
        #expect(playlist.currentIndex == nil, "the item playing was removed")
        let result = await outcome
        let urls = Self.items(updates).map { "\($0.parameters["url"] ?? .string(""))" }
        #expect(urls.map { ($0 as NSString).lastPathComponent } == ["a.flv", "c.flv", "d.flv"], "\(urls)")
        #expect(result == .ended)
        #expect(updates.events.filter { $0.event.code == .playEnd }.count == 3)
    }

    /// A looped playlist whose every item fails: one pass, then the run ends with the failure, not a loop of them.
    @Test func aPlaylistOfNothingPlayableEndsWithItsFailure() async throws {
        let folder = try Self.files([])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let playlist = LivePlaylist([.init("\(folder)/gone.flv"), .init("\(folder)/also-gone.flv")], loop: .playlist)
        let (player, _, updates) = AdaptiveBitrateTests.player()
        let result = await player.run(playlist: playlist)
        #expect(result != .ended && result != .stopped, "\(result)")
        #expect(Self.items(updates).count == 2, "one pass, not a loop of failures")
    }
}
