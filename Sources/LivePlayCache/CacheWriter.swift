import Foundation
import LivePlayTransport

/// The right to write one entry: appends the file's bytes in order, keeps the index's length and validators
/// current, and gives the entry back on ``close()``. One writer per entry at a time (``MediaCache``).
final class CacheWriter {
    private let cache: MediaCache
    private(set) var entry: CacheEntry
    let path: String
    /// The right to write the entry, given up on ``close()``.
    private let claim: EntryClaim
    private var handle: FileHandle?
    /// Bytes of the file held so far (the data file's length).
    private(set) var heldBytes: Int64
    private var checkedAt: Int64 = 0
    private var closed = false
    /// A response described the file (``begin(_:)``): only then are bytes the file's.
    private var described = false
    /// Free space is asked again after this many bytes.
    private static let checkEvery: Int64 = 1 << 20

    init(cache: MediaCache, entry: CacheEntry, path: String, claim: EntryClaim) {
        self.cache = cache
        self.entry = entry
        self.path = path
        self.claim = claim
        heldBytes = fileSize(path)
        if let length = entry.length, heldBytes > length { heldBytes = 0 }
    }

    deinit {
        close()
    }

    /// What to send as `If-Range` to fetch the rest: `nil` when nothing is held or the server gave no validator
    /// (the file is then fetched again from its start).
    var continuation: (offset: Int64, validator: String)? {
        guard heldBytes > 0, !entry.isComplete, let validator = remoteFile.validator else { return nil }
        return (heldBytes, validator)
    }

    var isComplete: Bool { entry.isComplete || (entry.length.map { heldBytes == $0 && $0 > 0 } ?? false) }

    private var remoteFile: RemoteFile {
        RemoteFile(length: entry.length ?? 0, entityTag: entry.entityTag, lastModified: entry.lastModified)
    }

    /// A response began: a body from `file.bodyStart` of `file`. From 0 the entry starts over (new, or the
    /// file changed on the server); from the held length it goes on. Anything else is not written.
    /// - Returns: whether the body's bytes belong in the entry.
    func begin(_ file: RemoteFile) throws(CacheError) -> Bool {
        if file.bodyStart == 0 {
            try truncate()
        } else if file.bodyStart != heldBytes || file.length != entry.length {
            return false
        }
        try cache.checkFreeSpace()
        try cache.describe(entry, as: file)
        (entry.length, entry.entityTag, entry.lastModified, entry.isComplete) =
            (file.length, file.entityTag, file.lastModified, false)
        described = true
        return true
    }

    /// Appends the next bytes of the file: bytes before ``begin(_:)`` are no file's (a live stream's).
    func append(_ bytes: [UInt8]) throws(CacheError) {
        guard described else { throw CacheError(.notAFile, "no response described a file before its bytes") }
        do {
            if handle == nil {
                if !FileManager.default.fileExists(atPath: path) {
                    guard FileManager.default.createFile(atPath: path, contents: nil) else {
                        throw CacheError(.ioFailed, "cannot create \(path)")
                    }
                }
                handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
                try handle?.truncate(atOffset: UInt64(heldBytes))
                try handle?.seekToEnd()
            }
            try handle?.write(contentsOf: bytes)
        } catch let error as CacheError {
            throw error
        } catch {
            throw CacheError(.ioFailed, "writing \(path): \(CacheError.reason(error))")
        }
        heldBytes += Int64(bytes.count)
        if heldBytes - checkedAt >= Self.checkEvery {
            checkedAt = heldBytes
            try cache.checkFreeSpace()
        }
    }

    /// The body ended: the entry is complete when it holds the whole length.
    func finish() throws(CacheError) {
        try? handle?.synchronize()
        guard isComplete else { return }
        try cache.update(entry.key) { $0.isComplete = true }
        entry.isComplete = true
    }

    /// Starts the entry over: nothing held, no validators.
    func truncate() throws(CacheError) {
        try? handle?.close()
        handle = nil
        heldBytes = 0
        checkedAt = 0
        if FileManager.default.fileExists(atPath: path) {
            do {
                let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
                try file.truncate(atOffset: 0)
                try file.close()
            } catch {
                throw CacheError(.ioFailed, "cannot start \(path) over: \(CacheError.reason(error))")
            }
        }
        try cache.update(entry.key) { $0 = CacheEntry(key: $0.key, url: $0.url, lastUse: $0.lastUse) }
        entry = CacheEntry(key: entry.key, url: entry.url, lastUse: entry.lastUse)
    }

    /// Stops writing; what is held stays for the next time.
    func close() {
        guard !closed else { return }
        closed = true
        try? handle?.close()
        handle = nil
        if described {
            claim.release()
        } else {
            cache.release(claim, ofUndescribed: entry.key)
        }
    }
}
