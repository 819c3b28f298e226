import Foundation
import LivePlayTesting
import Synchronization
import Testing

@testable import LivePlay

/// ``LivePlayer/hardwareDecoding`` changed while playing, on virtual time: it takes effect at the next keyframe, and
/// what is shown does not change (every picture once, each what ffmpeg decodes). Here no device opens, so asking for
/// NVDEC is one 2106 and software goes on.
@Suite struct HardwareDecodingPlayerTests {
    /// Hashes every picture (as planar, as software decodes); asks for NVDEC at the 20th, and software at the 60th.
    final class SwitchingSink: VideoSink, Sendable {
        let hashes = Mutex<[String]>([])
        let player = Mutex<LivePlayer?>(nil)

        func present(_ frame: VideoFrame, timing: FrameTiming) {
            let count = hashes.withLock { hashes in
                hashes.append(frame.planarBytes()?.md5() ?? "not planar: \(frame.pixelFormat)")
                return hashes.count
            }
            if count == 20 { player.withLock { $0 }?.hardwareDecoding = .nvdec }
            if count == 60 { player.withLock { $0 }?.enableHWAcceleration(false) }
        }
    }

    final class Events: LivePlayListener, Sendable {
        let events = Mutex<[PlayEvent]>([])
        func onPlayEvent(_ event: PlayEvent) { events.withLock { $0.append(event) } }
    }

    @Test func hardwareDecodingChangedWhilePlayingChangesNothingVisible() async throws {
        let path = try Fixture.h264BFramesAAC.path()
        let sink = SwitchingSink()
        let listener = Events()
        let player = LivePlayer(videoSink: sink, clock: VirtualClock())
        player.listener = listener
        sink.player.withLock { $0 = player }
        #expect(player.hardwareDecoding == .off, "software by default")

        #expect(await player.run(url: path) == .ended)
        #expect(player.hardwareDecoding == .off, "the last choice is kept for the next playback")
        let expected = try Oracle.frameHashes(path, video: true).map(\.md5)
        #expect(sink.hashes.withLock { $0 } == expected, "every picture once, as ffmpeg decodes it")
        let events = listener.events.withLock { $0 }
        let warnings = events.filter { $0.code == .hardwareAccelerationFailed }
        let hasNVIDIA = FileManager.default.fileExists(atPath: "/dev/nvidiactl")
        #expect(warnings.count == (hasNVIDIA ? 0 : 1), "\(events.map(\.code.rawValue))")
        if let warning = warnings.first {
            #expect(warning.parameters["device"] == .string("nvdec"))
            #expect(warning.parameters["decoder"] == .string("h264 (software)"))
        }
        #expect(!events.contains { $0.code == .firstKeyframeHardwareDecodeFailed || $0.code == .videoDecodeFailed })
        let summary = try #require(events.last { $0.code == .sessionSummary })
        #expect(summary.parameters["decoder"] == .string("h264 (software)"))
    }
}
