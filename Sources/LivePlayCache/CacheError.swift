import Foundation

/// Why a cache or download operation failed: its code names the cause (`cause` in the download log).
public struct CacheError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The file system has less free space than the limit (Volcengine's "not enough disk space").
        public static let notEnoughDiskSpace = Code(rawValue: "not_enough_disk_space")
        /// Reading or writing the cache directory failed (permission, a full disk, a removed directory).
        public static let ioFailed = Code(rawValue: "io_failed")
        /// The response has no `Content-Length`: a live stream, which `--record` keeps, not a download.
        public static let notAFile = Code(rawValue: "not_a_file")
        /// The response is an HTML or XML page, not a media file (an error page answered with 200): nothing of it is kept.
        public static let notFLV = Code(rawValue: "not_flv")
        /// The connection failed and every retry did too.
        public static let transportFailed = Code(rawValue: "transport_failed")
        /// Another download or playback is writing this entry.
        public static let busy = Code(rawValue: "busy")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

extension CacheError {
    /// A file operation's error in words: the system's reason underneath ("No such file or directory"), never
    /// Foundation's `Error Domain=NSCocoaErrorDomain Code=4 …` dump.
    static func reason(_ error: any Error) -> String {
        let error = error as NSError
        let posix = error.domain == NSPOSIXErrorDomain ? error : error.userInfo[NSUnderlyingErrorKey] as? NSError
        if let posix, posix.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(posix.code))) }
        return error.localizedDescription
    }
}
