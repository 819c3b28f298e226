// stutter-alarm URL [MAX_PER_MINUTE]
//
// Watches a live stream with LivePlayer and raises an alarm (a line on stderr and exit code 2) the moment it
// stutters more than MAX_PER_MINUTE times (default 3) within a minute, while the stream is still playing. A
// stutter is playback stopped for over 500 ms: PLAY_WARNING_VIDEO_PLAY_LAG (2105). Losing the stream for
// good (PLAY_ERR_*) exits 1. Every line is written as it happens, also into a pipe.
import Foundation
import LivePlay

/// Writes a line at once (stdout is block-buffered when piped; an alarm's lines must not wait).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Counts stutters in a sliding minute; everything arrives on the player's delivery thread, one at a time.
final class StutterAlarm: LivePlayListener, @unchecked Sendable {
    let maximumPerMinute: Int
    private let lock = NSLock()
    private var stutters: [Date] = []
    private(set) var raised = false

    init(maximumPerMinute: Int) {
        self.maximumPerMinute = maximumPerMinute
    }

    func onPlayEvent(_ event: PlayEvent) {
        switch event.code {
        case .videoPlayLag:
            let now = Date()
            let count = lock.withLock {
                stutters = stutters.filter { now.timeIntervalSince($0) < 60 } + [now]
                return stutters.count
            }
            say("stutter: \(event.parameters["EVT_BLOCK_DURATION"].map { "\($0)" } ?? "?") ms (\(count) this minute)")
            if count > maximumPerMinute {
                let first = lock.withLock {
                    defer { raised = true }
                    return !raised
                }
                FileHandle.standardError.write(Data("ALARM: \(count) stutters within a minute\n".utf8))
                if first { alarm.continuation.yield() }
            }
        case .playBegin, .playLoading, .reconnect, .networkDisconnected:
            say("\(event.code.symbol): \(event.message)")
        default:
            break
        }
    }

    /// Yields once, when the alarm is first raised.
    let alarm = AsyncStream.makeStream(of: Void.self)

    var isRaised: Bool { lock.withLock { raised } }
}

let arguments = CommandLine.arguments.dropFirst()
guard let url = arguments.first else {
    FileHandle.standardError.write(Data("usage: stutter-alarm URL [MAX_PER_MINUTE]\n".utf8))
    exit(64)
}
let alarm = StutterAlarm(maximumPerMinute: arguments.dropFirst().first.flatMap { Int($0) } ?? 3)
let player = LivePlayer()
player.listener = alarm
// Whichever comes first: the stream ends (or fails), or the alarm is raised while it plays.
let status = await withTaskGroup(of: Int32.self) { group in
    group.addTask {
        if case .failed = await player.run(url: url) { return 1 }
        return alarm.isRaised ? 2 : 0
    }
    group.addTask {
        for await _ in alarm.alarm.stream { return 2 }
        return 0
    }
    let first = await group.next() ?? 0
    alarm.alarm.continuation.finish()
    group.cancelAll()
    return first
}
exit(status)
