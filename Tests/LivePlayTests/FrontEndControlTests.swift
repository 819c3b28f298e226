import Foundation
@testable import LivePlay
import LivePlayTesting
import Logging
import Testing

/// What a front end needs while playing: the planes of a picture without a copy, sinks replaced on the
/// fly, volume and mute without a click, render settings carried to the sink, and the last picture.
/// Sessions run in virtual time on a file, so every figure is the same each run.
@Suite struct FrontEndControlTests {
    /// Keeps the timing of every picture and acts once, when the tenth is shown (mid-playback).
    final class TenthPictureSink: VideoSink, @unchecked Sendable {
        var shown: [FrameTiming] = []
        let onTenth: () -> Void
        init(onTenth: @escaping () -> Void) { self.onTenth = onTenth }
        func present(_ frame: VideoFrame, timing: FrameTiming) {
            shown.append(timing)
            if shown.count == 10 { onTenth() }
        }
    }

    /// Keeps every sample it is given.
    final class SampleSink: AudioSink, @unchecked Sendable {
        private let lock = NSLock()
        private var blocks: [AudioSamples] = []

        func play(_ audio: AudioSamples) { lock.withLock { blocks.append(audio) } }
        var unplayedDuration: Duration? { nil }
        var played: [AudioSamples] { lock.withLock { blocks } }
    }

    static func run(
        _ path: String, video: (any VideoSink)? = nil, audio: (any AudioSink)? = nil, control: PlaybackControl,
        onEvent: @escaping @Sendable (PlayEvent) -> Void = { _ in }
    ) async -> PlaybackOutcome {
        var quiet = Logger(label: "test")
        quiet.logLevel = .critical
        let session = LiveSession(
            url: path, configuration: LivePlayConfiguration(), clock: VirtualClock(), logger: quiet, videoSink: video,
            audioSink: audio, control: control)
        return await session.run(onEvent: onEvent)
    }

    @Test func planesAreTheDecodersOwnRowsWithTheirStrides() throws {
        let reader = try MediaReader(path: try Fixture.videoOnly.path(), options: MediaReader.Options(decodes: true))
        var frame: VideoFrame?
        while frame == nil, let event = try reader.next() {
            if case .videoFrame(let decoded) = event { frame = decoded }
        }
        let picture = try #require(frame)
        #expect(picture.pixelFormat == "yuv420p" && picture.width == 318 && picture.height == 238)
        let packed = picture.withPlanes { planes -> [UInt8] in
            #expect(planes.map(\.rows) == [238, 119, 119])
            #expect(planes.map(\.rowBytes) == [318, 159, 159])
            #expect(planes.allSatisfy { $0.stride >= $0.rowBytes && $0.bytes.count == $0.stride * $0.rows })
            // Rows without their padding, plane after plane, are ffmpeg's rawvideo layout.
            return planes.flatMap { plane in
                (0..<plane.rows).flatMap { row in plane.bytes[(row * plane.stride)..<(row * plane.stride + plane.rowBytes)] }
            }
        }
        #expect(packed == picture.packedBytes())
    }

    @Test func aSinkReplacedWhilePlayingGetsEveryPictureFromThenOn() async throws {
        let path = try Fixture.h264AAC.path()
        let control = PlaybackControl()
        let second = RecordingSink()
        let first = TenthPictureSink { control.setVideoSink(second) }
        control.send(.renderMode(.fillScreen))
        control.send(.rotation(.rotation90))
        let outcome = await Self.run(path, video: first, control: control)
        #expect(outcome == .ended)
        let pictures = try Oracle.packets(path).filter { $0.stream == "video" }.map(\.pts).sorted()
        #expect(first.shown.count >= 10 && first.shown.count <= 12, "the change takes effect within a tick")
        #expect((first.shown.map(\.pts) + second.pictures.map(\.timing.pts)).map(\.milliseconds) == pictures)
        #expect(second.pictures.allSatisfy { $0.timing.renderMode == .fillScreen && $0.timing.rotation == .rotation90 })
        #expect(control.lastPicture?.pts.milliseconds == pictures.last, "the last picture, for a snapshot")
    }

    /// One control surface, typed state back: relative commands act on what the session holds when they arrive (two
    /// presses are two steps, with no copy kept by the front end), and what the session is comes back as a
    /// ``PlaybackState`` when it changes, its timeline once a second (with the net status), not as event keys to parse.
    @Test func relativeCommandsActOnWhatTheSessionHoldsAndItsStateComesBackTyped() async throws {
        let path = try Fixture.h264AAC.path()
        let control = PlaybackControl()
        let sink = TenthPictureSink {
            for command: PlayerCommand in [
                .changeVolume(by: -30), .changeVolume(by: -30), .toggleMute, .rotateClockwise, .rotateClockwise,
                .togglePause, .togglePause, .changeVolume(by: -90),
            ] { control.send(command) }
        }
        let states = Locked<[PlaybackState]>([])
        let codes = Locked<[Int]>([])
        var quiet = Logger(label: "test")
        quiet.logLevel = .critical
        let session = LiveSession(
            url: path, configuration: LivePlayConfiguration(), clock: VirtualClock(), logger: quiet, videoSink: sink,
            control: control)
        let outcome = await session.run(
            onEvent: { event in if [9007, 9008].contains(event.code.rawValue) { codes.set(codes.get() + [event.code.rawValue]) } },
            onState: { state in states.set(states.get() + [state]) })
        #expect(outcome == .ended)
        let told = states.get()
        #expect(zip(told, told.dropFirst()).allSatisfy { $0 != $1 }, "told only when it changed")
        let last = try #require(told.last)
        #expect(last.volume == 0 && last.muted && last.rotation == .rotation180 && !last.paused, "\(last)")
        #expect(codes.get() == [9007, 9008], "the two presses of pause paused and resumed: \(codes.get())")
        #expect(told.contains { $0.volume == 100 } && !told.contains { $0.volume == 70 }, "one turn's commands, one state")
        #expect(sink.shown.last?.rotation == .rotation180)
        let length = Double(try Oracle.packets(path).map(\.pts).max() ?? 0) / 1000
        guard case .onDemand(let position, let duration) = last.timeline else {
            Issue.record("a file's timeline is on demand: \(last.timeline)")
            return
        }
        #expect(abs((duration ?? 0) - length) < 0.3 && position > 1 && position <= length + 0.1, "\(last.timeline)")
        let moves = told.map(\.timeline).reduce(into: [PlaybackState.Timeline]()) { if $0.last != $1 { $0.append($1) } }
        #expect(moves.count >= 2 && Double(moves.count) <= length + 3, "about once a second: \(moves.count) for \(length) s")
        #expect(last.startup?.firstShown != nil, "the startup, once the first picture was shown")
        let phases = told.map(\.phase).reduce(into: [PlaybackState.Phase]()) { if $0.last != $1 { $0.append($1) } }
        // Pause and resume came in one turn: the state told at its end was never paused.
        #expect(phases.contains(.playing) && !phases.contains(.paused), "\(phases)")
    }

    @Test func volumeAndMuteRampWithoutAClick() async throws {
        let path = try Fixture.h264AAC.path()
        final class Muter: AudioSink, @unchecked Sendable {
            let inner = SampleSink()
            let control: PlaybackControl
            init(control: PlaybackControl) { self.control = control }
            func play(_ audio: AudioSamples) {
                inner.play(audio)
                if audio.pts.milliseconds >= 1000 { control.send(.mute(true)) }
            }
            var unplayedDuration: Duration? { nil }
        }
        let full = SampleSink()
        _ = await Self.run(path, audio: full, control: PlaybackControl())
        let control = PlaybackControl()
        control.send(.volume(50))
        let sink = Muter(control: control)
        _ = await Self.run(path, audio: sink, control: control)
        let peak = { (sink: SampleSink) in sink.played.filter { $0.pts.milliseconds < 900 }.flatMap(\.samples).map(abs).max() ?? 0 }
        let ratio = peak(sink.inner) / peak(full)
        #expect(ratio > 0.45 && ratio < 0.55, "volume 50 halves the sound from its first sample: \(ratio)")
        // Steps between neighbouring samples stay those of the 440 Hz tone: no jump when muting.
        let samples = sink.inner.played.flatMap(\.samples)
        let steps = zip(samples, samples.dropFirst()).map { abs($1 - $0) }
        let toneSteps = zip(full.played.flatMap(\.samples), full.played.flatMap(\.samples).dropFirst()).map { abs($1 - $0) }
        #expect(steps.max()! <= toneSteps.max()! * 0.6, "no click: largest step \(steps.max()!) vs \(toneSteps.max()!)")
        // Muted from the block after 1 s on: silence within 10 ms of sound.
        let muted = sink.inner.played.filter { $0.pts.milliseconds >= 1200 }.flatMap(\.samples)
        #expect(!muted.isEmpty && muted.allSatisfy { $0 == 0 })
    }

    /// TXLivePlayer's `enableAudioVolumeEvaluation`: a level every interval, from the sound actually played (so
    /// muting shows as 0), never more often than every 100 ms.
    @Test func theSoundsLevelIsReportedEveryIntervalAndFollowsMute() async throws {
        let path = try Fixture.h264AAC.path()
        final class Muter: AudioSink, @unchecked Sendable {
            let control: PlaybackControl
            init(control: PlaybackControl) { self.control = control }
            func play(_ audio: AudioSamples) { if audio.pts.milliseconds >= 2000 { control.send(.mute(true)) } }
            var unplayedDuration: Duration? { nil }
        }
        let control = PlaybackControl()
        control.send(.volumeEvaluation(.milliseconds(20)))  // raised to the 100 ms floor
        let events = Locked<[PlayEvent]>([])
        _ = await Self.run(path, audio: Muter(control: control), control: control) { event in
            if event.code == .audioVolume { events.set(events.get() + [event]) }
        }
        let levels = events.get()
        let times = levels.map(\.elapsedMilliseconds)
        #expect(levels.count >= 20 && levels.count <= 32, "about every 100 ms over 3 s: \(times)")
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= 100 }, "\(times)")
        let volume = { (event: PlayEvent) -> Int64 in if case .int(let value)? = event.parameters["volume"] { value } else { -1 } }
        let loud = levels.filter { $0.elapsedMilliseconds > 1200 && $0.elapsedMilliseconds < 1900 }.map(volume)
        #expect(!loud.isEmpty && loud.allSatisfy { $0 > 10 && $0 <= 100 }, "the tone plays: \(loud)")
        let quiet = levels.filter { $0.elapsedMilliseconds > 2400 }.map(volume)
        #expect(!quiet.isEmpty && quiet.allSatisfy { $0 == 0 }, "muted: \(quiet)")
    }
}
