import Foundation
import LivePlay
import LivePlayTesting
import Synchronization
import Testing

/// Multichannel sound folded to stereo for a sink that takes two channels, as FFmpeg's `-ac 2` folds it.
@Suite struct DownmixTests {
    /// A sink that takes two channels and keeps every sample.
    final class StereoSink: AudioSink, Sendable {
        private let samples = Mutex<[Float]>([])
        private let formats = Mutex<Set<Int>>([])
        var unplayedDuration: Duration? { nil }
        var maximumChannels: Int? { 2 }
        func play(_ audio: AudioSamples) {
            samples.withLock { $0 += audio.samples }
            formats.withLock { _ = $0.insert(audio.channels) }
        }
        var received: [Float] { samples.withLock { $0 } }
        var channelCounts: Set<Int> { formats.withLock { $0 } }
    }

    @Test(arguments: [EnhancedFixture.Codec.ac3, .eac3, .flac, .opus])
    func fiveOneIsFoldedAsFFmpegFoldsIt(_ codec: EnhancedFixture.Codec) async throws {
        // libopus takes 5.1 with back surrounds only.
        let fixture = try EnhancedFixture.make(codec, layout: codec == .opus ? "5.1" : "5.1(side)")
        let sink = StereoSink()
        let recording = await SessionRecording.record(
            fixture.path, configuration: LivePlayConfiguration(), limit: .seconds(20), audioSink: sink)
        #expect(recording.codes.contains(2006), "\(recording.codes)")
        #expect(sink.channelCounts == [2])
        // The down-mix is reported once, with the layout it folds.
        let reports = recording.events.filter { $0.code == .audioDownmix }
        #expect(reports.count == 1, "\(reports.map(\.message))")
        #expect(reports.first?.parameters["layout"] == .string(codec == .opus ? "5.1" : "5.1(side)"))
        #expect(reports.first?.parameters["channels"] == .int(6))
        // 16-bit output, as the device and a WAV get it: libswresample then scales its matrix so a full-scale
        // input cannot clip (its float output is not scaled, and can exceed 1.0), and so does liveplay.
        let raw = try ExternalTool.check(
            "ffmpeg", ["-v", "error", "-nostdin", "-i", fixture.sourcePath, "-ac", "2", "-f", "s16le", "-"]
        ).standardOutput
        let expected = raw.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }.map { Float($0) / 32768 }
        let ours = sink.received
        #expect(expected.count > 48000 * 2)
        #expect(abs(ours.count - expected.count) <= 2 * 4608, "\(ours.count) vs \(expected.count)")
        let compared = min(ours.count, expected.count)
        var error: Float = 0
        var signal: Float = 0
        for index in 0..<compared {
            error += (ours[index] - expected[index]) * (ours[index] - expected[index])
            signal += expected[index] * expected[index]
        }
        let snr = 10 * log10(signal / max(error, .leastNonzeroMagnitude))
        // 16-bit quantization of a −18 dBFS tone limits the agreement to about 70 dB.
        #expect(snr > 55, "\(codec): \(snr) dB against ffmpeg -ac 2")
    }
}
