// rendition-watcher MANIFEST [SECONDS] [--rendition ID]
//
// Plays a LAS manifest (a .json path or URL) with LivePlayer and prints its renditions, then a line for each switch
// adaptation makes (or the one --rendition asks for): when, from and to which rendition, and why (drain: the buffer
// ran low; capacity: a burst showed the link carries more; probe: the buffer held long enough to try one step up;
// manual). Once a second, the rendition playing and the rate received. Stops after SECONDS (default 60).
import Foundation
import LivePlay

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

final class Watcher: LivePlayListener, @unchecked Sendable {
    let started = Date()

    func onPlayEvent(_ event: PlayEvent) {
        let at = String(format: "%6.1f s", Date().timeIntervalSince(started))
        switch event.code {
        case .renditions:
            say("\(at)  \(event.message)")
        case .streamSwitchSucceeded where event.parameters["to"] != nil:
            let (from, to, reason) = (event.parameters["from"], event.parameters["to"], event.parameters["reason"])
            say("\(at)  switched \(from.map { "\($0)" } ?? "?") → \(to.map { "\($0)" } ?? "?") (\(reason.map { "\($0)" } ?? "?"))")
        case .streamSwitchFailed:
            say("\(at)  a switch failed: \(event.message)")
        case _ where event.code.isError:
            say("\(at)  \(event.code.symbol): \(event.message)")
        default:
            break
        }
    }

    func onNetStatus(_ status: NetStatus) {
        guard let rendition = status.rendition else { return }
        say("          rendition \(rendition), \(status.netSpeedKbps) kbit/s received, \(status.cacheMilliseconds) ms buffered")
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
var configuration = LivePlayConfiguration()
if let flag = arguments.firstIndex(of: "--rendition"), flag + 1 < arguments.count {
    configuration.rendition = Int(arguments[flag + 1])
    arguments.removeSubrange(flag...(flag + 1))
}
guard let manifest = arguments.first else {
    FileHandle.standardError.write(Data("usage: rendition-watcher MANIFEST [SECONDS] [--rendition ID]\n".utf8))
    exit(64)
}
let seconds = arguments.dropFirst().first.flatMap(Double.init) ?? 60
let player = LivePlayer(configuration: configuration)
player.listener = Watcher()
let outcome = await withTaskGroup(of: PlaybackOutcome?.self) { group in
    group.addTask { await player.run(url: manifest) }
    group.addTask {
        try? await Task.sleep(for: .seconds(seconds))
        return nil
    }
    let first = await group.next() ?? nil
    group.cancelAll()
    return first
}
if case .failed? = outcome { exit(1) }
