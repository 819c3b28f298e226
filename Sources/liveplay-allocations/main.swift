// Counts the heap allocations of a playing session, per second of media, with ordo-one's malloc interposer.
//
// `LD_PRELOAD=.build/debug/libMallocInterposerSwift.so liveplay-allocations FILE.flv [--no-decode]
//   [--from SECONDS] [--to SECONDS]` plays FILE as a live stream on a virtual clock (deterministic: the same counts
// every run) with a picture sink and a sound sink that keep nothing, and counts every allocation of the process
// between the net statuses at `--from` (5 by default: after start-up, the GOP-cache burst and the buffer's
// filling) and `--to` (15). It prints one JSON line: the allocations, the bytes and the media seconds counted.
//
// libavcodec's own allocations are counted with ours: the interposer sees every `malloc`, whoever calls it.
// `--no-decode` plays without decoding (a monitor's probe), which leaves only liveplay's own path.
// Without the preload the interposer is not in the allocator's path and it says so (exit 2).
import Foundation
import LivePlay
import LivePlayTesting
import Logging
import MallocInterposerSwift

/// What was counted between the two statuses.
struct Counted: Sendable {
    var allocations = 0
    var bytes = 0
    var pictures = 0
    var blocks = 0
}

/// Sinks that keep nothing: what the counts see is the way to a sink, not a sink's own work.
final class DiscardingSinks: VideoSink, AudioSink {
    var pictures = 0
    var blocks = 0
    func present(_ frame: VideoFrame, timing: FrameTiming) { pictures += 1 }
    func play(_ audio: AudioSamples) { blocks += 1 }
    var unplayedDuration: Duration? { nil }
}

/// Whether the interposer counts this process's allocations: it does only when it is in the allocator's path.
func interposerCounts() -> Bool {
    MallocInterposerSwift.initialize()
    MallocInterposerSwift.hook()
    free(malloc(64))
    MallocInterposerSwift.unhook()
    return MallocInterposerSwift.getStatistics().mallocCount > 0
}

/// Plays `bytes` as a live stream on a virtual clock and counts from the status at `from` to the one at `to`.
nonisolated func count(_ bytes: [UInt8], decodes: Bool, from: Int, to: Int) async -> Counted? {
    var quiet = Logger(label: "liveplay-allocations")
    quiet.logLevel = .critical
    let clock = VirtualClock()
    let sinks = DiscardingSinks()
    let session = LiveSession(
        url: "http://127.0.0.1/live/virtual.flv", configuration: LivePlayConfiguration(decodes: decodes), clock: clock,
        logger: quiet, videoSink: sinks, audioSink: sinks, source: VirtualLiveSource(flv: bytes, clock: clock))
    var counted: Counted?
    var statuses = 0
    var before = (pictures: 0, blocks: 0)
    _ = await session.run(
        onEvent: { _ in },
        onStatus: { _ in
            statuses += 1
            if statuses == from {
                before = (sinks.pictures, sinks.blocks)
                MallocInterposerSwift.initialize()
                MallocInterposerSwift.hook()
            } else if statuses == to {
                MallocInterposerSwift.unhook()
                let statistics = MallocInterposerSwift.getStatistics()
                counted = Counted(
                    allocations: statistics.mallocCount, bytes: statistics.mallocBytesCount,
                    pictures: sinks.pictures - before.pictures, blocks: sinks.blocks - before.blocks)
                withUnsafeCurrentTask { $0?.cancel() }
            }
        })
    return counted
}

let usage = "usage: LD_PRELOAD=…/libMallocInterposerSwift.so liveplay-allocations FILE.flv [--no-decode] [--from S] [--to S]"
let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name) else { return value }
    guard index + 1 < arguments.count, let number = Int(arguments[index + 1]) else {
        print(usage)
        exit(64)
    }
    return number
}
let from = option("--from", default: 5)
let to = option("--to", default: 15)
let decodes = !arguments.contains("--no-decode")
guard let path = arguments.first, !path.hasPrefix("--"), from >= 1, to > from else {
    print(usage)
    exit(64)
}
guard interposerCounts() else {
    FileHandle.standardError.write(Data("liveplay-allocations: the malloc interposer is not preloaded\n".utf8))
    exit(2)
}
let bytes: [UInt8]
do {
    bytes = try Fixtures.bytes(path)
} catch {
    FileHandle.standardError.write(Data("liveplay-allocations: cannot read \(path): \(error)\n".utf8))
    exit(1)
}
guard let counted = await count(bytes, decodes: decodes, from: from, to: to) else {
    FileHandle.standardError.write(Data("liveplay-allocations: the session ended before \(to) s\n".utf8))
    exit(1)
}
let seconds = to - from
print(
    #"{"decodes":\#(decodes),"media_seconds":\#(seconds),"allocations":\#(counted.allocations),"#
        + #""allocations_per_second":\#(counted.allocations / seconds),"bytes":\#(counted.bytes),"#
        + #""pictures":\#(counted.pictures),"sound_blocks":\#(counted.blocks)}"#)
