// channel-zapper URL1 URL2 … [--every SECONDS] [--switches N]
//
// Short-video style zapping on the library: a PreloadPool keeps the next stream and the one before connected,
// their newest GOP buffered and their poster decoded; the player switches along the list on a timer and the
// listener prints how long each switch took to its first picture (LIVEPLAY_EVT_SWITCHED, 9012). After each
// switch the pool moves along: the stream switched to leaves the pool, its neighbours are preloaded.
import Foundation
import LivePlay

/// Writes a line at once (stdout is block-buffered when piped).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Counts pictures, so the output shows the stream playing on after each switch.
final class PictureCounter: VideoSink, @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func present(_ frame: VideoFrame, timing: FrameTiming) { lock.withLock { count += 1 } }
    var pictures: Int { lock.withLock { count } }
}

final class SwitchListener: LivePlayListener {
    func onPlayEvent(_ event: PlayEvent) {
        guard event.code == .switched else { return }
        say("channel-zapper: \(event.message)")
    }
}

/// `--name VALUE` from `arguments`, removed from them.
func option(_ name: String, in arguments: inout [String], default value: Double) -> Double {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return value }
    defer { arguments.removeSubrange(index...(index + 1)) }
    return Double(arguments[index + 1]) ?? value
}
var arguments = Array(CommandLine.arguments.dropFirst())
let every = option("--every", in: &arguments, default: 2)
let switches = Int(option("--switches", in: &arguments, default: 6))
let urls = arguments
guard urls.count >= 2 else {
    FileHandle.standardError.write(Data("usage: channel-zapper URL1 URL2 … [--every SECONDS] [--switches N]\n".utf8))
    exit(64)
}

/// The stream after and the one before `index`: what a viewer swipes to next.
func neighbours(of index: Int) -> [String] {
    Set([(index + 1) % urls.count, (index + urls.count - 1) % urls.count]).subtracting([index]).map { urls[$0] }
}

let pool = PreloadPool(budget: PreloadBudget(reading: .newestGroup, bytesPerStream: 4 << 20))
pool.onChange = { status in say("channel-zapper: preloaded \(Redaction.url(status.url)): \(status.state.rawValue)") }
let counter = PictureCounter()
let player = LivePlayer(videoSink: counter)
player.listener = SwitchListener()
try player.startPlay(urls[0])
await pool.keep(only: neighbours(of: 0))
var index = 0
for _ in 0..<switches {
    try await Task.sleep(for: .seconds(every))
    index = (index + 1) % urls.count
    say("channel-zapper: to \(Redaction.url(urls[index])) after \(counter.pictures) pictures")
    try player.switch(to: urls[index], from: pool)
    await pool.keep(only: neighbours(of: index))
}
try await Task.sleep(for: .seconds(every))
await player.stopPlay()
await pool.removeAll()
say("channel-zapper: done, \(counter.pictures) pictures")
