import Foundation
@testable import LivePlay
import LivePlayTransport
import LivePlayTesting
import Logging
import Testing

/// Media on demand in the library, in virtual time: pause resumes where it paused, a seek shows the picture
/// at its target (decoded from the keyframe at or before it) or, asked to, starts at that keyframe, and the
/// file plays to its end with every picture shown.
@Suite struct OnDemandSessionTests {
    /// A sink that acts when a picture is shown: the test's hand on the controls, at media times.
    final class Controller: VideoSink, @unchecked Sendable {
        private let lock = NSLock()
        private var storedShown: [MediaTimestamp] = []
        private let act: (MediaTimestamp, Int) -> Void

        init(act: @escaping (MediaTimestamp, Int) -> Void) {
            self.act = act
        }

        var shown: [MediaTimestamp] { lock.withLock { storedShown } }

        func present(_ frame: VideoFrame, timing: FrameTiming) {
            let count = lock.withLock {
                storedShown.append(timing.pts)
                return storedShown.count
            }
            act(timing.pts, count)
        }
    }

    static func session(
        _ path: String, clock: VirtualClock, sink: any VideoSink, control: PlaybackControl,
        configuration: LivePlayConfiguration = LivePlayConfiguration()
    ) -> LiveSession<VirtualClock> {
        var quiet = Logger(label: "test")
        quiet.logLevel = .critical
        return LiveSession(
            url: path, configuration: configuration, clock: clock, logger: quiet, videoSink: sink, control: control)
    }

    static func pictures(_ path: String, fromDTS start: Int64 = 0) throws -> [Int64] {
        try Oracle.packets(path).filter { $0.stream == "video" && $0.dts >= start }.map(\.pts).sorted()
    }

    /// Every picture from the one on screen at `target` (the newest at or before it) on.
    static func pictures(_ path: String, onScreenAt target: Int64) throws -> [Int64] {
        let all = try pictures(path)
        let first = all.last { $0 <= target } ?? all.first ?? 0
        return all.filter { $0 >= first }
    }

    /// A sink that pauses `control` at the first picture from 1 s, and when it did.
    static func pausingAtOneSecond(
        _ clock: VirtualClock, _ control: PlaybackControl
    ) -> (sink: Controller, pausedAt: LockedValue<VirtualClock.Instant?>) {
        let pausedAt = LockedValue<VirtualClock.Instant?>(nil)
        let sink = Controller { pts, _ in
            if pts.milliseconds >= 1000, pausedAt.value == nil {
                pausedAt.value = clock.now
                control.send(.pause)
            }
        }
        return (sink, pausedAt)
    }

    @Test func pauseHoldsThePictureAndResumeGoesOnFromWhereItPaused() async throws {
        let path = try Fixture.h264BFramesAAC.path()
        let clock = VirtualClock()
        let control = PlaybackControl()
        let (sink, pausedAt) = Self.pausingAtOneSecond(clock, control)
        let session = Self.session(path, clock: clock, sink: sink, control: control)
        var events: [PlayEvent] = []
        let outcome = await session.run(
            onEvent: { events.append($0) },
            onStatus: { _ in
                // Resume two status seconds after the pause.
                if let paused = pausedAt.value, paused.duration(to: clock.now) >= .seconds(2) { control.send(.resume) }
            })
        #expect(outcome == .ended)
        #expect(sink.shown.map(\.milliseconds) == (try Self.pictures(path)), "nothing skipped across the pause")
        let paused = try #require(events.first { $0.code == .paused })
        let resumed = try #require(events.first { $0.code == .resumed })
        #expect(resumed.elapsedMilliseconds - paused.elapsedMilliseconds >= 1500, "held while paused")
        #expect(resumed.parameters["position_ms"] == paused.parameters["position_ms"], "resumed where it paused")
        #expect(!events.contains { $0.code == .videoDiscontinuity || $0.code == .catchUpSkip })
        #expect(events.last { $0.code != .sessionSummary }?.code == .playEnd)
    }

    /// A seek while paused (after 6 s of pause, far ahead in a file) plays from its target and says so: 9009, 9008
    /// (by the seek: the front end's ▶ follows it), 9010; the paused reads are no slow link (no 2104) and no lost
    /// connection (no 2103) (issue 45, point 6).
    @Test func aSeekWhilePausedResumesAtItsTargetAndSaysSo() async throws {
        let path = try Fixture.longH264AAC.path()
        let clock = VirtualClock()
        let control = PlaybackControl()
        let (sink, pausedAt) = Self.pausingAtOneSecond(clock, control)
        let seeked = LockedValue(false)
        let session = Self.session(path, clock: clock, sink: sink, control: control)
        var events: [PlayEvent] = []
        let outcome = await session.run(
            onEvent: { events.append($0) },
            onStatus: { _ in
                if let paused = pausedAt.value, paused.duration(to: clock.now) >= .seconds(6), !seeked.value {
                    seeked.value = true
                    control.send(.seek(to: .seconds(8)))
                }
            })
        #expect(outcome == .ended)
        let afterPause = events.drop { $0.code != .paused }.map(\.code)
        let seekStart = try #require(afterPause.firstIndex(of: .seekStarted))
        #expect(afterPause.dropFirst(seekStart).prefix(2) == [.seekStarted, .resumed], "\(afterPause)")
        let resumed = try #require(events.first { $0.code == .resumed })
        #expect(resumed.parameters["by"] == .string("seek"))
        #expect(afterPause.contains(.seekDone) && afterPause.last { $0 != .sessionSummary } == .playEnd, "\(afterPause)")
        #expect(!afterPause.contains(.receiveDataLag) && !afterPause.contains(.reconnect), "\(afterPause)")
        #expect(sink.shown.last.map(\.milliseconds) ?? 0 >= 9_500, "played on to the end")
    }

    /// Seeks back to 1.2 s once 2 s has been shown; returns the pictures shown and the events.
    static func seekBack(
        _ path: String, configuration: LivePlayConfiguration = LivePlayConfiguration()
    ) async -> (shown: [Int64], events: [PlayEvent], outcome: PlaybackOutcome) {
        let clock = VirtualClock()
        let control = PlaybackControl()
        let seeked = LockedValue(false)
        let sink = Controller { pts, _ in
            if pts.milliseconds >= 2000, !seeked.value {
                seeked.value = true
                control.send(.seek(to: .milliseconds(1200)))
            }
        }
        let session = Self.session(path, clock: clock, sink: sink, control: control, configuration: configuration)
        var events: [PlayEvent] = []
        let outcome = await session.run(onEvent: { events.append($0) })
        return (sink.shown.map(\.milliseconds), events, outcome)
    }

    @Test func seekingBackShowsThePictureAtTheTargetAndPlaysOnToTheEnd() async throws {
        let path = try Fixture.h264BFramesAAC.path()
        let packets = try Oracle.packets(path).filter { $0.stream == "video" }
        let keyframe = try #require(packets.filter { $0.isKeyframe && $0.dts <= 1200 }.last)
        let expected = try Self.pictures(path, onScreenAt: 1200)
        #expect(expected.first! > keyframe.pts, "the target is not on a keyframe: \(keyframe.pts)")
        let (shown, events, outcome) = await Self.seekBack(path)
        #expect(outcome == .ended)
        let restart = try #require(shown.indices.dropFirst().first { shown[$0] < shown[$0 - 1] })
        #expect(shown[restart] == expected.first, "the first picture after the seek is the one on screen at 1.2 s")
        #expect(Array(shown[restart...]) == expected, "then every picture")
        let done = try #require(events.first { $0.code == .seekDone })
        #expect(done.parameters["position_ms"] == .int(1200))
        #expect(done.parameters["keyframe_ms"] == .int(keyframe.dts))
        #expect(!events.contains { $0.code == .videoDiscontinuity || $0.code == .catchUpSkip })
        #expect(events.last { $0.code != .sessionSummary }?.code == .playEnd)
    }

    @Test func withoutAccurateSeekASeekLandsOnTheKeyframeAtOrBeforeTheTarget() async throws {
        let path = try Fixture.h264BFramesAAC.path()
        let packets = try Oracle.packets(path).filter { $0.stream == "video" }
        let keyframe = try #require(packets.filter { $0.isKeyframe && $0.dts <= 1200 }.last)
        var configuration = LivePlayConfiguration()
        configuration.accurateSeek = false
        let (shown, events, outcome) = await Self.seekBack(path, configuration: configuration)
        #expect(outcome == .ended)
        let restart = try #require(shown.indices.dropFirst().first { shown[$0] < shown[$0 - 1] })
        #expect(shown[restart] == keyframe.pts, "the first picture after the seek is the keyframe at or before it")
        #expect(Array(shown[restart...]) == (try Self.pictures(path, fromDTS: keyframe.dts)), "then every picture")
        let done = try #require(events.first { $0.code == .seekDone })
        #expect(done.parameters["position_ms"] == .int(keyframe.dts))
        #expect(events.last { $0.code != .sessionSummary }?.code == .playEnd)
    }

    @Test func seekingForwardReadsOnWithoutStartingOver() async throws {
        let path = try Fixture.h264BFramesAAC.path()
        let clock = VirtualClock()
        let control = PlaybackControl()
        control.send(.seek(to: .milliseconds(2500)))
        let sink = Controller { _, _ in }
        let session = Self.session(path, clock: clock, sink: sink, control: control)
        var events: [PlayEvent] = []
        _ = await session.run(onEvent: { events.append($0) })
        #expect(sink.shown.map(\.milliseconds) == (try Self.pictures(path, onScreenAt: 2500)))
        #expect(events.filter { $0.code == .playBegin }.count == 1)
    }
}

/// A file source that records where each connection was asked to start.
final class RecordingFileSource: ByteSource, @unchecked Sendable {
    let file: FileByteSource
    private let lock = NSLock()
    private var storedStarts: [Int64] = []

    init(path: String) {
        file = FileByteSource(path: path)
    }

    var starts: [Int64] { lock.withLock { storedStarts } }

    func makeConnection() -> any ByteConnection {
        lock.withLock { storedStarts.append(0) }
        return file.makeConnection()
    }

    func makeConnection(startingAt offset: Int64) -> (any ByteConnection)? {
        // The session asks once, with 0, whether the source can start mid-file at all.
        if offset > 0 { lock.withLock { storedStarts.append(offset) } }
        return file.makeConnection(startingAt: offset)
    }
}

extension OnDemandSessionTests {
    @Test func withAKeyframeIndexASeekReadsFromTheKeyframesByteOffset() async throws {
        let path = try Fixtures.make(
            name: "h264-aac-10s-indexed", extension: "flv",
            Fixture.longH264AAC.ffmpegArguments + ["-flvflags", "add_keyframe_index", "-f", "flv"])
        let clock = VirtualClock()
        let control = PlaybackControl()
        control.send(.seek(to: .milliseconds(7000)))
        let seekedBack = LockedValue(false)
        let sink = Controller { pts, _ in
            if pts.milliseconds >= 8000, !seekedBack.value {
                seekedBack.value = true
                control.send(.seek(to: .milliseconds(2500)))
            }
        }
        let source = RecordingFileSource(path: path)
        var quiet = Logger(label: "test")
        quiet.logLevel = .critical
        let session = LiveSession(
            url: path, configuration: LivePlayConfiguration(), clock: clock, logger: quiet, videoSink: sink,
            control: control, source: source)
        let outcome = await session.run(onEvent: { _ in })
        #expect(outcome == .ended)
        // The start, then the keyframe at 6 s and the one at 2 s, each by its byte offset.
        #expect(source.starts.count == 3 && source.starts.first == 0, "\(source.starts) \(sink.shown.map(\.milliseconds))")
        #expect(source.starts.dropFirst().allSatisfy { $0 > 0 })
        let shown = sink.shown.map(\.milliseconds)
        let restart = try #require(shown.indices.dropFirst().first { shown[$0] < shown[$0 - 1] })
        let ahead = try Self.pictures(path, onScreenAt: 7000)
        #expect(Array(shown[..<restart]) == Array(ahead.prefix(restart)), "from 7 s")
        #expect(Array(shown[restart...]) == (try Self.pictures(path, onScreenAt: 2500)), "then from 2.5 s")
    }
}

/// A value shared between a test and the callbacks of the session it runs.
final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

extension OnDemandSessionTests {
    /// Relative seeks go on from the target of a seek still under way, as mpv's do: a second -2 s asked for while the
    /// first is reading again lands 4 s back, not 2 s back from where playback still is; and a relative seek asked
    /// for with an absolute one in the same turn moves that target.
    @Test func relativeSeeksAddUpOnTheSeekUnderWay() async throws {
        let path = try Fixture.longH264AAC.path()
        let clock = VirtualClock()
        let control = PlaybackControl()
        let asked = LockedValue(0)
        let sink = Controller { pts, _ in
            if pts.milliseconds >= 7000, asked.value == 0 {
                asked.value = 1
                control.send(.seekBy(.seconds(-2)))
            }
        }
        let session = Self.session(path, clock: clock, sink: sink, control: control)
        var targets: [Int64] = []
        _ = await session.run(onEvent: { event in
            guard event.code == .seekStarted, case .int(let target)? = event.parameters["target_ms"] else { return }
            targets.append(target)
            // The first seek has started reading again: the second comes before it lands.
            if asked.value == 1 {
                asked.value = 2
                control.send(.seekBy(.seconds(-2)))
            }
        })
        let first = try #require(targets.first)
        #expect(first >= 4900 && first <= 5100, "2 s back from about 7 s: \(targets)")
        #expect(targets.count == 2 && targets.last == first - 2000, "then 2 s back from that target: \(targets)")
        let shown = sink.shown.map(\.milliseconds)
        let restart = try #require(shown.indices.dropFirst().last { shown[$0] < shown[$0 - 1] })
        #expect(abs(shown[restart] - (first - 2000)) <= 40, "playback lands at the second target: \(shown[restart])")

        let together = PlaybackControl()
        together.send(.seek(to: .seconds(8)))
        together.send(.seekBy(.seconds(-3)))
        var seeks: [Int64] = []
        let plain = Controller { _, _ in }
        _ = await Self.session(path, clock: VirtualClock(), sink: plain, control: together).run(onEvent: { event in
            if event.code == .seekStarted, case .int(let target)? = event.parameters["target_ms"] { seeks.append(target) }
        })
        #expect(seeks == [5000], "8 s, then 3 s back from it: \(seeks)")
    }
}

extension OnDemandSessionTests {
    /// The commands of one turn are carried out in the order sent, each by the stage it is for (issue 46, point 1).
    /// Sent from the sink, on the play loop, they are all taken at the next turn's start. Pause, resume, pause is
    /// each told; pause then seek resumes at the target (a seek resumes); seek then pause holds there.
    @Test func commandsOfOneTurnAreCarriedOutInTheOrderSent() async throws {
        let path = try Fixture.longH264AAC.path()
        let clock = VirtualClock()
        let control = PlaybackControl()
        let step = LockedValue(0)
        let sink = Controller { pts, _ in
            switch (step.value, pts.milliseconds) {
            case (0, 2000...):
                step.value = 1
                control.send(.pause)
                control.send(.resume)
                control.send(.pause)
                control.send(.seek(to: .seconds(6)))
                control.send(.volume(30))
            case (1, 7000...):
                step.value = 2
                control.send(.seekBy(.seconds(-1)))
                control.send(.mute(true))
                control.send(.pause)
            default:
                break
            }
        }
        var events: [PlayEvent] = []
        var pausedAt: VirtualClock.Instant?
        let outcome = await Self.session(path, clock: clock, sink: sink, control: control).run(
            onEvent: { event in
                events.append(event)
                if event.code == .paused { pausedAt = clock.now }
                if event.code == .resumed { pausedAt = nil }
            },
            onStatus: { _ in
                // A pause that holds is resumed after 2 s (the seek's; and one that should not hold, so that the
                // test ends either way).
                if let paused = pausedAt, paused.duration(to: clock.now) >= .seconds(2) {
                    pausedAt = nil
                    control.send(.resume)
                }
            })
        #expect(outcome == .ended)
        let codes: [PlayEventCode] = [.paused, .resumed, .seekStarted]
        let told = events.filter { codes.contains($0.code) }
        #expect(
            told.map(\.code) == [.paused, .resumed, .paused, .seekStarted, .resumed, .seekStarted, .paused, .resumed],
            "\(told.map { "\($0.code) \($0.parameters)" })")
        guard told.count == 8 else { return }
        #expect(told[4].parameters["by"] == .string("seek"), "the first seek resumed: \(told[4].parameters)")
        #expect(told[3].parameters["target_ms"] == .int(6000))
        if case .int(let target)? = told[5].parameters["target_ms"] {
            #expect(target >= 5900 && target <= 6100, "1 s back from about 7 s: \(target)")
        }
        #expect(told[7].elapsedMilliseconds - told[6].elapsedMilliseconds >= 1500, "the second seek's pause held")
        #expect(sink.shown.last.map(\.milliseconds) ?? 0 >= 9_500, "played on to the end")
    }
}
