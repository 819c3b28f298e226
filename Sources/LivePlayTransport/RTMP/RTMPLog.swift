import CRTMP
import Foundation
import Logging

/// Sends librtmp's log to the project's `Logger` instead of stderr.
///
/// librtmp has one process-wide log callback without a context pointer (`RTMP_LogSetCallback`), and it
/// logs on the thread that called into it. Each connection's thread registers its logger (and the URL
/// secrets to scrub) in thread-local storage; the callback looks it up there, so there is no global
/// logger, and lines from a connection go to that connection's logger. librtmp logs host, app and play
/// path (with its query tokens) while parsing the URL, so every line is scrubbed first.
enum RTMPLog {
    /// What the callback needs on the current thread.
    final class Context {
        let logger: Logger
        /// Query values and passwords of the URL, replaced by `***` in every line.
        let secrets: [String]

        init(logger: Logger, secrets: [String]) {
            self.logger = logger
            self.secrets = secrets.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
        }
    }

    private static let threadKey = "liveplay.rtmp.log"

    /// Installs the callback once per process. librtmp hands every line to the callback regardless of
    /// its own level; the level set here only matters to librtmp's hex dumps, which stay off.
    private static let installation: Void = {
        RTMP_LogSetLevel(RTMP_LOGDEBUG)
        RTMP_LogSetCallback(forwardRTMPLog)
    }()

    /// Makes librtmp calls on the current thread log to `context`'s logger.
    static func attach(_ context: Context) {
        _ = installation
        Thread.current.threadDictionary[threadKey] = context
    }

    static func detach() {
        Thread.current.threadDictionary.removeObject(forKey: threadKey)
    }

    fileprivate static func currentContext() -> Context? {
        Thread.current.threadDictionary[threadKey] as? Context
    }

    /// librtmp's levels (`RTMP_LogLevel`) in swift-log terms. librtmp reports as errors what the player
    /// reports itself as a ``TransportError`` (a closed socket, a failed read), so those are warnings here.
    static func level(_ rtmpLevel: Int32) -> Logger.Level {
        switch rtmpLevel {
        case 0, 1: .warning
        case 2: .notice
        case 3: .info
        case 4: .debug
        default: .trace
        }
    }

    /// `text` with every secret replaced by `***`.
    static func scrub(_ text: String, secrets: [String]) -> String {
        var result = text
        for secret in secrets where result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: "***")
        }
        return result
    }
}

/// librtmp's `RTMP_LogCallback`: `void (int level, const char *fmt, va_list)`, formatted here with
/// `vsnprintf`. Keeps `errno`, which the caller may still read after logging a failed `recv`.
private func forwardRTMPLog(_ level: Int32, _ format: UnsafePointer<CChar>?, _ arguments: CVaListPointer?) {
    let savedErrno = errno
    defer { errno = savedErrno }
    guard let format, let arguments, let context = RTMPLog.currentContext() else { return }
    let swiftLevel = RTMPLog.level(level)
    guard context.logger.logLevel <= swiftLevel else { return }
    var buffer = [CChar](repeating: 0, count: 2048)
    _ = vsnprintf(&buffer, buffer.count, format, arguments)
    let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard !line.isEmpty else { return }
    context.logger.log(level: swiftLevel, "\(RTMPLog.scrub(line, secrets: context.secrets))", source: "librtmp")
}
