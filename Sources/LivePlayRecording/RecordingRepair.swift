#if canImport(Glibc)
import Glibc
#endif

/// Cuts a recording left unfinished (by a kill, a crash or a failed write) back to its last complete unit, so
/// every demuxer reads it: an FLV file to its last whole tag, a fragmented MP4 to its last whole fragment
/// (FFmpeg 5.1 rejects the whole file when it ends inside a `moof`; inside an `mdat` it warns and reads on).
public enum RecordingRepair {
    /// Truncates the file at `path` and returns its new length, or `nil` when it is not a recording this can read
    /// (left as it is).
    @discardableResult
    public static func truncateToLastCompleteUnit(path: String, format: RecordingFormat) -> Int64? {
        let descriptor = open(path, O_RDWR)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        let length = Int64(status.st_size)
        let read = { (offset: Int64, count: Int) -> [UInt8]? in
            var bytes = [UInt8](repeating: 0, count: count)
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
            return got == count ? bytes : nil
        }
        let end = format == .flv ? flvEnd(length: length, read: read) : mp4End(length: length, read: read)
        guard let end else { return nil }
        if end < length, ftruncate(descriptor, off_t(end)) != 0 { return nil }
        return end
    }

    /// After the 9-byte header and PreviousTagSize0: 11-byte tag headers, each tag followed by its 4-byte size.
    static func flvEnd(length: Int64, read: (Int64, Int) -> [UInt8]?) -> Int64? {
        guard let header = read(0, 9), header.starts(with: [0x46, 0x4C, 0x56]) else { return nil }
        var offset = Int64(header[5]) << 24 | Int64(header[6]) << 16 | Int64(header[7]) << 8 | Int64(header[8])
        offset += 4
        guard offset <= length else { return nil }
        while let tag = read(offset, 11) {
            let size = Int64(tag[1]) << 16 | Int64(tag[2]) << 8 | Int64(tag[3])
            guard offset + 11 + size + 4 <= length else { break }
            offset += 11 + size + 4
        }
        return offset
    }

    /// Top-level boxes: the end of the last complete `moov` or `mdat` (an `mdat` ends a fragment), or of a
    /// complete `mfra` index.
    static func mp4End(length: Int64, read: (Int64, Int) -> [UInt8]?) -> Int64? {
        var offset: Int64 = 0, complete: Int64?
        while let header = read(offset, 8) {
            var size = Int64(header[0]) << 24 | Int64(header[1]) << 16 | Int64(header[2]) << 8 | Int64(header[3])
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if size == 1 {
                guard let large = read(offset + 8, 8) else { break }
                size = large.reduce(0) { $0 << 8 | Int64($1) }
            } else if size == 0 {
                size = length - offset
            }
            guard size >= 8, offset + size <= length else { break }
            offset += size
            if ["moov", "mdat", "mfra"].contains(type) { complete = offset }
        }
        return complete
    }
}
