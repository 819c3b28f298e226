import Foundation
import LivePlay
import Testing

/// Where media on demand was left: kept by a key without the query (no token on disk, none to change the key),
/// bounded, replaced whole so that a crash leaves a file that reads.
struct ResumePositionsTests {
    static func store(capacity: Int = 500) -> ResumePositions {
        ResumePositions(path: NSTemporaryDirectory() + "liveplay-positions-\(UUID().uuidString)/positions", capacity: capacity)
    }

    @Test func aURLsKeyLeavesOutItsQueryFragmentAndUser() {
        #expect(ResumePositions.key(for: "https://me:pw@CDN.example:8443/v/a.flv?token=s3cr3t&t=1#x")
            == "https://cdn.example:8443/v/a.flv")
        #expect(ResumePositions.key(for: "file:///tmp/a/../b.flv") == "/tmp/b.flv")
        #expect(ResumePositions.key(for: "/tmp/./c.flv") == "/tmp/c.flv")
    }

    @Test func aPositionIsKeptReplacedAndForgotten() throws {
        let store = Self.store()
        #expect(store.position(for: "http://h/a.flv") == nil)
        try store.remember(.seconds(12), for: "http://h/a.flv?token=1")
        #expect(store.position(for: "http://h/a.flv?token=2") == .seconds(12), "another token, the same media")
        try store.remember(.milliseconds(30_500), for: "http://h/a.flv")
        #expect(store.position(for: "http://h/a.flv") == .milliseconds(30_500))
        let text = try String(contentsOfFile: store.path, encoding: .utf8)
        #expect(text == "http://h/a.flv\t30500\n", "one entry, and no token in it")
        try store.forget("http://h/a.flv")
        #expect(store.position(for: "http://h/a.flv") == nil)
    }

    @Test func theFileIsBoundedTheOldestForgottenFirst() throws {
        let store = Self.store(capacity: 3)
        for index in 1...5 { try store.remember(.seconds(Int64(index)), for: "/m/\(index).flv") }
        try store.remember(.seconds(30), for: "/m/3.flv")
        #expect((1...2).allSatisfy { store.position(for: "/m/\($0).flv") == nil })
        #expect(store.position(for: "/m/3.flv") == .seconds(30) && store.position(for: "/m/5.flv") == .seconds(5))
        let lines = try String(contentsOfFile: store.path, encoding: .utf8).split(separator: "\n")
        #expect(lines == ["/m/4.flv\t4000", "/m/5.flv\t5000", "/m/3.flv\t30000"], "the newest last")
    }

    /// What a crash can leave: a half-written line at the end (an editor's, another program's), a temporary file
    /// beside it that was never renamed; neither stops the file from reading or from being written again.
    @Test func whatACrashLeavesIsSkipped() throws {
        let store = Self.store()
        try store.remember(.seconds(7), for: "/m/a.flv")
        let handle = try #require(FileHandle(forWritingAtPath: store.path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("/m/b.flv\t12".utf8) + Data([0xFF, 0x00]) + Data("\n/m/c.flv".utf8))
        try handle.close()
        #expect(FileManager.default.createFile(atPath: store.path + ".999999.new", contents: Data("/m/a.flv\t1".utf8)))
        #expect(store.position(for: "/m/a.flv") == .seconds(7))
        #expect(store.position(for: "/m/b.flv") == nil && store.position(for: "/m/c.flv") == nil)
        try store.remember(.seconds(9), for: "/m/d.flv")
        #expect(try String(contentsOfFile: store.path, encoding: .utf8) == "/m/a.flv\t7000\n/m/d.flv\t9000\n")
        #expect(ResumePositions.key(for: "/m/x\ty.flv").contains("\t"))
        try store.remember(.seconds(3), for: "/m/x\ty.flv")
        #expect(store.position(for: "/m/x\ty.flv") == nil, "a key that would not read back is not kept")
    }
}
