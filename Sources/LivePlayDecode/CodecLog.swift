import CFFmpeg
import Glibc
import Synchronization

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
    var mapped = CodecLog.Level(libav: level)
    let text = CodecLog.clean(String(cString: line))
    if mapped == .warning, CodecLog.notes.contains(where: text.contains) { mapped = .debug }
    if text.hasPrefix(CodecLog.deviceContext) {
        // A device that does not open is reported once, by the decoder's 2106 with these words as its reason.
        CodecLog.deviceLines.withLock { if $0.count < 8 { $0.append(text) } }
        mapped = .debug
    }
    guard CodecLog.router.wants(mapped) else { return }
    CodecLog.router.deliver(mapped, text)
}

extension CodecLog {
    /// Warnings that say what the library did as it should, demoted to debug: nothing for a person to act on. The
    /// MP4 muxer estimates the last packet's duration from the ones before at the end of every recording.
    static let notes = ["Estimating the duration of the last packet in a fragment"]

    /// What libavutil says while a device opens (``HardwareDevices``, which opens one at a time): the reason its
    /// 2106 gives, at debug level in the log.
    static let deviceContext = "AVHWDeviceContext: "
    static let deviceLines = Mutex<[String]>([])

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
private final class Router: Sendable {
    private struct State {
        var minimum = CodecLog.Level.warning
        var handler: (@Sendable (CodecLog.Level, String) -> Void)?
        var kinds: [String: (last: Double, suppressed: Int)] = [:]
    }

    /// Locked briefly from libav's log callback, on whichever thread logs; the handler is called outside it.
    private let state = Mutex(State())
    static let interval = 10.0

    func set(minimum: CodecLog.Level, handler: @escaping @Sendable (CodecLog.Level, String) -> Void) {
        state.withLock {
            $0.minimum = minimum
            $0.handler = handler
        }
    }

    func wants(_ level: CodecLog.Level) -> Bool {
        state.withLock { $0.handler != nil && level >= $0.minimum }
    }

    func deliver(_ level: CodecLog.Level, _ text: String) {
        // Messages of one kind differ only in their numbers (macroblock positions, sizes).
        let kind = String(text.map { $0.isNumber ? "#" : $0 })
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let seconds = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        let (handler, line): ((@Sendable (CodecLog.Level, String) -> Void)?, String?) = state.withLock { state in
            var entry = state.kinds[kind] ?? (-Self.interval, 0)
            defer { state.kinds[kind] = entry }
            guard seconds - entry.last >= Self.interval else {
                entry.suppressed += 1
                return (nil, nil)
            }
            let more = entry.suppressed > 0 ? " (\(entry.suppressed) more like it not shown)" : ""
            entry = (seconds, 0)
            if state.kinds.count > 256 { state.kinds.removeAll() }
            return (state.handler, text + more)
        }
        if let handler, let line { handler(level, line) }
    }
}
