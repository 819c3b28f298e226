import Foundation
import LivePlayMonitor
import Testing

/// The monitor's decisions as values: the list, the shards, what a reload changes.
@Suite struct MonitorDecisionTests {
    @Test func aListHasIDsURLsAndOptionsAndSaysWhereItIsWrong() throws {
        let streams = try StreamList.parse("""
            # the CDN's streams
            news   http://127.0.0.1:8080/live/news.flv?token=s3cret
            sport  rtmp://127.0.0.1/live/sport   --mode speed   # low latency

            """)
        #expect(streams == [
            MonitoredStream(id: "news", url: "http://127.0.0.1:8080/live/news.flv?token=s3cret"),
            MonitoredStream(id: "sport", url: "rtmp://127.0.0.1/live/sport", options: ["--mode", "speed"]),
        ])
        #expect(throws: StreamList.ParseError(line: 2, message: "the ID news is already used")) {
            try StreamList.parse("news http://h/a.flv\nnews http://h/b.flv")
        }
        #expect(throws: StreamList.ParseError.self) { try StreamList.parse("lonely") }
        #expect(throws: StreamList.ParseError.self) { try StreamList.parse("bad/id http://h/a.flv") }
        #expect(throws: StreamList.ParseError.self) { try StreamList.parse("id ftp://h/a.flv") }
        #expect(StreamList.derivedID(for: "http://cdn.example:8080/live/a.flv?token=s3cret") == "cdn.example-8080-live-a.flv")
    }

    /// A line `play` would refuse is refused when the list is loaded, with `play`'s reason and the line's number,
    /// as a duplicate ID is: a stream that can never play is a typo to fix now, not a stream down forever.
    @Test func aLineThatPlayWouldRefuseIsRefusedAtLoadWithPlaysReason() throws {
        #expect(throws: StreamList.ParseError(
            line: 2, message: "cam: the port '70000' in the URL is not a number from 1 to 65535")
        ) {
            try StreamList.parse("news http://h/a.flv\ncam http://h:70000/live.flv")
        }
        #expect(throws: StreamList.ParseError(line: 1, message: "old: no such file: /nonexistent/old.flv")) {
            try StreamList.parse("old /nonexistent/old.flv")
        }
        #expect(throws: StreamList.ParseError(line: 1, message: "cam: no such file: 127.0.0.1:1935/live/cam")) {
            try StreamList.parse("cam 127.0.0.1:1935/live/cam   # the scheme left out")
        }
        let directory = NSTemporaryDirectory()
        #expect(throws: StreamList.ParseError(line: 1, message: "d: \(directory) is a directory, not an FLV file")) {
            try StreamList.parse("d \(directory)")
        }
        let ftp = #expect(throws: StreamList.ParseError.self) { try StreamList.parse("f ftp://h/a.flv") }
        #expect(ftp?.message.hasPrefix("f: ftp:// URLs are not supported") == true, "\(String(describing: ftp))")
        // A file that is there is a stream like any other.
        let file = directory + "liveplay-list-\(UUID().uuidString.prefix(8)).flv"
        try Data().write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(try StreamList.parse("f \(file)\ng file://\(file)").map(\.id) == ["f", "g"])
    }

    @Test func shardsSplitAListWithNoOverlapNoGapAndMoveLittleWhenOneIsAdded() {
        let ids = (0..<3000).map { "stream-\($0)" }
        for count in [1, 2, 3, 7] {
            let owners = ids.map { id in (0..<count).filter { Shard(index: $0, count: count)!.owns(id) } }
            #expect(owners.allSatisfy { $0.count == 1 }, "each stream in exactly one of \(count) shards")
            let sizes = (0..<count).map { shard in owners.filter { $0 == [shard] }.count }
            #expect(sizes.allSatisfy { abs($0 - ids.count / count) < ids.count / count / 5 }, "balanced: \(sizes)")
        }
        // 3 → 4 replicas: only streams the new shard wins move, about a quarter; none between the old three.
        let moved = ids.filter { Shard.owner(of: $0, among: 3) != Shard.owner(of: $0, among: 4) }
        #expect(moved.allSatisfy { Shard.owner(of: $0, among: 4) == 3 })
        #expect(abs(moved.count - ids.count / 4) < ids.count / 20, "\(moved.count) of \(ids.count) moved")
        #expect(Shard(parsing: "2/3") == Shard(index: 2, count: 3))
        #expect(Shard(parsing: "3/3") == nil && Shard(parsing: "1") == nil && Shard(parsing: "-1/2") == nil)
    }

    @Test func theHashIsTheDocumentedOneOnEveryMachine() {
        // FNV-1a 64 of "news\0" + "0", then SplitMix64's finalizer: fixed values, so replicas built anywhere agree.
        // The expected owners come from a separate implementation of the same hash (Python, in docs/monitoring.md).
        let owners = ["news", "sport", "music", "weather", "kids"].map { Shard.owner(of: $0, among: 3) }
        #expect(owners == [0, 0, 2, 0, 1], "\(owners)")
    }

    @Test func aReloadStartsStopsAndRestartsOnlyWhatChanged() {
        let a = MonitoredStream(id: "a", url: "http://h/a.flv")
        let b = MonitoredStream(id: "b", url: "http://h/b.flv")
        let c = MonitoredStream(id: "c", url: "http://h/c.flv")
        let b2 = MonitoredStream(id: "b", url: "http://h/b.flv", options: ["--decode"])
        let d = MonitoredStream(id: "d", url: "http://h/d.flv")
        let plan = MonitorPlan(from: [a, b, c], to: [a, b2, d])
        #expect(plan.start == [d] && plan.stop == ["c"] && plan.restart == [b2])
        #expect(MonitorPlan(from: [a, b], to: [b, a]).isEmpty)
    }

    /// A thousand streams starting together start at the rate asked, the first at once; zero starts them all at once.
    @Test func streamsStartingTogetherAreSpreadOverTime() {
        let options = MonitorOptions(startsPerSecond: 100)
        #expect(options.startDelay(0) == .zero)
        #expect(options.startDelay(1) == .milliseconds(10))
        #expect(options.startDelay(999) == .milliseconds(9990))
        #expect(MonitorOptions(startsPerSecond: 0).startDelay(999) == .zero)
    }

    /// A probe's loop turns every 50 ms when nothing arrives; a stream whose line says `--decode` keeps the player's
    /// longest wait (100 ms), turning sooner as its pictures fall due.
    @Test func probesTickSlowerThanStreamsThatDecode() {
        let options = MonitorOptions()
        let probe = options.configuration(for: MonitoredStream(id: "a", url: "http://h/a.flv"))
        let decoded = options.configuration(for: MonitoredStream(id: "b", url: "http://h/b.flv", options: ["--decode"]))
        #expect(!probe.decodes && probe.tickInterval == .milliseconds(50))
        #expect(decoded.decodes && decoded.tickInterval == .milliseconds(100))
    }
}
