import Foundation
import LivePlay
import Logging

/// `liveplay URL1 URL2 …`: the streams a run switches through (`n` / `p` in the window, `--switch-every S`), the
/// nearest ones preloaded (`--preload N`). One task takes the requests in order: it switches the player, logs the
/// switch (the first picture follows as `LIVEPLAY_EVT_SWITCHED` with the time it took) and moves the preloaded
/// set along.
final class StreamSwitcher: Sendable {
    let urls: [String]
    private let player: LivePlayer
    private let pool: PreloadPool?
    private let preload: Int
    private let log: EventLog
    private let show: @Sendable (String) -> String
    private let onSwitch: @Sendable (String) -> Void
    private let requests: AsyncStream<Int>
    private let continuation: AsyncStream<Int>.Continuation

    /// - Parameters:
    ///   - show: how a URL is printed (secrets redacted unless asked for).
    ///   - onSwitch: told the shown URL of each stream switched to (the window's title).
    init(
        urls: [String], player: LivePlayer, configuration: LivePlayConfiguration, preload: Int, log: EventLog,
        show: @escaping @Sendable (String) -> String, onSwitch: @escaping @Sendable (String) -> Void
    ) {
        self.urls = urls
        self.player = player
        self.preload = min(preload, urls.count - 1)
        self.log = log
        self.show = show
        self.onSwitch = onSwitch
        var quiet = Logger(label: "liveplay.preload")
        quiet.logLevel = .error
        pool = preload > 0 ? PreloadPool(configuration: configuration, logger: quiet) : nil
        (requests, continuation) = AsyncStream.makeStream(of: Int.self)
    }

    /// Asks for the stream `delta` places on in the list (`n`: +1, `p`: −1), wrapping around; never blocks.
    func request(_ delta: Int) {
        continuation.yield(delta)
    }

    /// The streams kept preloaded while `index` plays: the next, the previous, the one after the next, …
    static func neighbours(of index: Int, count: Int, preload: Int) -> [Int] {
        var picked: [Int] = []
        var step = 1
        while picked.count < min(preload, count - 1) {
            for candidate in [index + step, index - step] {
                let wrapped = ((candidate % count) + count) % count
                if wrapped != index, !picked.contains(wrapped), picked.count < preload { picked.append(wrapped) }
            }
            step += 1
        }
        return picked
    }

    /// Takes requests, and with `interval` one more (the next stream) each interval, until cancelled; the first
    /// stream is already playing. Stops the preloaded streams when it ends.
    func run(every interval: Duration?) async {
        var index = 0
        await refresh(around: index)
        await withTaskGroup(of: Void.self) { group in
            if let interval {
                group.addTask { [continuation] in
                    while (try? await Task.sleep(for: interval)) != nil { continuation.yield(1) }
                }
            }
            for await delta in requests {
                index = ((index + delta) % urls.count + urls.count) % urls.count
                let url = urls[index]
                let preloaded = pool?.statuses.contains { $0.url == url && $0.state == .ready } ?? false
                log.switched(to: show(url), index: index, preloaded: preloaded)
                onSwitch(show(url))
                try? player.switch(to: url, from: pool)
                await refresh(around: index)
            }
            group.cancelAll()
        }
        await pool?.removeAll()
    }

    private func refresh(around index: Int) async {
        guard let pool else { return }
        await pool.keep(only: Self.neighbours(of: index, count: urls.count, preload: preload).map { urls[$0] })
    }
}
