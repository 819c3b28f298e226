import Glibc
import LivePlayLoudness
import Testing

/// The normaliser on sound made here: a quiet and a loud programme come out at the target (measured by a second
/// meter on what came out), no sample above the peak limit, the gain moving slowly and holding through silence.
struct LoudnessNormalizerTests {
    static let rate = 48_000

    /// `seconds` of stereo noise with a 1 kHz tone in it, at `amplitude`, as 1024-frame blocks.
    static func programme(amplitude: Float, seconds: Double, seed: UInt64 = 1) -> [[Float]] {
        var state = seed
        var blocks: [[Float]] = []
        var frame = 0
        while Double(frame) < seconds * Double(rate) {
            var block = [Float](repeating: 0, count: 2048)
            for index in 0..<1024 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let noise = Float(Int64(bitPattern: state) >> 11) / Float(1 << 52)
                let tone = sin(2 * Float.pi * 1000 * Float(frame + index) / Float(rate))
                let sample = amplitude * (0.5 * noise + 0.5 * tone)
                block[2 * index] = sample
                block[2 * index + 1] = sample
            }
            blocks.append(block)
            frame += 1024
        }
        return blocks
    }

    /// The loudness of `blocks` from `from` seconds on, and their loudest sample.
    static func measure(_ blocks: [[Float]], from: Double = 0) throws -> (shortTerm: Double, peak: Float) {
        let meter = try LoudnessMeter(channels: 2, sampleRate: rate)
        var peak: Float = 0
        for (index, block) in blocks.enumerated() where Double(index * 1024) >= from * Double(rate) {
            meter.add(block)
            peak = max(peak, block.map(abs).max() ?? 0)
        }
        return (meter.shortTerm, peak)
    }

    static func normalised(_ blocks: [[Float]], target: Double) throws -> [[Float]] {
        var normalizer = LoudnessNormalizer(target: target)
        return try blocks.map { block in
            var samples = block
            try normalizer.process(&samples, channels: 2, sampleRate: rate)
            return samples
        }
    }

    @Test(arguments: [0.01, 0.9] as [Float])
    func aQuietAndALoudProgrammeComeOutAtTheTarget(amplitude: Float) throws {
        let input = Self.programme(amplitude: amplitude, seconds: 20)
        let before = try Self.measure(input).shortTerm
        let output = try Self.normalised(input, target: -16)
        let after = try Self.measure(output, from: 10)
        print("loudness: \(before) LUFS in, \(after.shortTerm) LUFS out, peak \(20 * log10(after.peak)) dBFS")
        #expect(abs(before + 16) > 8, "the programme is far from the target: \(before)")
        #expect(abs(after.shortTerm + 16) <= 1, "\(after.shortTerm) LUFS")
        let ceiling = Float(pow(10, LoudnessNormalizer.peakLimit / 20))
        #expect(output.allSatisfy { $0.allSatisfy { abs($0) <= ceiling + 1e-6 } }, "no sample above −1 dBFS")
    }

    /// A +14 dB correction is not a step: between two seconds the gain moves by at most the slew.
    @Test func theGainMovesSlowlyAndHoldsThroughSilence() throws {
        var normalizer = LoudnessNormalizer(target: -16)
        var gains: [Double] = []
        let loud = Self.programme(amplitude: 0.9, seconds: 6)
        let quiet = Self.programme(amplitude: 0.05, seconds: 10)
        let silence = [[Float]](repeating: [Float](repeating: 0, count: 2048), count: 200)
        for block in loud + silence + quiet {
            var samples = block
            try normalizer.process(&samples, channels: 2, sampleRate: Self.rate)
            gains.append(normalizer.appliedGain)
        }
        let perSecond = Self.rate / 1024
        let afterLoud = gains[loud.count - 1]
        let afterSilence = gains[loud.count + silence.count - 1]
        // The pause's first few hundred milliseconds are still in the 400 ms window: the gain moves by less than 1 dB
        // (without the gates it rose 7.5 dB as the 3 s window emptied into the silence).
        #expect(abs(afterSilence - afterLoud) < 1, "silence leaves the gain: \(afterLoud) → \(afterSilence)")
        let start = loud.count + silence.count
        for second in stride(from: start + perSecond, to: gains.count, by: perSecond) {
            #expect(gains[second] - gains[second - perSecond] <= LoudnessNormalizer.gainSlew + 0.1)
        }
        #expect(gains.last! > afterSilence + 10, "the quiet programme is brought up: \(afterSilence) → \(gains.last!)")
    }

    /// A quiet bed with a full-scale click every second: the gain the bed asks for (+20 dB and more) would put each
    /// click far past full scale; the limiter holds every sample at −1 dBFS and the bed still comes up.
    @Test func theLimiterHoldsTransientsThatTheGainWouldClip() throws {
        var input = Self.programme(amplitude: 0.02, seconds: 12)
        for second in 0..<12 {
            let block = second * Self.rate / 1024 + 5
            for index in 0..<64 { input[block][index] = index % 2 == 0 ? 1 : -1 }
        }
        let output = try Self.normalised(input, target: -16)
        let ceiling = Float(pow(10, LoudnessNormalizer.peakLimit / 20))
        let peak = output.joined().map(abs).max() ?? 0
        print("loudness: the clicks' peak \(20 * log10(peak)) dBFS out")
        #expect(peak <= ceiling + 1e-6, "\(20 * log10(peak)) dBFS")
        // The clicks count in the programme's loudness (about −25 LUFS with them, −36 without), so the gain asked is
        // about +9 dB; between the clicks the limiter gives it back within 0.3 s, so the bed comes up by nearly that.
        func bed(_ blocks: [[Float]]) throws -> Double {
            try Self.measure(Array(blocks[(8 * Self.rate / 1024)...]).map { $0.map { abs($0) >= 0.5 ? 0 : $0 } }).shortTerm
        }
        let (before, after) = (try bed(input), try bed(output))
        print("loudness: the bed \(before) → \(after) LUFS")
        #expect(after - before > 8, "the bed is brought up: \(before) → \(after) LUFS")
    }
}
