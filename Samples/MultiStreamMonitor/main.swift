// multi-stream-monitor URL [URL…] [--seconds N]
//
// Watches several live streams in one process, without decoding (probe mode: transport, demux and timing
// only), and prints one line per stream per second from each player's net status:
//
//     12:00:01 cam-1  playing   latency 1.02 s  25.0 fps  2048 kbit/s  jitter 3 ms  stutters 0
//
// Every player runs in a child task of one task group; cancelling the group (Ctrl-C ends the process, or
// --seconds elapses) stops them all. The players share one playback thread per core, and read their sockets
// every 100 ms: how `liveplay monitor` plays a thousand streams in one process (docs/monitoring.md).
import Foundation
import LivePlay

/// Writes a line at once (stdout is block-buffered when piped; a monitor's lines must not wait).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Prints a stream's status lines, labelled with its name.
final class StatusPrinter: LivePlayListener, @unchecked Sendable {
    let name: String

    init(name: String) {
        self.name = name
    }

    func onNetStatus(_ status: NetStatus) {
        let time = DateFormatter.localizedString(from: Date(), dateStyle: .none, timeStyle: .medium)
        // `reason` says why a stream whose media arrives is not playing (no_decodable_video: nothing can be shown).
        let state = status.reason.map { "\(status.state) (\($0))" } ?? status.state
        let line = [
            time, name.padding(toLength: 12, withPad: " ", startingAt: 0),
            state.padding(toLength: 10, withPad: " ", startingAt: 0),
            String(format: "latency %.2f s", Double(status.latencyMilliseconds) / 1000),
            String(format: "%.1f fps", status.videoFPS),
            "\(status.videoBitrateKbps + status.audioBitrateKbps) kbit/s",
            "jitter \(status.netJitterMilliseconds) ms", "stutters \(status.stutters)",
        ]
        say(line.joined(separator: "  "))
    }

    func onPlayEvent(_ event: PlayEvent) {
        if event.code.isError { say("\(name): \(event.code.symbol) \(event.message)") }
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
var seconds: Double?
if let index = arguments.firstIndex(of: "--seconds"), index + 1 < arguments.count {
    seconds = Double(arguments[index + 1])
    arguments.removeSubrange(index...(index + 1))
}
guard !arguments.isEmpty else {
    FileHandle.standardError.write(Data("usage: multi-stream-monitor URL [URL…] [--seconds N]\n".utf8))
    exit(64)
}
let urls = arguments
// Probe mode: no decoder, so a stream costs its transport and demuxing only.
var configuration = LivePlayConfiguration(decodes: false)
configuration.threads = PlaybackThreadGroup(threads: ProcessInfo.processInfo.activeProcessorCount)
configuration.transport.readInterval = .milliseconds(100)
await withTaskGroup(of: Void.self) { [configuration] group in
    for (index, url) in urls.enumerated() {
        group.addTask {
            let player = LivePlayer(configuration: configuration)
            player.listener = StatusPrinter(name: "stream-\(index + 1)")
            _ = await player.run(url: url)
        }
    }
    if let seconds {
        try? await Task.sleep(for: .seconds(seconds))
        group.cancelAll()
    }
}
