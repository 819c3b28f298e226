import CFFmpeg
import Glibc

/// libavcodec's own messages (`[h264 @ 0x…] error while decoding MB 3 4`), which it prints raw on stderr
/// by default, routed to the application instead: filtered by level, one line each without the pointer,
/// and rate-limited (the first of a kind at once, then one line per kind every 10 s with how many were not
/// shown). The decoders report the same failures as events; these lines are the detail.
///
/// libavcodec has one log callback per process, so this is process-wide.
public enum CodecLog {
    /// swift-log's levels, as libavcodec's map to them.
    public enum Level: Int, Sendable, Comparable {
        case trace, debug, info, warning, error

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

        init(libav level: Int32) {
            switch level {
            case ...AV_LOG_ERROR: self = .error
            case ...AV_LOG_WARNING: self = .warning
            case ...AV_LOG_INFO: self = .info
            case ...AV_LOG_DEBUG: self = .debug
            default: self = .trace
            }
        }
    }

    /// Sends libavcodec's messages at `minimum` or above to `handler` (any thread; keep it quick).
    public static func route(minimum: Level, to handler: @escaping @Sendable (Level, String) -> Void) {
        router.set(minimum: minimum, handler: handler)
        let libavLevel: Int32 =
            switch minimum {
            case .error: AV_LOG_ERROR
            case .warning: AV_LOG_WARNING
            case .info: AV_LOG_INFO
            case .debug: AV_LOG_DEBUG
            case .trace: AV_LOG_TRACE
            }
        // Swift emits an inline C function only where Swift calls it; the callback calls this one.
        _ = liveplay_log_handler()
        liveplay_route_log(lineHandler, libavLevel)
    }

    /// libavcodec prints nothing at all (the default of a process that never calls ``route(minimum:to:)``
    /// is its raw stderr output).
    public static func silence() {
        av_log_set_level(AV_LOG_QUIET)
    }

    fileprivate static let router = Router()
}

private let lineHandler: @convention(c) (Int32, UnsafePointer<CChar>?) -> Void = { level, line in
    guard let line else { return }
    let mapped = CodecLog.Level(libav: level)
    guard CodecLog.router.wants(mapped) else { return }
    CodecLog.router.deliver(mapped, CodecLog.clean(String(cString: line)))
}

extension CodecLog {
    /// `[h264 @ 0x55d…] error while decoding MB 3 4\n` → `h264: error while decoding MB 3 4`.
    static func clean(_ text: String) -> String {
        var body = Substring(text)
        var name: Substring?
        if body.hasPrefix("["), let close = body.firstIndex(of: "]") {
            let inside = body[body.index(after: body.startIndex)..<close]
            name = inside.split(separator: " @ ", maxSplits: 1).first
            body = body[body.index(after: close)...]
        }
        while body.first?.isWhitespace == true { body.removeFirst() }
        while body.last?.isWhitespace == true { body.removeLast() }
        return name.map { "\($0): \(body)" } ?? String(body)
    }
}

/// Who gets the messages, and how many of each kind were held back.
private final class Router: @unchecked Sendable {  // every field is read and written under `lock`
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var minimum = CodecLog.Level.warning
    private var handler: (@Sendable (CodecLog.Level, String) -> Void)?
    private var kinds: [String: (last: Double, suppressed: Int)] = [:]
    static let interval = 10.0

    init() {
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
    }

    func set(minimum: CodecLog.Level, handler: @escaping @Sendable (CodecLog.Level, String) -> Void) {
        locked {
            self.minimum = minimum
            self.handler = handler
        }
    }

    func wants(_ level: CodecLog.Level) -> Bool {
        locked { handler != nil && level >= minimum }
    }

    func deliver(_ level: CodecLog.Level, _ text: String) {
        // Messages of one kind differ only in their numbers (macroblock positions, sizes).
        let kind = String(text.map { $0.isNumber ? "#" : $0 })
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let seconds = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        let (handler, line): ((@Sendable (CodecLog.Level, String) -> Void)?, String?) = locked {
            var entry = kinds[kind] ?? (-Self.interval, 0)
            defer { kinds[kind] = entry }
            guard seconds - entry.last >= Self.interval else {
                entry.suppressed += 1
                return (nil, nil)
            }
            let more = entry.suppressed > 0 ? " (\(entry.suppressed) more like it not shown)" : ""
            entry = (seconds, 0)
            if kinds.count > 256 { kinds.removeAll() }
            return (self.handler, text + more)
        }
        if let handler, let line { handler(level, line) }
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return body()
    }
}
