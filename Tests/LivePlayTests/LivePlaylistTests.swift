import Testing

@testable import LivePlay

/// The playlist's own rules, without playing: what follows an item under each loop, how edits while an item plays
/// move what comes next, and when reach-last is told.
struct LivePlaylistTests {
    static func playlist(_ count: Int, loop: LivePlaylist.Loop = .none, reachLast: Int = 1) -> LivePlaylist {
        LivePlaylist((0..<count).map { LivePlaylist.Item("http://127.0.0.1/\($0).flv") }, loop: loop, reachLastCount: reachLast)
    }

    @Test func eachLoopLeadsWhereMPVsDoes() {
        let none = Self.playlist(2)
        _ = none.begin(1)
        #expect(none.following() == nil, "the end of the list")
        let file = Self.playlist(2, loop: .file)
        _ = file.begin(1)
        #expect(file.following() == 1 && file.following(failed: true) == nil, "the item again, unless it failed")
        let list = Self.playlist(2, loop: .playlist)
        _ = list.begin(1)
        #expect(list.following() == 0 && list.passes == 1)
        #expect(list.following(by: -1) == 0 && list.following(by: 1) == 0, "moves wrap around (from item 1 of 2)")
    }

    @Test func editsWhileAnItemPlaysMoveWhatComesNext() {
        let playlist = Self.playlist(3)
        _ = playlist.begin(1)
        playlist.insert(.init("http://127.0.0.1/new.flv"), after: 0)  // 0 new 1 2: the current is index 2 now
        #expect(playlist.currentIndex == 2 && playlist.following() == 3)
        playlist.remove(at: 2)  // the item playing: 0 new 2
        #expect(playlist.currentIndex == nil)
        #expect(playlist.following() == 2 && playlist.item(at: 2)?.url == "http://127.0.0.1/2.flv", "the one in its place")
        #expect(playlist.following(by: 1) == 2, "next: the one in its place")
        playlist.replace(at: 2, with: .init("http://127.0.0.1/replaced.flv"))
        #expect(playlist.item(at: 2)?.url == "http://127.0.0.1/replaced.flv")
    }

    @Test func reachLastIsToldOncePerPassAndAgainAfterAnAppend() {
        let playlist = Self.playlist(3, loop: .playlist, reachLast: 2)
        #expect(playlist.begin(0)?.reachLast == nil)
        #expect(playlist.begin(1)?.reachLast == LivePlaylist.ReachLast(index: 1, count: 3, pass: 0))
        #expect(playlist.begin(2)?.reachLast == nil, "once a pass")
        playlist.append(.init("http://127.0.0.1/3.flv"))
        #expect(playlist.begin(3)?.reachLast == LivePlaylist.ReachLast(index: 3, count: 4, pass: 0), "what was appended")
        #expect(playlist.following() == 0)
        #expect(playlist.begin(2)?.reachLast == LivePlaylist.ReachLast(index: 2, count: 4, pass: 1), "the next pass")
    }
}
