// stutter-alarm URL [MAX_PER_MINUTE]
//
// Watches a live stream with LivePlayer and raises an alarm (a line on stderr and exit code 2) when it
// stutters more than MAX_PER_MINUTE times (default 3) within a minute. A stutter is playback stopped for
// over 500 ms: PLAY_WARNING_VIDEO_PLAY_LAG (2105). Losing the stream for good (PLAY_ERR_*) exits 1.
import Foundation
import LivePlay

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
            print("stutter: \(event.parameters["EVT_BLOCK_DURATION"].map { "\($0)" } ?? "?") ms (\(count) this minute)")
            if count > maximumPerMinute {
                lock.withLock { raised = true }
                FileHandle.standardError.write(Data("ALARM: \(count) stutters within a minute\n".utf8))
            }
        case .playBegin, .playLoading, .reconnect, .networkDisconnected:
            print("\(event.code.symbol): \(event.message)")
        default:
            break
        }
    }

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
let outcome = await player.run(url: url)
if case .failed = outcome { exit(1) }
exit(alarm.isRaised ? 2 : 0)
