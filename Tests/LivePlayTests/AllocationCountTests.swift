import Foundation
import LivePlayTesting
import Testing

/// Heap allocations of a playing session, counted by ordo-one's malloc interposer in `liveplay-allocations` (a
/// process of its own, the interposer preloaded) on a virtual clock: the same counts every run, so the bounds
/// are counts, not times. From the status at 5 s to the one at 15 s of the 20 s flash-and-beep fixture (30 fps
/// and 43 sound blocks a second), with libavcodec's own allocations included when it decodes.
///
/// The bounds are this debug build's counts and 5 % more (`bench/README.md`, "Allocations", gives the release
/// build's per source, measured with heaptrack). The counts are not exact to the allocation: the virtual clock
/// yields until the source waits again, and a loaded machine needs more yields (measured: 0.3 % more with both
/// cores busy). So a bound catches a change that allocates per turn, packet or frame again (a checked
/// continuation per wait, a copy of the presentation queue per turn: 9,163 and 4,799 a second before they went,
/// 8,304 and 4,214 after; a payload per packet and an `AVFrame` and object per frame, 8,231 and 4,182 before
/// payloads and frames were reused, 7,940 and 4,037 after), not one allocation more.
@Suite(.serialized) struct AllocationCountTests {
    struct Counted: Decodable {
        var media_seconds: Int
        var allocations: Int
        var allocations_per_second: Int
        var pictures: Int
        var sound_blocks: Int
    }

    static func count(decoding: Bool) throws -> Counted {
        let tool = ExternalTool.builtProduct("liveplay-allocations")
        let interposer = URL(fileURLWithPath: tool).deletingLastPathComponent()
            .appendingPathComponent("libMallocInterposerSwift.so").path
        #expect(FileManager.default.fileExists(atPath: interposer), "built beside the tool: \(interposer)")
        let output = try ExternalTool.run(
            "env", ["LD_PRELOAD=\(interposer)", tool, try Fixture.flashBeep.path()] + (decoding ? [] : ["--no-decode"]))
        #expect(output.status == 0, "\(output.standardError)")
        return try JSONDecoder().decode(Counted.self, from: output.standardOutput)
    }

    @Test func aDecodingSessionAllocatesBoundedPerSecondOfMedia() throws {
        let counted = try Self.count(decoding: true)
        print("decoding: \(counted.allocations_per_second) allocations per second of media")
        #expect(counted.media_seconds == 10)
        // The window is real playback: every picture and block of sound of its 10 s reached the sinks.
        #expect((295...305).contains(counted.pictures), "\(counted.pictures) pictures")
        #expect((425...437).contains(counted.sound_blocks), "\(counted.sound_blocks) blocks of sound")
        #expect(counted.allocations_per_second <= 8_340)
    }

    @Test func aProbeSessionAllocatesBoundedPerSecondOfMedia() throws {
        let counted = try Self.count(decoding: false)
        print("probe: \(counted.allocations_per_second) allocations per second of media")
        #expect(counted.pictures == 0)
        #expect(counted.allocations_per_second <= 4_240)
    }

    @Test func countingGivesNearlyTheSameCountEveryRun() throws {
        let (first, second) = (try Self.count(decoding: false), try Self.count(decoding: false))
        #expect(abs(first.allocations - second.allocations) * 100 <= first.allocations, "within 1 %")
    }
}
