import Foundation
import LivePlayCache
import LivePlayLab
import LivePlayTesting
import LivePlayTransport
import Logging
import Testing

/// Downloads from nginx serving files (its own `Range`, `ETag` and `If-Range`), interrupted every way a download
/// is: paused, the connection lost, the process gone, the file changed on the server.
@Suite(.serialized) struct DownloaderTests {
    /// A directory of files nginx serves, and the cache beside it.
    struct Bench {
        let files: String
        let cacheDirectory: String
        let server: NginxRTMPServer

        init(rateLimit: Int? = nil) throws {
            let root = NSTemporaryDirectory() + "liveplay-download-\(UUID().uuidString.prefix(8))"
            files = root + "/files"
            cacheDirectory = root + "/cache"
            try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
            server = try NginxRTMPServer(staticFiles: files, rateLimit: rateLimit)
        }

        /// Writes `count` pseudo-random bytes (from `seed`) as file `name`, and returns its URL.
        func file(_ name: String, count: Int, seed: UInt64) throws -> String {
            try Data(Self.bytes(count, seed: seed)).write(to: URL(fileURLWithPath: "\(files)/\(name)"))
            return server.fileURL(name)
        }

        func cache(maximumEntries: Int = 50, minimumFreeSpace: Int64 = 0, volatile: Set<String> = []) throws -> MediaCache {
            try MediaCache(
                options: .init(
                    directory: cacheDirectory, maximumEntries: maximumEntries, minimumFreeSpace: minimumFreeSpace,
                    keys: CacheKeys(volatileParameters: volatile)))
        }

        static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
            var generator = SplitMix(seed: seed)
            return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        }

        /// `sha256sum` of a file: the real tool, not our own hash.
        static func sha256(_ path: String) throws -> String {
            String(try ExternalTool.check("sha256sum", [path]).text.prefix(64))
        }

        /// Requests nginx logged, one per line.
        var requests: [String] { server.accessLog.split(separator: "\n").map(String.init) }
    }

    /// Runs `downloader` until it is idle (or `timeout`), collecting its updates, while `script` acts on it;
    /// `onUpdate` acts on each update as the downloader hands it over, once it is collected.
    static func run(
        _ downloader: Downloader, untilIdle: Bool = true, timeout: Duration = .seconds(60),
        script: @escaping @Sendable (Locked<[DownloadUpdate]>) async -> Void = { _ in },
        onUpdate: @escaping @Sendable (DownloadUpdate) -> Void = { _ in }
    ) async throws -> [DownloadUpdate] {
        let updates = Locked<[DownloadUpdate]>([])
        // Past the deadline the run is cancelled and the test fails: the downloads did not finish.
        try await withDeadline(timeout) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await downloader.run(untilIdle: untilIdle) { update in
                        updates.withLock { $0.append(update) }
                        onUpdate(update)
                    }
                }
                group.addTask { await script(updates) }
                // Until idle: the run returns (the script too, or it is cut short). Otherwise: until the script is
                // done.
                try await group.next()
                if untilIdle { try await group.next() }
                group.cancelAll()
            }
        }
        return updates.get()
    }

    /// Waits until an update satisfies `condition` (one after the first `after`).
    static func wait(
        _ updates: Locked<[DownloadUpdate]>, after: Int = 0, timeout: Duration = .seconds(30),
        _ condition: (DownloadUpdate) -> Bool
    ) async -> Bool {
        await eventually(within: timeout) { updates.get().dropFirst(after).contains(where: condition) }
    }

    /// A new seed each run (printed), or `LIVEPLAY_DOWNLOAD_SEED` to run a failed one again.
    static let drawnSeed = ProcessInfo.processInfo.environment["LIVEPLAY_DOWNLOAD_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 1...UInt64.max)

    /// The drawn seed, and seeds that failed once. 17100425253903468963 pauses at 1450868, 1454091 and 1566320 bytes,
    /// the first two within one progress step (issue 28: its download never completed, and its second pause came
    /// before the download had started again).
    @Test(arguments: [drawnSeed, 17_100_425_253_903_468_963])
    func pausedAtRandomPointsAndResumedTheFileIsByteIdentical(seed: UInt64) async throws {
        let bench = try Bench(rateLimit: 2 << 20)
        let url = try bench.file("paused.flv", count: 3 << 20, seed: seed)
        let downloader = Downloader(cache: try bench.cache(), options: DownloadOptions(progressEvery: 32 << 10))
        let id = downloader.add(url)
        var generator = SplitMix(seed: seed)
        let stops = (0..<3).map { _ in Int64.random(in: 64 << 10..<(3 << 20) - (64 << 10), using: &generator) }.sorted()
        print("seed \(seed): pauses at \(stops)")
        // Resumed the moment it says paused, while its transfer is still ending.
        let resume: @Sendable (DownloadUpdate) -> Void = { if $0.kind == .paused { downloader.resume(id) } }
        let updates = try await Self.run(downloader, untilIdle: false, script: { updates in
            for stop in stops {
                // Past the stop in the transfer that runs now: progress from before the last pause may be past it
                // already, and a pause before the download has started again stops no transfer.
                let since = updates.get().lastIndex { $0.kind == .paused }.map { $0 + 1 } ?? 0
                _ = await Self.wait(updates, after: since) {
                    $0.kind == .progress && $0.bytes >= stop || $0.kind == .completed
                }
                downloader.pause(id)
                _ = await Self.wait(updates, after: since) { $0.kind == .paused || $0.kind == .completed }
            }
            _ = await Self.wait(updates) { $0.kind == .completed }
        }, onUpdate: resume)
        let completed = try #require(updates.first { $0.kind == .completed }, "\(updates.map(\.kind))")
        let path = try #require(completed.path)
        #expect(try Bench.sha256(path) == Bench.sha256("\(bench.files)/paused.flv"), "byte-identical")
        let paused = updates.filter { $0.kind == .paused }
        #expect(paused.count == 3, "\(updates.map(\.kind))")
        // Each resume asked for the rest, with the ETag nginx gave: `206 bytes=N- /paused.flv "…"`.
        let ranges = bench.requests.filter { $0.hasPrefix("206 bytes=") }
        #expect(ranges.count == 3, "\(bench.requests)")
        // nginx logs the ETag's quotes as \x22.
        #expect(ranges.allSatisfy { $0.hasSuffix("\\x22") }, "If-Range carries the ETag: \(ranges)")
        let resumedFrom = ranges.compactMap { Int64($0.dropFirst(10).prefix { $0 != "-" }) }
        #expect(zip(resumedFrom, paused.map(\.bytes)).allSatisfy { $0 == $1 }, "from what was held: \(resumedFrom)")
    }

    @Test func aLostConnectionIsResumedWithRange() async throws {
        let bench = try Bench(rateLimit: 2 << 20)
        let url = try bench.file("lost.flv", count: 3 << 20, seed: 7)
        var logger = Logger(label: "proxy")
        logger.logLevel = .critical
        let proxy = ImpairmentProxy(upstreamPort: Int(bench.server.port), logger: logger)
        let port = try await proxy.start()
        let proxied = url.replacingOccurrences(of: ":\(bench.server.port)/", with: ":\(port)/")
        // The retry waits ten minutes on the downloader's clock: a virtual one here, so the wait passes at once (on the
        // real clock the run would time out first), and the retry is still made, with Range.
        let downloader = Downloader(
            cache: try bench.cache(), options: DownloadOptions(retryInterval: .seconds(600), progressEvery: 64 << 10),
            clock: VirtualClock())
        downloader.add(proxied)
        let updates = try await Self.run(downloader) { updates in
            _ = await Self.wait(updates) { $0.kind == .progress && $0.bytes >= 1 << 20 }
            proxy.reset()
        }
        await proxy.stop()
        #expect(updates.contains { $0.kind == .retrying }, "\(updates.map(\.kind))")
        let path = try #require(updates.first { $0.kind == .completed }?.path, "\(updates.map(\.kind))")
        #expect(try Bench.sha256(path) == Bench.sha256("\(bench.files)/lost.flv"))
        #expect(bench.requests.filter { $0.hasPrefix("206 bytes=") }.count == 1, "\(bench.requests)")
    }

    @Test func aFileChangedOnTheServerStartsOverInsteadOfBeingSpliced() async throws {
        let bench = try Bench(rateLimit: 2 << 20)
        let url = try bench.file("changed.flv", count: 2 << 20, seed: 1)
        let downloader = Downloader(cache: try bench.cache(), options: DownloadOptions(progressEvery: 64 << 10))
        let id = downloader.add(url)
        let updates = try await Self.run(downloader, untilIdle: false) { updates in
            _ = await Self.wait(updates) { $0.kind == .progress && $0.bytes >= 512 << 10 }
            downloader.pause(id)
            _ = await Self.wait(updates) { $0.kind == .paused }
            // Another file under the same name: a different length, so nginx's ETag changes.
            _ = try? bench.file("changed.flv", count: (2 << 20) + 4096, seed: 2)
            downloader.resume(id)
            _ = await Self.wait(updates) { $0.kind == .completed }
        }
        #expect(updates.contains { $0.kind == .restarted }, "\(updates.map(\.kind))")
        let path = try #require(updates.first { $0.kind == .completed }?.path)
        #expect(try Bench.sha256(path) == Bench.sha256("\(bench.files)/changed.flv"), "the new file, whole")
        // The If-Range did not match: nginx answered 200 with the whole new file.
        #expect(bench.requests.last?.hasPrefix("200 bytes=") == true, "\(bench.requests)")
    }

    @Test(arguments: [1, 2])
    func atMostTheConcurrentLimitRunAtOnce(limit: Int) async throws {
        let bench = try Bench(rateLimit: 4 << 20)
        let urls = try (0..<4).map { try bench.file("c\($0).flv", count: 1 << 20, seed: UInt64($0 + 1)) }
        let downloader = Downloader(cache: try bench.cache(), options: DownloadOptions(maximumConcurrent: limit))
        for url in urls { downloader.add(url) }
        let updates = try await Self.run(downloader)
        var running = 0, most = 0
        for update in updates {
            if update.kind == .started { running += 1 }
            if update.kind == .completed || update.kind == .failed { running -= 1 }
            most = max(most, running)
        }
        #expect(updates.filter { $0.kind == .completed }.count == 4, "\(updates.map(\.kind))")
        #expect(most == limit, "at most \(limit) at once: \(most)")
    }

    @Test func belowTheFreeSpaceLimitADownloadFailsNamingTheCause() async throws {
        let bench = try Bench()
        let url = try bench.file("big.flv", count: 64 << 10, seed: 3)
        let free = try #require(DiskSpaceProbe.available(bench.cacheDirectory))
        let downloader = Downloader(cache: try bench.cache(minimumFreeSpace: free + (1 << 30)))
        downloader.add(url)
        let updates = try await Self.run(downloader)
        let failed = try #require(updates.first { $0.kind == .failed }, "\(updates.map(\.kind))")
        #expect(failed.error?.code == .notEnoughDiskSpace, "\(failed.error.map { "\($0)" } ?? "")")
        #expect(bench.requests.isEmpty, "checked before any request")
    }

    @Test func aDiskThatFillsFailsTheDownloadAndKeepsWhatFits() async throws {
        guard let disk = try SmallFileSystem.make(bytes: 256 << 10) else { return }
        defer { disk.unmount() }
        let bench = try Bench()
        let url = try bench.file("huge.flv", count: 1 << 20, seed: 4)
        let cache = try MediaCache(options: .init(directory: disk.directory + "/cache", minimumFreeSpace: 0))
        let downloader = Downloader(cache: cache)
        downloader.add(url)
        let updates = try await Self.run(downloader)
        let failed = try #require(updates.first { $0.kind == .failed }, "\(updates.map(\.kind))")
        #expect(failed.error?.code == .ioFailed && failed.error?.message.contains("writing") == true, "\(failed.error.map { "\($0)" } ?? "")")
        let entry = try #require(cache.entry(for: url))
        #expect(!entry.isComplete && cache.heldBytes(of: entry) > 0, "what fitted is kept for a resume")
    }

    @Test func theFiftyFirstEntryEvictsTheLeastRecentlyUsed() async throws {
        let bench = try Bench()
        let urls = try (0..<51).map { try bench.file("e\($0).flv", count: 1024 + $0, seed: UInt64($0 + 1)) }
        let cache = try bench.cache()
        let downloader = Downloader(cache: cache)
        for url in urls.prefix(50) { downloader.add(url) }
        _ = try await Self.run(downloader)
        #expect(cache.entries.count == 50)
        // The first is used again (played from the cache), so the second is now the least recently used.
        #expect(cache.completeFile(for: urls[0]) != nil)
        downloader.add(urls[50])
        _ = try await Self.run(downloader)
        #expect(cache.entries.count == 50)
        #expect(cache.entry(for: urls[0]) != nil, "used again: kept")
        #expect(cache.entry(for: urls[1]) == nil, "least recently used: evicted")
        #expect(!FileManager.default.fileExists(atPath: "\(bench.cacheDirectory)/\(CacheKeys().key(for: urls[1])).flv"))
        #expect(cache.entry(for: urls[50])?.isComplete == true)
    }

    @Test func signedURLsShareAnEntryAndTheIndexHoldsNoToken() async throws {
        let bench = try Bench()
        let url = try bench.file("signed.flv", count: 4096, seed: 5)
        let cache = try bench.cache(volatile: ["token"])
        let downloader = Downloader(cache: cache)
        downloader.add(url + "?token=s3cr3t-one&user=al1ce")
        _ = try await Self.run(downloader)
        #expect(cache.completeFile(for: url + "?user=al1ce&token=s3cr3t-two") != nil, "another token, the same entry")
        let index = try String(contentsOfFile: bench.cacheDirectory + "/index.json", encoding: .utf8)
        #expect(!index.contains("s3cr3t") && !index.contains("al1ce"), "\(index)")
        #expect(index.contains("token=***"))
    }

    @Test func twoCachesOnOneDirectoryLoseNoEntryAndNeverWriteTheSameOne() async throws {
        // Two processes' caches (a download and a playback): each change reads the index from disk under a lock.
        let bench = try Bench(rateLimit: 1 << 20)
        let slow = try bench.file("shared-slow.flv", count: 1 << 20, seed: 9)
        let quick = try bench.file("shared-quick.flv", count: 4096, seed: 10)
        let first = try bench.cache(), second = try bench.cache()
        let downloading = Downloader(cache: first, options: DownloadOptions(progressEvery: 64 << 10))
        downloading.add(slow)
        _ = try await Self.run(downloading) { updates in
            _ = await Self.wait(updates) { $0.kind == .progress }
            // The other cache cannot take the entry being written, nor delete it, but adds its own.
            let other = Downloader(cache: second)
            other.add(slow)
            other.add(quick)
            let theirs = try? await Self.run(other)
            #expect(theirs?.first { $0.url == slow }?.error?.code == .busy, "\(theirs?.map(\.kind) ?? [])")
            #expect(throws: CacheError.self) { try second.delete(slow) }
        }
        for cache in [first, second, try bench.cache()] {
            #expect(cache.entry(for: slow)?.isComplete == true && cache.entry(for: quick)?.isComplete == true,
                    "both entries, whichever instance asks: \(cache.entries.map(\.url))")
        }
    }

    @Test func cancelRemovesWhatWasHeldAndDeleteRemovesACompleteEntry() async throws {
        let bench = try Bench(rateLimit: 1 << 20)
        let slow = try bench.file("slow.flv", count: 2 << 20, seed: 6)
        let small = try bench.file("small.flv", count: 8192, seed: 8)
        let cache = try bench.cache()
        let downloader = Downloader(cache: cache, options: DownloadOptions(maximumConcurrent: 2, progressEvery: 64 << 10))
        let slowID = downloader.add(slow)
        let smallID = downloader.add(small)
        let updates = try await Self.run(downloader) { updates in
            _ = await Self.wait(updates) { $0.kind == .progress && $0.id == slowID }
            downloader.cancel(slowID)
        }
        #expect(updates.contains { $0.kind == .cancelled && $0.id == slowID }, "\(updates.map(\.kind))")
        #expect(cache.entry(for: slow) == nil, "a cancelled download leaves nothing")
        #expect(cache.entry(for: small)?.isComplete == true)
        downloader.delete(smallID)
        #expect(cache.entry(for: small) == nil && cache.entries.isEmpty)
    }
}

/// Free space where a directory is, as `statvfs` says (the tests' own reading, to set a limit above it).
enum DiskSpaceProbe {
    static func available(_ directory: String) -> Int64? {
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let attributes = try? FileManager.default.attributesOfFileSystem(forPath: directory)
        return (attributes?[.systemFreeSize] as? NSNumber)?.int64Value
    }
}
