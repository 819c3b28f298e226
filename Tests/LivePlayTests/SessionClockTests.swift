import Foundation
import LivePlayTesting
import Logging
import Synchronization
import Testing

@testable import LivePlay

/// A session asks its clock how to wait on it, never what type it is: a real-time clock has its waits timed by the
/// session's thread, a clock with a time of its own is slept on.
@Suite struct SessionClockTests {
    /// The real clock under another type, counting the sleeps asked of it; it says it runs in real time or not.
    final class CountingClock: SessionClock, Sendable {
        let realTime: Bool
        let sleeps = Mutex(0)

        init(realTime: Bool) { self.realTime = realTime }

        var now: ContinuousClock.Instant { .now }
        var minimumResolution: Duration { ContinuousClock().minimumResolution }

        // The clock's own sleep, counted: what the test looks at, not a wait of the test's.
        func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
            sleeps.withLock { $0 += 1 }
            try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
        }

        func realInstant(_ instant: ContinuousClock.Instant) -> ContinuousClock.Instant? { realTime ? instant : nil }
    }

    final class CountingSink: VideoSink, Sendable {
        let pictures = Mutex(0)
        func present(_ frame: VideoFrame, timing: FrameTiming) { pictures.withLock { $0 += 1 } }
    }

    /// Plays a file on `clock` until it has shown 12 pictures (about half a second), then stops: the sleeps asked of
    /// the clock, and the pictures shown.
    static func playHalfASecond(on clock: CountingClock) async throws -> (sleeps: Int, pictures: Int) {
        let path = try Fixture.h264BFramesAAC.path()
        let sink = CountingSink()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var quiet = Logger(label: "test")
                quiet.logLevel = .critical
                let session = LiveSession(
                    url: path, configuration: LivePlayConfiguration(), clock: clock, logger: quiet, videoSink: sink)
                _ = await session.run(onEvent: { _ in })
            }
            _ = await eventually { sink.pictures.withLock { $0 } >= 12 }
            group.cancelAll()
        }
        return (clock.sleeps.withLock { $0 }, sink.pictures.withLock { $0 })
    }

    @Test func aRealTimeClockOfAnyTypeIsTimedByTheSessionsThread() async throws {
        let played = try await Self.playHalfASecond(on: CountingClock(realTime: true))
        #expect(played.pictures >= 12)
        #expect(played.sleeps == 0)
    }

    @Test func aClockWithATimeOfItsOwnIsSleptOnEveryTick() async throws {
        let played = try await Self.playHalfASecond(on: CountingClock(realTime: false))
        #expect(played.pictures >= 12)
        // 10 ms ticks for about half a second: dozens of sleeps (a loaded machine turns fewer).
        #expect(played.sleeps >= 10)
    }

    @Test func theRealClockRunsInRealTimeAndAVirtualOneDoesNot() {
        let now = ContinuousClock.now
        #expect(ContinuousClock().realInstant(now) == now)
        #expect(VirtualClock().realInstant(VirtualClock().now) == nil)
    }
}
