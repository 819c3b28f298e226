import Foundation
import Synchronization
import LivePlayCore
#if canImport(Glibc)
import Glibc
#endif
import LivePlayRecording
import LivePlayTransport

/// A directory of cached files and their index (docs/cache.md):
///
/// ```
/// DIRECTORY/index.json   the entries: key, redacted URL, length, validators, complete, use order
/// DIRECTORY/KEY.flv      an entry's bytes: the file from its first byte, whole or as far as it got
/// ```
///
/// At most ``Options/maximumEntries`` entries; adding one past that evicts the least recently used (never one
/// being written). Files are written only while the file system keeps ``Options/minimumFreeSpace`` free.
/// An entry's bytes are always a prefix of the file: a writer appends, and the index records the length and
/// validators that let the rest be fetched with `Range` and `If-Range`.
///
/// Several processes may share a directory (a `liveplay download` and a playback): every change reads the index from
/// disk, changes it and writes it back under an exclusive `flock` on `index.lock`, and a writer holds a `flock` on its
/// entry's `KEY.lock` while it writes, so no process evicts, deletes or writes an entry another is writing.
public final class MediaCache: Sendable {
    public struct Options: Sendable, Hashable {
        public var directory: String
        /// Volcengine's limit of 50 videos.
        public var maximumEntries: Int
        /// Below this much free space nothing more is written (1 GiB).
        public var minimumFreeSpace: Int64
        public var keys: CacheKeys

        public init(
            directory: String, maximumEntries: Int = 50, minimumFreeSpace: Int64 = 1 << 30, keys: CacheKeys = CacheKeys()
        ) {
            self.directory = directory
            self.maximumEntries = maximumEntries
            self.minimumFreeSpace = minimumFreeSpace
            self.keys = keys
        }

        /// `$XDG_CACHE_HOME/liveplay`, or `~/.cache/liveplay`.
        public static var defaultDirectory: String {
            let environment = ProcessInfo.processInfo.environment
            if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") { return base + "/liveplay" }
            return (environment["HOME"] ?? NSTemporaryDirectory()) + "/.cache/liveplay"
        }
    }

    public let options: Options
    /// This process's threads take turns at the index (other processes are kept out by `index.lock`).
    private let turn = Mutex(())

    /// Opens (or creates) the cache in `options.directory`. An index that cannot be read starts empty, and
    /// data files it does not name (and nobody writes) are removed.
    public init(options: Options) throws(CacheError) {
        self.options = options
        do {
            try FileManager.default.createDirectory(atPath: options.directory, withIntermediateDirectories: true)
        } catch {
            throw CacheError(
                .ioFailed, "cannot create the cache directory \(options.directory): \(CacheError.reason(error))")
        }
        try transaction { index in
            let files = (try? FileManager.default.contentsOfDirectory(atPath: options.directory)) ?? []
            for file in files where file.hasSuffix(".flv") && index[String(file.dropLast(4))] == nil {
                let key = String(file.dropLast(4))
                guard let claim = EntryClaim(path: lockPath(key)) else { continue }
                try? FileManager.default.removeItem(atPath: dataPath(key))
                claim.release(removing: true)
            }
        }
    }

    /// The entry a URL maps to, if any (its ``CacheEntry/isComplete`` says whether it plays without the network).
    public func entry(for url: String) -> CacheEntry? {
        let key = options.keys.key(for: url)
        return (try? transaction { $0[key] }) ?? nil
    }

    /// Every entry, the most recently used first.
    public var entries: [CacheEntry] {
        (try? transaction { $0.entries.values.sorted { $0.lastUse > $1.lastUse } }) ?? []
    }

    /// Where an entry's bytes are.
    public func dataPath(of entry: CacheEntry) -> String { dataPath(entry.key) }

    /// Bytes held for an entry: the length of its data file.
    public func heldBytes(of entry: CacheEntry) -> Int64 { fileSize(dataPath(entry.key)) }

    /// Removes a URL's entry and its bytes (unless it is being written: `busy`). `false` if there was none.
    @discardableResult
    public func delete(_ url: String) throws(CacheError) -> Bool {
        let key = options.keys.key(for: url)
        return try transaction { index throws(CacheError) -> Bool in
            guard index[key] != nil else { return false }
            guard let claim = EntryClaim(path: lockPath(key)) else {
                throw CacheError(.busy, "\(Redaction.url(url)) is being written")
            }
            index.remove(key)
            try? FileManager.default.removeItem(atPath: dataPath(key))
            claim.release(removing: true)
            return true
        }
    }

    /// A complete entry's data file, marked used: what a playback reads instead of the network.
    public func completeFile(for url: String) -> String? {
        let key = options.keys.key(for: url)
        return (try? transaction { index -> String? in
            guard let entry = index[key], entry.isComplete, let length = entry.length,
                fileSize(dataPath(key)) == length
            else { return nil }
            index.touch(key)
            return dataPath(key)
        }) ?? nil
    }

    /// Takes the right to write a URL's entry, or `nil` when someone else is writing it. Released by the writer's
    /// ``CacheWriter/close()``. A new entry is not in the index until a response describes a file
    /// (``describe(_:as:)``), so a live stream leaves none.
    func writer(for url: String) throws(CacheError) -> CacheWriter? {
        let key = options.keys.key(for: url)
        let claimed = try transaction { index -> (CacheEntry, EntryClaim)? in
            guard let claim = EntryClaim(path: lockPath(key)) else { return nil }
            index.touch(key)
            return (index[key] ?? CacheEntry(key: key, url: Redaction.url(url)), claim)
        }
        guard let (entry, claim) = claimed else { return nil }
        return CacheWriter(cache: self, entry: entry, path: dataPath(key), claim: claim)
    }

    /// Records that a response describes `entry`'s file: its length and validators, not complete yet. A new entry
    /// is added now, evicting the least recently used past the limit.
    func describe(_ entry: CacheEntry, as file: RemoteFile) throws(CacheError) {
        try transaction { index in
            if index[entry.key] == nil { index.put(entry) }
            index.update(entry.key) {
                ($0.length, $0.entityTag, $0.lastModified, $0.isComplete) =
                    (file.length, file.entityTag, file.lastModified, false)
            }
            // The least recently used go first; one that another writer holds stays (the cache is over its limit
            // until that writer is done).
            var inUse: Set<String> = [entry.key]
            while let evicted = index.evictions(limit: options.maximumEntries, inUse: inUse).first {
                guard let other = EntryClaim(path: lockPath(evicted)) else {
                    inUse.insert(evicted)
                    continue
                }
                index.remove(evicted)
                try? FileManager.default.removeItem(atPath: dataPath(evicted))
                other.release(removing: true)
            }
        }
    }

    func update(_ key: String, _ change: (inout CacheEntry) -> Void) throws(CacheError) {
        try transaction { $0.update(key, change) }
    }

    /// Gives up the right to write an entry that no response described: its lock file goes too when the index
    /// has no such entry, so nothing of it is left in the directory. Done under the index's lock, under which every
    /// claim is taken, so no other process is opening the lock file as it goes.
    func release(_ claim: EntryClaim, ofUndescribed key: String) {
        _ = try? transaction { index in claim.release(removing: index[key] == nil) }
    }

    /// Free space below the limit is an error naming both figures (the cache then keeps nothing new).
    public func checkFreeSpace() throws(CacheError) {
        guard let free = DiskSpace.available(forFileAt: options.directory + "/index.json"),
            free < options.minimumFreeSpace
        else { return }
        throw CacheError(
            .notEnoughDiskSpace,
            "not enough disk space: \(free >> 20) MiB free, the limit is \(options.minimumFreeSpace >> 20) MiB")
    }

    /// Runs `body` on the index as it is on disk now, in this process's turn (`turn`) and under an exclusive `flock`
    /// on `index.lock` (other processes), and writes the index back if `body` changed it.
    private func transaction<T>(_ body: (inout CacheIndex) throws(CacheError) -> T) throws(CacheError) -> T {
        var outcome: Result<T, CacheError>?
        turn.withLock { _ in
            do throws(CacheError) {
                outcome = .success(try transactionInTurn(body))
            } catch {
                outcome = .failure(error)
            }
        }
        // `withLock` ran the closure before returning.
        return try outcome!.get()
    }

    private func transactionInTurn<T>(_ body: (inout CacheIndex) throws(CacheError) -> T) throws(CacheError) -> T {
        let descriptor = open(options.directory + "/index.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CacheError(.ioFailed, "cannot open \(options.directory)/index.lock") }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { throw CacheError(.ioFailed, "cannot lock the cache index") }
        let data = FileManager.default.contents(atPath: options.directory + "/index.json")
        let stored = data.flatMap { try? JSONDecoder().decode(CacheIndex.self, from: $0) }
        var index = stored.flatMap { $0.version == CacheIndex.currentVersion ? $0 : nil } ?? CacheIndex()
        let before = index
        let result = try body(&index)
        if index != before || stored == nil { try save(index) }
        return result
    }

    private func lockPath(_ key: String) -> String { "\(options.directory)/\(key).lock" }

    private func dataPath(_ key: String) -> String { "\(options.directory)/\(key).flv" }

    /// Written whole to a temporary file and renamed over the old, so a crash leaves one index or the other.
    private func save(_ index: CacheIndex) throws(CacheError) {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(index).write(to: URL(fileURLWithPath: options.directory + "/index.json"), options: .atomic)
        } catch {
            throw CacheError(
                .ioFailed, "cannot write the cache index in \(options.directory): \(CacheError.reason(error))")
        }
    }
}

func fileSize(_ path: String) -> Int64 {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0
}

/// The right to write one entry, across processes: an exclusive, non-blocking `flock` on the entry's lock file,
/// held until released (or the process ends: the kernel drops it).
final class EntryClaim {
    private var descriptor: Int32
    private let path: String

    /// `nil` when another writer (this process or another) holds the entry.
    init?(path: String) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        release()
    }

    /// Gives the entry up; with `removing`, its lock file goes too (the entry is gone).
    func release(removing: Bool = false) {
        guard descriptor >= 0 else { return }
        if removing { unlink(path) }
        close(descriptor)
        descriptor = -1
    }
}
