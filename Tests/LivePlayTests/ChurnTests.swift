import Foundation
import LivePlay
import LivePlayLab
import LivePlayTesting
import Testing

/// Start/stop cycles in one process: nothing a session opens outlives it.
@Suite(.serialized) struct ChurnTests {
    /// Open descriptors, threads and resident bytes of this process, from /proc.
    static func resources() -> (descriptors: Int, threads: Int, rss: Int) {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
            return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? -1
        }
        return (descriptors, field("Threads"), field("VmRSS") * 1024)
    }

    @Test func aThousandStartsAndStopsLeakNoDescriptorsThreadsOrMemory() async throws {
        let (server, port) = try await LabSessionTests.server()
        let url = "http://127.0.0.1:\(port)/live.flv"
        let player = LivePlayer(configuration: LabSessionTests.configuration(retries: 0), videoSink: RecordingSink())
        /// One cycle: play until the first picture has been decoded (2009), then stop.
        func cycle() async {
            let updates = player.updates()
            try? player.startPlay(url)
            for await update in updates {
                if case .event(let event) = update, event.code == .changeResolution || event.code.isError { break }
            }
            await player.stopPlay()
        }
        for _ in 0..<100 { await cycle() }  // warm-up: pools, caches, lazily started threads
        let before = Self.resources()
        var samples: [Int] = []
        for index in 1...1000 {
            await cycle()
            if index % 250 == 0 { samples.append(Self.resources().rss >> 10) }
        }
        let after = Self.resources()
        await server.stop()
        print("churn: before \(before), after 1000 cycles \(after), RSS KiB every 250: \(samples)")
        #expect(after.descriptors <= before.descriptors + 2, "descriptors \(before.descriptors) → \(after.descriptors)")
        #expect(after.threads <= before.threads + 2, "threads \(before.threads) → \(after.threads)")
        // A sanitizer's quarantine and shadow memory make RSS say nothing about leaks; LeakSanitizer does that
        // (it finds none in liveplay's modules). Measured here: 8–10 MiB over 1000 cycles, not steadily.
        if !LivePlayTesting.isSanitized {
            #expect(after.rss - before.rss < 32 << 20, "RSS grew \((after.rss - before.rss) >> 20) MiB over 1000 cycles")
        }
    }
}
