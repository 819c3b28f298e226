// offline-player URL CACHE_DIR
//
// Keeps an HTTP FLV file for offline play, as a short-video app does: downloads it into a MediaCache with a
// Downloader (a line per MiB; run again after Ctrl-C and it resumes with Range), then plays it from the cache,
// where it needs no network at all, and says how it ended. A file already in the cache is not downloaded again.
import Foundation
import LivePlay

/// Writes a line at once (stdout is block-buffered when piped).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Counts the pictures played.
final class PictureCounter: VideoSink, @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func present(_ frame: VideoFrame, timing: FrameTiming) { lock.withLock { count += 1 } }
    var pictures: Int { lock.withLock { count } }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: offline-player URL CACHE_DIR\n".utf8))
    exit(64)
}
let (url, directory) = (arguments[0], arguments[1])
// Signed URLs: the token changes with every request, the file does not.
let cache = try MediaCache(options: .init(directory: directory, keys: CacheKeys(volatileParameters: ["token"])))

if cache.completeFile(for: url) == nil {
    let downloader = Downloader(cache: cache)
    downloader.add(url)
    try await downloader.run(untilIdle: true) { update in
        let length = update.length.map { " of \($0)" } ?? ""
        say("offline-player: \(update.kind.rawValue) \(update.bytes)\(length) bytes\(update.error.map { ": \($0)" } ?? "")")
    }
}
guard let file = cache.completeFile(for: url) else {
    say("offline-player: not in the cache, cannot play offline")
    exit(1)
}
say("offline-player: cached at \(file)")

var configuration = LivePlayConfiguration()
configuration.cache = cache
let counter = PictureCounter()
let player = LivePlayer(configuration: configuration, videoSink: counter)
let outcome = await player.run(url: url)
say("offline-player: played \(counter.pictures) pictures from the cache: \(outcome)")
exit(outcome == .ended ? 0 : 1)
