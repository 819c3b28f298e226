import Foundation
import LivePlay
import LivePlayTesting
import LivePlayWindow
import Testing

/// The sound device through SDL's `disk` driver (`SDL_AUDIODRIVER=disk`): what the device was given lands in a
/// file at the device's pace, so the sink's clock and content can be checked without a sound card.
@Suite(.serialized) struct DeviceAudioSinkTests {
    /// How many float samples the device has written to `path` so far (its size: no need to read it).
    static func written(_ path: String) -> Int {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        return ((attributes?[.size] as? NSNumber)?.intValue ?? 0) / MemoryLayout<Float>.size
    }

    @Test func theDeviceGetsTheSamplesAndReportsWhatItHoldsUnplayed() async throws {
        let path = NSTemporaryDirectory() + "liveplay-disk-audio-\(UUID().uuidString).raw"
        defer { try? FileManager.default.removeItem(atPath: path) }
        setenv("SDL_AUDIODRIVER", "disk", 1)
        setenv("SDL_DISKAUDIOFILE", path, 1)
        let sink = try DeviceAudioSink()
        // One second of a 1 kHz tone, stereo 44.1 kHz, in 100 ms blocks.
        var samples: [Float] = []
        for frame in 0..<44_100 {
            let value = Float(sin(2 * Double.pi * 1000 * Double(frame) / 44_100) * 0.5)
            samples += [value, -value]
        }
        for block in 0..<10 {
            let slice = Array(samples[block * 8820..<(block + 1) * 8820])
            sink.play(
                AudioSamples(
                    pts: MediaTimestamp(milliseconds: Int64(block * 100)), sampleRate: 44_100, channels: 2,
                    samples: slice, rate: 1))
        }
        let held = try #require(sink.unplayedDuration)
        #expect(held > .milliseconds(900) && held <= .milliseconds(1100), "a second queued: \(held)")
        // The device plays in real time: half a second of it is heard in about half a second (generous bounds:
        // 250 to 800 ms played in 500 ms, as it was measured before).
        let start = ContinuousClock.now
        let halfPlayed = await eventually { (sink.unplayedDuration ?? held) <= held - .milliseconds(500) }
        let took = start.duration(to: .now)
        #expect(halfPlayed, "\(held) then \(String(describing: sink.unplayedDuration))")
        #expect(took > .milliseconds(310) && took < .milliseconds(1000), "half a second played in \(took)")
        // Until the whole second is in the file: the sound, not the file's size, which a buffer of leading silence
        // (below) fills earlier (closed then, the device lost the last 68 frames once).
        func written() -> [Float] {
            ((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()).withUnsafeBytes {
                Array($0.bindMemory(to: Float.self))
            }
        }
        #expect(
            await eventually { HeardSound(heard: written(), given: samples).aligned.count >= samples.count },
            "the whole second reached the device")
        sink.close()
        let written = written()
        // Sample for sample as given, after at most one buffer of silence SDL2 may play first (``HeardSound``); the
        // second is queued at once, so the device never runs dry.
        let heard = HeardSound(heard: written, given: samples)
        #expect(heard.mismatchAt == nil, "as given, sample for sample; it differs at \(heard.mismatchAt ?? -1)")
        #expect(heard.leadingSilence <= 1024 * 2, "\(heard.leadingSilence) samples of silence before the sound")
        #expect(heard.underruns.isEmpty, "the device ran dry: \(heard.underruns)")
        #expect(heard.aligned.count == samples.count, "the whole second reached the device")
    }

    /// A switch lets go of what the device still holds: it fades out within 10 ms after the device's own buffer,
    /// with no sample-to-sample step above the tone's own (a cut would step by up to its peak).
    @Test func fadingOutLetsTheQueuedSoundGoWithoutAClick() async throws {
        let path = NSTemporaryDirectory() + "liveplay-disk-fade-\(UUID().uuidString).raw"
        defer { try? FileManager.default.removeItem(atPath: path) }
        setenv("SDL_AUDIODRIVER", "disk", 1)
        setenv("SDL_DISKAUDIOFILE", path, 1)
        let sink = try DeviceAudioSink()
        let samples = (0..<44_100).map { Float(sin(2 * Double.pi * 1000 * Double($0) / 44_100) * 0.5) }
        for block in 0..<10 {
            sink.play(
                AudioSamples(
                    pts: MediaTimestamp(milliseconds: Int64(block * 100)), sampleRate: 44_100, channels: 1,
                    samples: Array(samples[block * 4410..<(block + 1) * 4410]), rate: 1))
        }
        // A third of the second played, then the switch.
        let held = try #require(sink.unplayedDuration)
        #expect(await eventually { (sink.unplayedDuration ?? held) <= held - .milliseconds(300) })
        sink.fadeOutUnplayed()
        #expect((sink.unplayedDuration ?? .zero) < .milliseconds(60), "only the fade and the device's buffer are left")
        // Until the device has written 0.7 s, well past the half second by which the sound must have ended.
        #expect(await eventually { Self.written(path) >= 44_100 * 7 / 10 }, "\(Self.written(path)) samples written")
        sink.close()
        let heard = try Data(contentsOf: URL(fileURLWithPath: path)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let lastSound = try #require(heard.lastIndex { abs($0) > 1e-4 })
        print("fade-out: sound ends at \(Double(lastSound) / 44.1) ms of the 1000 queued")
        #expect(lastSound < 44_100 / 2, "the rest of the second is not played")
        let step = zip(heard, heard.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        #expect(step < Float(2 * Double.pi * 1000 / 44_100 * 0.5 * 1.2), "no click: the largest step is \(step)")
    }
}
