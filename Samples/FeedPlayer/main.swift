// feed-player URL... [--page N] [--pages P]
//
// A feed, as TUIPlayer plays one: the first N URLs (default 2) make a LivePlaylist; when playback reaches its last
// item (onReachLast), the next page of N is appended, as an app appends what its server sends next, until P pages
// (default 3) have been appended; the URLs are used again from the first when they run out. Each item is printed as
// it starts (LIVEPLAY_EVT_PLAYLIST_ITEM); the next one is preloaded, so each change is a switch.
import Foundation
import LivePlay
import Synchronization

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

final class Printer: LivePlayListener, Sendable {
    func onPlayEvent(_ event: PlayEvent) {
        switch event.code {
        case .playlistItem, .playlistReachLast, .switched: say("  \(event.message)")
        case _ where event.code.isError: say("  \(event.code.symbol): \(event.message) (skipped)")
        default: break
        }
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
/// `--NAME N` taken out of `arguments`, at least 1.
func option(_ name: String, default value: Int, in arguments: inout [String]) -> Int {
    guard let flag = arguments.firstIndex(of: name), flag + 1 < arguments.count else { return value }
    defer { arguments.removeSubrange(flag...(flag + 1)) }
    return max(1, Int(arguments[flag + 1]) ?? value)
}
let page = option("--page", default: 2, in: &arguments)
let pages = option("--pages", default: 3, in: &arguments)
guard !arguments.isEmpty else {
    FileHandle.standardError.write(Data("usage: feed-player URL... [--page N] [--pages P]\n".utf8))
    exit(64)
}
/// What the app's server would send: pages of `page` items, the URLs given over and over.
struct Feed: Sendable {
    let urls: [String]
    let page: Int

    func items(from start: Int) -> [LivePlaylist.Item] {
        (start..<start + page).map { LivePlaylist.Item(urls[$0 % urls.count], title: "item \($0 + 1)") }
    }
}
let feed = Feed(urls: arguments, page: page)

let playlist = LivePlaylist(feed.items(from: 0))
let appended = Mutex(0)
playlist.onReachLast = { [playlist] reached in
    let next = appended.withLock { count -> Int? in
        guard count < pages else { return nil }
        count += 1
        return reached.count
    }
    guard let next else { return say("reached the last of \(reached.count): no more pages") }
    say("reached the last of \(reached.count): appending \(page) more")
    for item in feed.items(from: next) { playlist.append(item) }
}
let player = LivePlayer()
player.listener = Printer()
let outcome = await player.run(playlist: playlist, preload: PreloadPool())
say("the feed ended: \(outcome.name)")
if case .failed = outcome { exit(1) }
