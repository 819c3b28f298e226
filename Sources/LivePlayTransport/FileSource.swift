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
