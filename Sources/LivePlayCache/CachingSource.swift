import Foundation
public import LivePlayTransport

/// HTTP media on demand through a ``MediaCache`` (JPVideoPlayer's cache-while-playing): a complete entry plays
/// from disk with no request; a partial one plays its bytes from disk and fetches the rest with `Range` and
/// `If-Range` (a file that changed on the server comes whole and the entry starts over); anything else plays
/// from the network and is written to the cache as it arrives. A live response (no `Content-Length`) passes
/// through untouched; so does a seek into a file the cache does not hold whole.
public struct CachingSource: ByteSource {
    public let network: HTTPFLVSource
    public let cache: MediaCache

    public init(network: HTTPFLVSource, cache: MediaCache) {
        self.network = network
        self.cache = cache
    }

    public func makeConnection() -> any ByteConnection {
        if let file = cache.completeFile(for: network.url) { return FileByteSource(path: file).makeConnection() }
        return CachingConnection(source: self)
    }

    public func makeConnection(startingAt offset: Int64) -> (any ByteConnection)? {
        if let file = cache.completeFile(for: network.url) { return FileByteSource(path: file).makeConnection(startingAt: offset) }
        return network.makeConnection(startingAt: offset)
    }
}

/// One playback connection through the cache: the network's events in order, with the held bytes put in
/// before the network's when the server continues the file, and the network's bytes appended to the entry.
private final class CachingConnection: ByteConnection {
    private let source: CachingSource
    private var network: (any ByteConnection)?
    /// The entry being written, until writing stops (finished, failed, or not a file).
    private var writer: CacheWriter?
    /// Held bytes still to hand out before the network's, from this offset up to `end`.
    private var held: (file: FileHandle, next: Int64, end: Int64)?
    /// Held bytes the server's answer said to put first, handed out after `onDemand` (before any bytes).
    private var heldLength: Int64?
    private static let chunkSize = 64 << 10

    init(source: CachingSource) {
        self.source = source
    }

    func next() async throws(TransportError) -> TransportEvent? {
        if let chunk = try readHeld() { return .bytes(chunk) }
        let connection = network ?? open()
        let event: TransportEvent?
        do {
            event = try await connection.next()
        } catch {
            stopWriting()
            throw error
        }
        switch event {
        case .remoteFile(let file)?:
            guard let writer else { break }
            let continues = file.bodyStart > 0 && file.bodyStart == writer.heldBytes
            if (try? writer.begin(file)) != true { stopWriting() }
            if continues { heldLength = file.bodyStart }
        case .onDemand?:
            if let heldLength, let writer {
                guard let handle = FileHandle(forReadingAtPath: writer.path) else {
                    stopWriting()
                    throw TransportError(.readFailed, "cannot read the cached \(writer.path)")
                }
                held = (handle, 0, heldLength)
                self.heldLength = nil
            }
        case .bytes(let bytes)?:
            guard let writer else { break }
            do {
                try writer.append(bytes)
            } catch {
                // Out of space or a write error: playback goes on from the network, the entry keeps what it has.
                stopWriting()
            }
        case nil:
            try? writer?.finish()
            stopWriting()
        default:
            break
        }
        return event
    }

    func close() async {
        stopWriting()
        try? held?.file.close()
        held = nil
        await network?.close()
    }

    /// The network connection: the rest of a held file, else the whole file.
    private func open() -> any ByteConnection {
        writer = try? source.cache.writer(for: source.network.url)
        let connection: any ByteConnection
        if let (offset, validator) = writer?.continuation {
            connection = source.network.makeConnection(continuingAt: offset, ifRange: validator)
        } else {
            try? writer?.truncate()
            connection = source.network.makeConnection()
        }
        network = connection
        return connection
    }

    private func readHeld() throws(TransportError) -> [UInt8]? {
        guard var current = held, current.next < current.end else {
            try? held?.file.close()
            held = nil
            return nil
        }
        let count = Int(min(Int64(Self.chunkSize), current.end - current.next))
        guard let data = try? current.file.read(upToCount: count), !data.isEmpty else {
            held = nil
            stopWriting()
            throw TransportError(.readFailed, "the cached file ended before its \(current.end) bytes")
        }
        current.next += Int64(data.count)
        held = current
        return [UInt8](data)
    }

    private func stopWriting() {
        writer?.close()
        writer = nil
    }
}
