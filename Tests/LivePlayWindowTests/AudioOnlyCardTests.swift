import LivePlay
@testable import LivePlayWindow
import Testing

/// The audio-only layout's promise without a window: the bar keeps only what sound has (no rendition, captions or
/// fullscreen) and never hides; the meter's readings are peaks in dBFS that fall at 20 dB a second of sound.
struct AudioOnlyCardTests {
    let view = PictureSize(width: 960, height: 540)

    @Test func theAudioOnlyBarHasNoPictureControlsAndStaysShown() {
        for timeline in [PlayerWindow.Timeline.live, .onDemand(position: 5, duration: 30),
            .timeShift(position: 10, start: 0, end: 60, atLiveEdge: false)]
        {
            var bar = ControlBar()
            bar.timeline = timeline
            bar.rendition = "AUTO 240P"
            let picture = Set(bar.layout(in: view).controls.map(\.control))
            bar.audioOnly = true
            let sound = Set(bar.layout(in: view).controls.map(\.control))
            #expect(picture.isSuperset(of: [.rendition, .captions, .fullscreen]), "\(timeline)")
            #expect(sound == picture.subtracting([.rendition, .captions, .fullscreen]), "\(timeline): \(sound)")
            // Never asked for, an hour on: shown.
            #expect(bar.isVisible(at: .seconds(3600)))
        }
        var bar = ControlBar()
        bar.audioOnly = true
        // The mute button and the slider end the row at its right, where the picture layout has fullscreen.
        let volume = bar.layout(in: view).controls.first { $0.control == .volume }?.frame
        #expect(volume.map { $0.x + $0.width } == view.width - ControlBar.height(forWindowHeight: view.height) / 4)
    }

    static func samples(_ value: Float, seconds: Double, rate: Int = 48_000, channels: Int = 2) -> AudioSamples {
        let frames = Int(Double(rate) * seconds)
        return AudioSamples(
            pts: .zero, sampleRate: rate, channels: channels,
            samples: (0..<(frames * channels)).map { $0 % 2 == 0 ? value : -value }, rate: 1)
    }

    @Test func theMeterReadsPeaksAndFallsAtTwentyDecibelsASecond() throws {
        var meter = PeakMeter()
        // 0.5: −6.02 dBFS, two 50 ms blocks.
        let loud = meter.measure(Self.samples(0.5, seconds: 0.1))
        #expect(loud.count == 2 && loud.allSatisfy { abs($0 + 6.02) < 0.01 }, "\(loud)")
        // Silence: 1 dB less each block, until the floor, then nothing (−∞).
        let falling = meter.measure(Self.samples(0, seconds: 3))
        #expect(falling.count == 60)
        #expect(abs(falling[0] + 7.02) < 0.01 && abs(falling[9] + 16.02) < 0.01, "\(falling.prefix(10))")
        #expect(falling.last == -.infinity)
        // A block split across two hand-overs is still one block: 30 ms, then 20 ms.
        var split = PeakMeter()
        #expect(split.measure(Self.samples(0.25, seconds: 0.03)).isEmpty)
        let joined = split.measure(Self.samples(0.25, seconds: 0.02))
        #expect(joined.count == 1 && abs(joined[0] + 12.04) < 0.01, "\(joined)")
        #expect(AudioOnlyCard.meterFraction(-6) == 0.9 && AudioOnlyCard.meterFraction(-.infinity) == 0)
        #expect(AudioOnlyCard.meterFraction(3) == 1 && AudioOnlyCard.meterFraction(-80) == 0)
    }
}
