/// One file the cache holds, as its index records it: no secret in clear text (the URL's query values are
/// redacted; the key is a hash).
public struct CacheEntry: Codable, Sendable, Hashable {
    /// SHA-256 of the URL without its volatile query parameters (``CacheKeys``), in hex: the data file's name.
    public var key: String
    /// The URL with its query values and password redacted, for people reading the index.
    public var url: String
    /// The whole file's length, once a response said it.
    public var length: Int64?
    /// The server's validators, sent back as `If-Range` to continue the file.
    public var entityTag: String?
    public var lastModified: String?
    /// All ``length`` bytes are held.
    public var isComplete: Bool
    /// When it was last used, as a place in the order of uses (higher is more recent): the LRU order.
    public var lastUse: Int

    public init(
        key: String, url: String, length: Int64? = nil, entityTag: String? = nil, lastModified: String? = nil,
        isComplete: Bool = false, lastUse: Int = 0
    ) {
        self.key = key
        self.url = url
        self.length = length
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.isComplete = isComplete
        self.lastUse = lastUse
    }
}

/// The cache's index as a value: entries by key, their use order, and which to evict. Decides; ``MediaCache``
/// does the file work.
public struct CacheIndex: Codable, Sendable, Hashable {
    public static let currentVersion = 1
    public var version = CacheIndex.currentVersion
    public private(set) var entries: [String: CacheEntry] = [:]
    /// The last use handed out.
    private var uses = 0

    public init() {}

    public subscript(key: String) -> CacheEntry? { entries[key] }

    /// Adds or replaces `entry`, as used now.
    public mutating func put(_ entry: CacheEntry) {
        var entry = entry
        uses += 1
        entry.lastUse = uses
        entries[entry.key] = entry
    }

    /// Marks an entry as used now (played or downloaded).
    public mutating func touch(_ key: String) {
        guard var entry = entries[key] else { return }
        uses += 1
        entry.lastUse = uses
        entries[key] = entry
    }

    public mutating func update(_ key: String, _ change: (inout CacheEntry) -> Void) {
        guard var entry = entries[key] else { return }
        change(&entry)
        entries[key] = entry
    }

    @discardableResult
    public mutating func remove(_ key: String) -> CacheEntry? {
        entries.removeValue(forKey: key)
    }

    /// The entries to evict so that at most `limit` remain: the least recently used first, never one in `inUse`.
    public func evictions(limit: Int, inUse: Set<String>) -> [String] {
        let excess = entries.count - max(limit, 0)
        guard excess > 0 else { return [] }
        return entries.values.filter { !inUse.contains($0.key) }.sorted { $0.lastUse < $1.lastUse }.prefix(excess)
            .map(\.key)
    }
}
