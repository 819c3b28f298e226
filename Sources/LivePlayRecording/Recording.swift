#if canImport(Glibc)
import Glibc
#endif

/// The containers a recording is written in, by the file's extension.
public enum RecordingFormat: String, Sendable, Hashable, CaseIterable {
    /// FLV, as the stream came: H.264 or MP3 / AAC (libavformat 5.1's FLV muxer has no HEVC).
    case flv
    /// Fragmented MP4: a fragment per GOP, each playable once written.
    case mp4

    /// The format a path's extension names (`.flv`, `.mp4`; `.m4v` / `.mov` are MP4), if any.
    public init?(path: String) {
        let lowered = path.lowercased()
        if lowered.hasSuffix(".flv") {
            self = .flv
        } else if [".mp4", ".m4v", ".mov"].contains(where: lowered.hasSuffix) {
            self = .mp4
        } else {
            return nil
        }
    }

    var muxerName: String { self == .flv ? "flv" : "mp4" }
}

/// Why a recording stopped: its code names the cause (`cause` in `LIVEPLAY_WARNING_RECORD_FAILED`).
public struct RecordingError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The file system has less free space than the recording's limit.
        public static let notEnoughDiskSpace = Code(rawValue: "not_enough_disk_space")
        /// A write failed because the device is full (`ENOSPC`).
        public static let diskFull = Code(rawValue: "disk_full")
        /// Any other failed write, create or close (permission, a removed directory, an I/O error).
        public static let writeFailed = Code(rawValue: "write_failed")
        /// The disk fell behind and the recording's queue filled up.
        public static let queueOverflow = Code(rawValue: "queue_overflow")
        /// The container cannot carry the stream's codec.
        public static let unsupported = Code(rawValue: "unsupported")
        /// libavformat is not installed (liveplay loads it when a recording starts).
        public static let missingLibrary = Code(rawValue: "missing_library")
    }

    public var code: Code
    public var message: String
    /// The system's error number, when a system call failed.
    public var errno: Int32?

    public init(_ code: Code, _ message: String, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// Free space on the file system a path is on, for the recording's disk limit.
public enum DiskSpace {
    /// Bytes an unprivileged writer may still use on the file system holding `path` (a file that may not exist
    /// yet: its directory is asked), or `nil` when the directory cannot be asked.
    public static func available(forFileAt path: String) -> Int64? {
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        var status = statvfs()
        guard statvfs(directory.isEmpty ? "/" : directory, &status) == 0 else { return nil }
        return Int64(status.f_bavail) * Int64(status.f_frsize)
    }
}
