import Foundation
import LivePlayFuzzing
import LivePlayManifest
import Testing

/// Extended M3U as players write it (VLC's and mpv's playlists, IPTV lists): titles from `#EXTINF`, entries resolved
/// against the playlist's own address, and what is not a playlist of playable media refused with a sentence.
struct M3UPlaylistTests {
    static func parse(_ text: String, base: String = "/srv/media/list.m3u") throws(M3UPlaylistError) -> M3UPlaylist {
        try M3UPlaylist(parsing: Array(text.utf8), base: base)
    }

    @Test func anExtendedPlaylistHasItsTitlesAndResolvesItsEntries() throws {
        let playlist = try Self.parse(
            """
            #EXTM3U
            #EXTINF:12.5,The first file
            clips/one.flv
            # a comment
            #EXTINF:-1 tvg-logo="logo.png",Live, with a comma
            http://127.0.0.1:8080/live.flv?token=s
            ../other/two.flv
            file:///srv/three.flv

            rtmp://127.0.0.1/live/s
            """)
        #expect(playlist.entries.map(\.url) == [
            "/srv/media/clips/one.flv", "http://127.0.0.1:8080/live.flv?token=s", "/srv/other/two.flv", "/srv/three.flv",
            "rtmp://127.0.0.1/live/s",
        ])
        #expect(playlist.entries.map(\.title) == ["The first file", "Live, with a comma", nil, nil, nil])
        #expect(playlist.entries[0].duration == .milliseconds(12_500) && playlist.entries[1].duration == nil)
    }

    /// Posters for a window to show while an entry plays without video: `#EXTIMG` before it or `tvg-logo`, resolved
    /// as entries are; one that is not a picture's address is left out and the entry still plays.
    @Test func anEntrysPosterComesFromEXTIMGOrTvgLogo() throws {
        let local = try Self.parse(
            """
            #EXTM3U
            #EXTIMG:covers/one.png
            #EXTINF:-1,One
            one.flv
            #EXTINF:-1 tvg-id="x" tvg-logo="https://127.0.0.1/two.jpg?token=s",Two
            two.flv
            three.flv
            #EXTIMG:rtmp://127.0.0.1/live/not-a-picture
            four.flv
            """)
        #expect(local.entries.map(\.poster) == ["/srv/media/covers/one.png", "https://127.0.0.1/two.jpg?token=s", nil, nil])
        #expect(local.entries.map(\.title) == ["One", "Two", nil, nil])
        // From the network, a local file is no poster either.
        let remote = try Self.parse(
            "#EXTIMG:file:///etc/passwd\na.flv\n#EXTIMG:c.png\nb.flv\n", base: "http://127.0.0.1:9000/lists/feed.m3u")
        #expect(remote.entries.map(\.poster) == [nil, "http://127.0.0.1:9000/lists/c.png"])
    }

    @Test func aRemotePlaylistsEntriesResolveAgainstItsURL() throws {
        let playlist = try Self.parse("a.flv\r\n/b/c.flv\r\n//cdn.example/d.flv\r\nhttps://e.example/f.flv\r\n",
            base: "http://127.0.0.1:9000/lists/feed.m3u?token=x")
        #expect(playlist.entries.map(\.url) == [
            "http://127.0.0.1:9000/lists/a.flv", "http://127.0.0.1:9000/b/c.flv", "http://cdn.example/d.flv",
            "https://e.example/f.flv",
        ])
    }

    @Test(arguments: [
        ("\u{0}\u{1}binary\u{FF}", "it is not text"),
        ("#EXTM3U\n", "it has no entry to play"),
        ("#EXTM3U\nlist.m3u\n", "a playlist inside a playlist is not played"),
        ("http://127.0.0.1/other.M3U?x=1\n", "a playlist inside a playlist is not played"),
        ("javascript:alert(1)\n", "is a javascript: URL"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:6\nseg0.ts\n", "liveplay plays FLV, not HLS"),
        ("a\u{7}b.flv\n", "a control character"),
    ])
    func whatIsNotAPlaylistOfMediaIsRefusedWithASentence(text: String, says: String) {
        #expect {
            try Self.parse(text)
        } throws: { error in
            (error as? M3UPlaylistError)?.message.contains(says) == true
        }
    }

    @Test func aPlaylistFromTheNetworkMayNotNameLocalFiles() {
        for entry in ["file:///etc/passwd", "file:/etc/passwd"] {
            #expect(throws: M3UPlaylistError("line 1 names a local file, which a playlist from the network may not")) {
                try Self.parse(entry + "\n", base: "https://127.0.0.1/feed.m3u")
            }
        }
        // A path in a remote playlist is a path on its server.
        #expect((try? Self.parse("/etc/passwd\n", base: "https://127.0.0.1/feed.m3u"))?.entries.first?.url
            == "https://127.0.0.1/etc/passwd")
    }

    @Test func aHugePlaylistIsBounded() {
        let lines = String(repeating: "a.flv\n", count: 100_000)
        #expect(throws: M3UPlaylistError("it has more than 10000 entries")) { try Self.parse(lines) }
        let body = [UInt8](repeating: 0x23, count: M3UPlaylist.maximumSize + 1)
        #expect(throws: M3UPlaylistError("it is larger than 2 MiB: not a playlist")) {
            try M3UPlaylist(parsing: body, base: "/x.m3u")
        }
    }

    @Test func namesAreM3UNotHLS() {
        #expect(M3UPlaylist.names("/a/list.m3u") && M3UPlaylist.names("http://h/LIST.M3U?token=1"))
        #expect(!M3UPlaylist.names("http://h/index.m3u8") && !M3UPlaylist.names("/a/m3u.flv"))
        #expect(!M3UPlaylist.names("http://h/live#part.m3u"), "a fragment is not the path")
    }

    @Test func theFuzzTargetHoldsOnWhatItIsGiven() {
        #expect(FuzzTargets.m3uPlaylist(Array("#EXTM3U\n#EXTINF:1,x\na.flv\nhttp://h/b.flv\n".utf8)) == nil)
        #expect(FuzzTargets.m3uPlaylist([0xFF, 0xFE, 0x00]) == nil)
    }
}
