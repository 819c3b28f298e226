import Foundation

/// Reads a local file in fixed-size chunks: the first byte source, for files and tests.
///
/// Reads are blocking; callers on the cooperative pool hand it to their own thread.
public final class FileSource {
    public let path: String
    public let chunkSize: Int
    private let handle: FileHandle

    public init(path: String, chunkSize: Int = 64 << 10) throws(TransportError) {
        self.path = path
        self.chunkSize = max(1, chunkSize)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw TransportError(.notFound, "no such file: \(path)")
        }
        guard !isDirectory.boolValue, let handle = FileHandle(forReadingAtPath: path) else {
            throw TransportError(.openFailed, "cannot open \(path) for reading")
        }
        self.handle = handle
    }

    deinit {
        try? handle.close()
    }

    /// Reading goes on `offset` bytes into the file.
    public func seek(to offset: Int64) throws(TransportError) {
        do {
            try handle.seek(toOffset: UInt64(max(0, offset)))
        } catch {
            throw TransportError(.readFailed, "cannot seek in \(path)", detail: "\(error)")
        }
    }

    /// The next chunk, or `nil` at the end of the file.
    public func read() throws(TransportError) -> [UInt8]? {
        do {
            guard let data = try handle.read(upToCount: chunkSize), !data.isEmpty else { return nil }
            return [UInt8](data)
        } catch {
            throw TransportError(.readFailed, "reading \(path): \(error)")
        }
    }
}

/// A local FLV file as a ``ByteSource``: media on demand, reported as ``TransportEvent/onDemand(length:)``
/// and then read in chunks; the end of the file ends the stream by design. Reads block for the time a
/// local disk takes, on the calling task's executor (the player's own thread, not the cooperative pool).
public struct FileByteSource: ByteSource {
    public let path: String
    public let chunkSize: Int

    public init(path: String, chunkSize: Int = 64 << 10) {
        self.path = path
        self.chunkSize = chunkSize
    }

    public func makeConnection() -> any ByteConnection {
        FileConnection(path: path, chunkSize: chunkSize, offset: 0)
    }

    public func makeConnection(startingAt offset: Int64) -> (any ByteConnection)? {
        FileConnection(path: path, chunkSize: chunkSize, offset: offset)
    }
}

private final class FileConnection: ByteConnection {
    private let path: String
    private let chunkSize: Int
    private let offset: Int64
    private var file: FileSource?
    private var finished = false
    private var sentHeader = false

    init(path: String, chunkSize: Int, offset: Int64) {
        self.path = path
        self.chunkSize = chunkSize
        self.offset = offset
    }

    func next() async throws(TransportError) -> TransportEvent? {
        guard !finished else { return nil }
        guard let file else {
            let opened = try FileSource(path: path, chunkSize: chunkSize)
            if offset > 0 { try opened.seek(to: offset) }
            file = opened
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? nil
            return .onDemand(length: size ?? 0)
        }
        guard let chunk = try file.read() else {
            finished = true
            return nil
        }
        guard offset > 0, !sentHeader else { return .bytes(chunk) }
        sentHeader = true
        return .bytes(resumedStreamHeader + chunk)
    }

    func close() async {
        finished = true
        file = nil
    }
}
