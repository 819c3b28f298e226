import Foundation
import LivePlayTesting
import Synchronization
import Testing

@testable import LivePlay

/// A player on an injected clock: a file plays in virtual time, so what a viewer does at a moment (pause, resume)
/// and how long it lasts are exact, and a test of minutes runs in a moment.
@Suite struct VirtualTimePlayerTests {
    /// Shows pictures, noting when in virtual time; pauses the player at the tenth.
    final class PausingSink: VideoSink, Sendable {
        let clock: VirtualClock
        let shown = Mutex<[(pts: Int64, at: Duration)]>([])
        let player = Mutex<LivePlayer?>(nil)

        init(clock: VirtualClock) { self.clock = clock }

        func present(_ frame: VideoFrame, timing: FrameTiming) {
            let count = shown.withLock { shown in
                shown.append((timing.pts.milliseconds, clock.now.offset))
                return shown.count
            }
            if count == 10 { player.withLock { $0 }?.pause() }
        }
    }

    /// Keeps what it is told; resumes the player after three statuses that say it is paused.
    final class ResumingListener: LivePlayListener, Sendable {
        let player = Mutex<LivePlayer?>(nil)
        let events = Mutex<[PlayEvent]>([])
        let pausedStatuses = Mutex(0)

        func onPlayEvent(_ event: PlayEvent) { events.withLock { $0.append(event) } }

        func onNetStatus(_ status: NetStatus) {
            guard status.state == "paused" else { return }
            if pausedStatuses.withLock({ count in
                count += 1
                return count == 3
            }) {
                player.withLock { $0 }?.resume()
            }
        }
    }

    @Test func pauseHoldsThePictureAndResumeGoesOnWhereItPaused() async throws {
        let path = try Fixture.h264AAC.path()
        let clock = VirtualClock()
        let sink = PausingSink(clock: clock)
        let listener = ResumingListener()
        let player = LivePlayer(videoSink: sink, clock: clock)
        player.listener = listener
        sink.player.withLock { $0 = player }
        listener.player.withLock { $0 = player }
        let started = ContinuousClock.now
        let outcome = await player.run(url: path)
        let took = ContinuousClock.now - started

        #expect(outcome == .ended)
        let events = listener.events.withLock { $0 }
        let paused = try #require(events.first { $0.code == .paused }, "\(events.map(\.code))")
        let resumed = try #require(events.first { $0.code == .resumed }, "\(events.map(\.code))")
        let pausedFor = Duration.milliseconds(resumed.elapsedMilliseconds - paused.elapsedMilliseconds)
        // Three statuses a second apart said paused before the listener resumed it.
        #expect(pausedFor >= .seconds(2), "paused for \(pausedFor) of virtual time")
        // Every picture of the file once, in order: on demand resumes where it paused, nothing skipped or repeated.
        let shown = sink.shown.withLock { $0 }
        let pictures = try Oracle.packets(path).filter { $0.stream == "video" }.map(\.pts).sorted()
        #expect(shown.map(\.pts) == pictures)
        // Nothing was shown while paused: the picture shown at the pause is held until the resume.
        let pausedAt = Duration.milliseconds(paused.elapsedMilliseconds)
        let resumedAt = Duration.milliseconds(resumed.elapsedMilliseconds)
        let during = shown.filter { $0.at > pausedAt + .milliseconds(50) && $0.at < resumedAt }
        #expect(during.isEmpty, "shown while paused: \(during.map(\.pts))")
        print("paused \(pausedFor) of virtual time; the whole file played in \(took) of real time")
    }
}
