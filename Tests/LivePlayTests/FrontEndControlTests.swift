import Foundation
@testable import LivePlay
import LivePlayTesting
import Logging
import Testing

/// What a front end needs while playing: the planes of a picture without a copy, sinks replaced on the
/// fly, volume and mute without a click, render settings carried to the sink, and the last picture.
/// Sessions run in virtual time on a file, so every figure is the same each run.
@Suite struct FrontEndControlTests {
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
        final class Switcher: VideoSink, @unchecked Sendable {
            var shown: [MediaTimestamp] = []
            let onTenth: () -> Void
            init(onTenth: @escaping () -> Void) { self.onTenth = onTenth }
            func present(_ frame: VideoFrame, timing: FrameTiming) {
                shown.append(timing.pts)
                if shown.count == 10 { onTenth() }
            }
        }
        let first = Switcher { control.setVideoSink(second) }
        control.setRenderMode(.fillScreen)
        control.setRenderRotation(.rotation90)
        let outcome = await Self.run(path, video: first, control: control)
        #expect(outcome == .ended)
        let pictures = try Oracle.packets(path).filter { $0.stream == "video" }.map(\.pts).sorted()
        #expect(first.shown.count >= 10 && first.shown.count <= 12, "the change takes effect within a tick")
        #expect((first.shown + second.pictures.map(\.timing.pts)).map(\.milliseconds) == pictures)
        #expect(second.pictures.allSatisfy { $0.timing.renderMode == .fillScreen && $0.timing.rotation == .rotation90 })
        #expect(control.lastPicture?.pts.milliseconds == pictures.last, "the last picture, for a snapshot")
    }

    @Test func volumeAndMuteRampWithoutAClick() async throws {
        let path = try Fixture.h264AAC.path()
        final class Muter: AudioSink, @unchecked Sendable {
            let inner = SampleSink()
            let control: PlaybackControl
            init(control: PlaybackControl) { self.control = control }
            func play(_ audio: AudioSamples) {
                inner.play(audio)
                if audio.pts.milliseconds >= 1000 { control.setMute(true) }
            }
            var unplayedDuration: Duration? { nil }
        }
        let full = SampleSink()
        _ = await Self.run(path, audio: full, control: PlaybackControl())
        let control = PlaybackControl()
        control.setVolume(50)
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
            func play(_ audio: AudioSamples) { if audio.pts.milliseconds >= 2000 { control.setMute(true) } }
            var unplayedDuration: Duration? { nil }
        }
        let control = PlaybackControl()
        control.enableAudioVolumeEvaluation(.milliseconds(20))  // raised to the 100 ms floor
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
