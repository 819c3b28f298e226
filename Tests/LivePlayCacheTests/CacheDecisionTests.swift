import LivePlayCache
import LivePlayTransport
import Testing

/// The cache's and the downloader's decisions, as values: keys, eviction order, which download runs next.
@Suite struct CacheDecisionTests {
    @Test func volatileParametersAreLeftOutOfTheKeyAndNothingIsInClear() {
        let keys = CacheKeys(volatileParameters: ["token", "Expires"])
        let a = keys.key(for: "http://CDN.example:8080/v/a.flv?token=abc&expires=1&quality=hd#t=3")
        let b = keys.key(for: "http://cdn.example:8080/v/a.flv?quality=hd&token=def&Expires=2")
        let c = keys.key(for: "http://cdn.example:8080/v/a.flv?quality=sd&token=abc")
        #expect(a == b, "another token for the same file is the same entry")
        #expect(a != c, "a parameter that is not volatile is part of the key")
        #expect(a.count == 64 && a.allSatisfy(\.isHexDigit), "SHA-256 in hex: \(a)")
        #expect(keys.canonical("http://h/a.flv?token=abc&b=2&a=1") == "http://h/a.flv?a=1&b=2")
    }

    @Test func theLeastRecentlyUsedIsEvictedFirstButNeverOneBeingWritten() {
        var index = CacheIndex()
        for name in ["a", "b", "c", "d"] { index.put(CacheEntry(key: name, url: name)) }
        index.touch("a")
        #expect(index.evictions(limit: 3, inUse: []) == ["b"])
        #expect(index.evictions(limit: 2, inUse: ["b"]) == ["c", "d"])
        #expect(index.evictions(limit: 4, inUse: []) == [])
    }

    @Test func atMostTheLimitRunAndTheOldestWaitingStartsFirst() throws {
        var queue = DownloadQueue(maximumRunning: 2)
        let ids = ["u1", "u2", "u3", "u4"].map { queue.add($0) }
        #expect(queue.add("u2") == ids[1], "a URL already queued is not queued twice")
        let first = queue.start()
        #expect(first.map(\.id) == [ids[0], ids[1]])
        #expect(queue.start().isEmpty, "both places are taken")
        let stopped = queue.pause(ids[0])
        #expect(stopped, "a running task is stopped when paused")
        let third = queue.start()
        #expect(third.map(\.id) == [ids[2]])
        queue.ended(ids[1], transfer: try #require(first[1].transfer), completed: true)
        queue.ended(ids[0], transfer: try #require(first[0].transfer), completed: false)
        #expect(queue[ids[0]]?.state == .paused, "a paused task that stops stays paused")
        let fourth = queue.start()
        #expect(fourth.map(\.id) == [ids[3]])
        queue.resume(ids[0])
        #expect(queue.start().isEmpty && queue[ids[0]]?.state == .waiting)
        let wasRunning = queue.cancel(ids[0])
        #expect(!wasRunning && queue[ids[0]]?.state == .cancelled)
        queue.ended(ids[2], transfer: try #require(third[0].transfer), completed: false)
        queue.ended(ids[3], transfer: try #require(fourth[0].transfer), completed: true)
        #expect(queue[ids[2]]?.state == .failed && queue.isIdle)
    }

    @Test func aDownloadResumedWhileItsTransferStopsStartsAgainOnlyOnceThatTransferHasEnded() throws {
        var queue = DownloadQueue()
        let id = queue.add("u")
        let paused = try #require(queue.start().first?.transfer)
        let stopped = queue.pause(id)
        #expect(stopped)
        queue.resume(id)
        #expect(queue.start().isEmpty, "one transfer at a time: the paused one is still stopping")
        #expect(!queue.isIdle, "a transfer still stopping keeps the run going")
        queue.ended(id, transfer: paused, completed: false)
        #expect(queue[id]?.state == .waiting, "its end leaves the resume alone")
        let next = try #require(queue.start().first?.transfer)
        #expect(next != paused)
        queue.ended(id, transfer: paused, completed: false)
        #expect(queue[id]?.state == .running && queue[id]?.transfer == next, "an old transfer's end changes nothing")
        let stoppedAgain = queue.pause(id)
        #expect(stoppedAgain, "so a pause still stops the running transfer")
    }

    @Test func aTransferThatCompletesAsItIsPausedLeavesTheDownloadCompleted() throws {
        var queue = DownloadQueue()
        let id = queue.add("u")
        let transfer = try #require(queue.start().first?.transfer)
        _ = queue.pause(id)
        queue.ended(id, transfer: transfer, completed: true)
        #expect(queue[id]?.state == .completed && queue.isIdle)
        queue.resume(id)
        #expect(queue.start().isEmpty, "nothing left to fetch")
    }

    @Test func aStrongTagValidatesARangeAWeakOneDoesNot() {
        #expect(RemoteFile(length: 1, entityTag: "\"x\"", lastModified: "Mon").validator == "\"x\"")
        #expect(RemoteFile(length: 1, entityTag: "W/\"x\"", lastModified: "Mon").validator == "Mon")
        #expect(RemoteFile(length: 1).validator == nil)
    }
}
