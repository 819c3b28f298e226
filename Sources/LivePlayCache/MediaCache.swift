import Foundation
import LivePlayCore
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
/// `@unchecked Sendable`: the index and the set of entries being written are read and written under `lock`.
public final class MediaCache: @unchecked Sendable {
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
    private let lock = NSLock()
    private var index: CacheIndex
    private var writing: Set<String> = []

    /// Opens (or creates) the cache in `options.directory`. An index that cannot be read starts empty, and
    /// data files it does not name are removed.
    public init(options: Options) throws(CacheError) {
        self.options = options
        do {
            try FileManager.default.createDirectory(atPath: options.directory, withIntermediateDirectories: true)
        } catch {
            throw CacheError(.ioFailed, "cannot create the cache directory \(options.directory): \(error)")
        }
        let data = FileManager.default.contents(atPath: options.directory + "/index.json")
        index = data.flatMap { try? JSONDecoder().decode(CacheIndex.self, from: $0) } ?? CacheIndex()
        if index.version != CacheIndex.currentVersion { index = CacheIndex() }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: options.directory)) ?? []
        for file in files where file.hasSuffix(".flv") && index[String(file.dropLast(4))] == nil {
            try? FileManager.default.removeItem(atPath: options.directory + "/" + file)
        }
    }

    /// The entry a URL maps to, if any (its ``CacheEntry/isComplete`` says whether it plays without the network).
    public func entry(for url: String) -> CacheEntry? {
        lock.withLock { index[options.keys.key(for: url)] }
    }

    /// Every entry, the most recently used first.
    public var entries: [CacheEntry] {
        lock.withLock { index.entries.values.sorted { $0.lastUse > $1.lastUse } }
    }

    /// Where an entry's bytes are.
    public func dataPath(of entry: CacheEntry) -> String { dataPath(entry.key) }

    /// Bytes held for an entry: the length of its data file.
    public func heldBytes(of entry: CacheEntry) -> Int64 { fileSize(dataPath(entry.key)) }

    /// Removes a URL's entry and its bytes (unless it is being written: `busy`). `false` if there was none.
    @discardableResult
    public func delete(_ url: String) throws(CacheError) -> Bool {
        let key = options.keys.key(for: url)
        return try locked { () throws(CacheError) -> Bool in
            guard !writing.contains(key) else { throw CacheError(.busy, "\(Redaction.url(url)) is being written") }
            guard index.remove(key) != nil else { return false }
            try? FileManager.default.removeItem(atPath: dataPath(key))
            try saveIndex()
            return true
        }
    }

    /// A complete entry's data file, marked used: what a playback reads instead of the network.
    public func completeFile(for url: String) -> String? {
        let key = options.keys.key(for: url)
        return lock.withLock {
            guard let entry = index[key], entry.isComplete, let length = entry.length,
                fileSize(dataPath(key)) == length
            else { return nil }
            index.touch(key)
            try? saveIndex()
            return dataPath(key)
        }
    }

    /// Takes the right to write a URL's entry (created if new, evicting the least recently used past the
    /// limit), or `nil` when someone else is writing it. Released by the writer's ``CacheWriter/close()``.
    func writer(for url: String) throws(CacheError) -> CacheWriter? {
        let key = options.keys.key(for: url)
        let entry = try locked { () throws(CacheError) -> CacheEntry? in
            guard writing.insert(key).inserted else { return nil }
            if index[key] == nil {
                index.put(CacheEntry(key: key, url: Redaction.url(url)))
            } else {
                index.touch(key)
            }
            for evicted in index.evictions(limit: options.maximumEntries, inUse: writing) {
                index.remove(evicted)
                try? FileManager.default.removeItem(atPath: dataPath(evicted))
            }
            try saveIndex()
            return index[key]
        }
        guard let entry else { return nil }
        return CacheWriter(cache: self, entry: entry, path: dataPath(key))
    }

    func update(_ key: String, _ change: (inout CacheEntry) -> Void) throws(CacheError) {
        try locked { () throws(CacheError) in
            index.update(key, change)
            try saveIndex()
        }
    }

    func release(_ key: String) {
        lock.withLock { _ = writing.remove(key) }
    }

    /// Free space below the limit is an error naming both figures.
    func checkFreeSpace() throws(CacheError) {
        guard let free = DiskSpace.available(forFileAt: options.directory + "/index.json"),
            free < options.minimumFreeSpace
        else { return }
        throw CacheError(
            .notEnoughDiskSpace,
            "not enough disk space: \(free >> 20) MiB free, the limit is \(options.minimumFreeSpace >> 20) MiB")
    }

    /// `lock.withLock` for a body that throws ``CacheError`` (`withLock` rethrows untyped).
    private func locked<T>(_ body: () throws(CacheError) -> T) throws(CacheError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func dataPath(_ key: String) -> String { "\(options.directory)/\(key).flv" }

    /// Written whole to a temporary file and renamed over the old, so a crash leaves one index or the other.
    private func saveIndex() throws(CacheError) {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(index).write(to: URL(fileURLWithPath: options.directory + "/index.json"), options: .atomic)
        } catch {
            throw CacheError(.ioFailed, "cannot write the cache index in \(options.directory): \(error)")
        }
    }
}

func fileSize(_ path: String) -> Int64 {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0
}
