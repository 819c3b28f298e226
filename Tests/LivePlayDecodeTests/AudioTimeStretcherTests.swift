import Foundation
import LivePlayDecode
import Testing

// Performance sanity (measured, not asserted): 10 s of 48 kHz stereo in 1,024-frame chunks with the default
// 20 ms window and 15 ms search, process CPU time on one core of the 2-core x86-64 dev box: release
// (`swiftc -O`) about 700× realtime at 1.2× and 330× at 0.9× (more output hops per input second); debug about
// 17× and 13×; passthrough at 1.0 is a copy (thousands ×). The coarse-to-fine similarity search dominates.

@Suite struct AudioTimeStretcherTests {
    static let sampleRate = 48_000

    @Test(arguments: [1.2, 1.1, 0.9])
    func outputLastsInputDividedByRate(rate: Double) {
        let input = tones([(440, 0.4), (1_000, 0.2)], seconds: 10, channels: 2)
        var stretcher = AudioTimeStretcher(sampleRate: Self.sampleRate, channels: 2)
        stretcher.rate = rate
        let output = stretch(input, with: &stretcher, chunkFrames: 1_024)
        let expected = Double(input.count / 2) / rate
        #expect(abs(Double(output.count / 2) - expected) <= 0.01 * expected + Double(stretcher.windowFrames))
        #expect(output.count % 2 == 0)
    }

    @Test func aSineKeepsItsPitchAtCatchUpRate() {
        let input = tones([(440, 0.8)], seconds: 3, channels: 1)
        var stretcher = AudioTimeStretcher(sampleRate: Self.sampleRate, channels: 1)
        stretcher.rate = 1.2
        let output = stretch(input, with: &stretcher, chunkFrames: 1_024)
        // Stretched, not just copied: 3 s in, 2.5 s out.
        #expect(abs(Double(output.count) - 2.5 * Double(Self.sampleRate)) <= Double(stretcher.windowFrames))
        let steady = Array(output[stretcher.windowFrames..<(output.count - stretcher.windowFrames)])
        let measured = zeroCrossingFrequency(steady, sampleRate: Self.sampleRate)
        #expect(abs(measured - 440) <= 440 * 0.02, "measured \(measured) Hz")
        // Naive resampling would play it at 528 Hz, far outside that tolerance.
        #expect(abs(440 * 1.2 - 440) > 440 * 0.02)
        let peak = peakFrequency(hannWindowed(Array(steady.prefix(Self.sampleRate / 2))), in: 350...700, step: 1)
        #expect(abs(peak - 440) <= 440 * 0.02, "DFT peak \(peak) Hz")
    }

    @Test func twoTonesKeepBothPeaks() {
        let input = tones([(440, 0.4), (1_000, 0.4)], seconds: 2, channels: 2)
        var stretcher = AudioTimeStretcher(sampleRate: Self.sampleRate, channels: 2)
        stretcher.rate = 1.15
        let output = stretch(input, with: &stretcher, chunkFrames: 1_024)
        let left = channel(0, of: output, channels: 2)
        let middle = hannWindowed(
            Array(left[(left.count / 2 - Self.sampleRate / 4)..<(left.count / 2 + Self.sampleRate / 4)]))
        let low = peakFrequency(middle, in: 350...700, step: 2)
        let high = peakFrequency(middle, in: 800...1_300, step: 2)
        #expect(abs(low - 440) <= 440 * 0.02, "low peak \(low) Hz")
        #expect(abs(high - 1_000) <= 1_000 * 0.02, "high peak \(high) Hz")
        let lowMagnitude = magnitude(of: middle, at: low)
        let highMagnitude = magnitude(of: middle, at: high)
        // Equal tones in, comparable peaks out; nothing where naive resampling would put them.
        #expect(lowMagnitude > 0.7 * highMagnitude && highMagnitude > 0.7 * lowMagnitude)
        #expect(magnitude(of: middle, at: 440 * 1.15) < 0.05 * lowMagnitude)
        #expect(magnitude(of: middle, at: 1_000 * 1.15) < 0.05 * highMagnitude)
    }

    @Test func rateOneIsBitExactPassthroughWithoutLatency() {
        let input = noise(frames: 50_000, channels: 2)
        var stretcher = AudioTimeStretcher(sampleRate: Self.sampleRate, channels: 2)
        stretcher.rate = 1.0
        var output: [Float] = []
        var start = 0
        let chunkFrames = [1, 37, 1_024, 5_000, 3]
        while start < input.count {
            let end = min(input.count, start + 2 * chunkFrames[output.count % chunkFrames.count])
            let chunk = Array(input[start..<end])
            let produced = stretcher.process(chunk)
            #expect(produced == chunk)
            #expect(stretcher.latency == .zero)
            output += produced
            start = end
        }
        #expect(stretcher.flush().isEmpty)
        #expect(output == input)
    }

    @Test(arguments: [1.2, 0.85])
    func outputDoesNotDependOnChunking(rate: Double) {
        let sine = tones([(330, 0.3), (2_500, 0.1)], seconds: 2, channels: 2)
        let hiss = noise(frames: sine.count / 2, channels: 2)
        let input = zip(sine, hiss).map { $0 + 0.05 * $1 }
        var reference: [Float]?
        for chunkFrames in [1, 37, 1_024, input.count / 2] {
            var stretcher = AudioTimeStretcher(sampleRate: Self.sampleRate, channels: 2)
            stretcher.rate = rate
            let output = stretch(input, with: &stretcher, chunkFrames: chunkFrames)
            if let reference {
                #expect(output == reference, "chunks of \(chunkFrames) frames")
            } else {
                reference = output
            }
        }
    }

    @Test func flushReturnsExactlyTheLatency() {
        let input = tones([(440, 0.5)], seconds: 1, channels: 2)
        var stretcher = AudioTimeStretcher(sampleRate: Self.sampleRate, channels: 2)
        stretcher.rate = 1.2
        _ = stretcher.process(Array(input[..<(12_345 * 2)]))
        let held = stretcher.latency
        #expect(held > .zero && held <= .milliseconds(35))
        let tail = stretcher.flush()
        #expect(Duration.seconds(tail.count / 2) / Self.sampleRate == held)
        #expect(stretcher.latency == .zero)
        #expect(stretcher.flush().isEmpty)
    }

    @Test func everyChannelUsesTheSameSegments() {
        let mono = tones([(440, 0.6), (1_700, 0.2)], seconds: 1, channels: 1)
        let input = mono.flatMap { [$0, 0.5 * $0] }
        var stretcher = AudioTimeStretcher(sampleRate: Self.sampleRate, channels: 2)
        stretcher.rate = 1.2
        let output = stretch(input, with: &stretcher, chunkFrames: 1_024)
        #expect(channel(1, of: output, channels: 2) == channel(0, of: output, channels: 2).map { 0.5 * $0 })
    }

    @Test(arguments: [1.2, 1.1, 0.9, 0.8])
    func splicesDoNotClick(rate: Double) {
        let input = tones([(440, 0.8)], seconds: 2, channels: 2)
        var stretcher = AudioTimeStretcher(sampleRate: Self.sampleRate, channels: 2)
        stretcher.rate = rate
        let output = stretch(input, with: &stretcher, chunkFrames: 1_024)
        for index in 0..<2 {
            let limit = 1.5 * largestStep(channel(index, of: input, channels: 2))
            let worst = largestStep(channel(index, of: output, channels: 2))
            #expect(worst <= limit, "channel \(index): step \(worst), input's largest \(limit / 1.5)")
        }
    }

    @Test func rateChangesMidStreamKeepDurationAndContinuity() {
        let input = tones([(440, 0.8)], seconds: 6, channels: 2)
        let chunkFrames = 1_024
        var stretcher = AudioTimeStretcher(sampleRate: Self.sampleRate, channels: 2)
        var output: [Float] = []
        var expectedFrames = 0.0
        var start = 0
        while start < input.count {
            let end = min(input.count, start + chunkFrames * 2)
            let seconds = Double(start / 2) / Double(Self.sampleRate)
            stretcher.rate = seconds < 1 || seconds >= 4 ? 1.0 : 1.2
            expectedFrames += Double((end - start) / 2) / stretcher.rate
            output += stretcher.process(Array(input[start..<end]))
            start = end
        }
        // Back at 1.0 the held tail came out with the next chunk; nothing is held now.
        #expect(stretcher.latency == .zero)
        #expect(stretcher.flush().isEmpty)
        let tolerance = Double(stretcher.windowFrames + 2 * stretcher.searchFrames)
        #expect(abs(Double(output.count / 2) - expectedFrames) <= tolerance)
        for index in 0..<2 {
            let limit = 1.5 * largestStep(channel(index, of: input, channels: 2))
            #expect(largestStep(channel(index, of: output, channels: 2)) <= limit)
        }
        // The last second is the input's last second, bit for bit.
        let lastSecond = Self.sampleRate * 2
        #expect(Array(output.suffix(lastSecond)) == Array(input.suffix(lastSecond)))
        // And the first second, before the change, too.
        #expect(Array(output.prefix(lastSecond)) == Array(input.prefix(lastSecond)))
    }

    @Test func silenceStaysSilent() {
        let input = [Float](repeating: 0, count: Self.sampleRate * 2 * 2)
        var stretcher = AudioTimeStretcher(sampleRate: Self.sampleRate, channels: 2)
        stretcher.rate = 1.2
        let output = stretch(input, with: &stretcher, chunkFrames: 1_024)
        #expect(!output.isEmpty)
        #expect(output.allSatisfy { $0 == 0 })
    }

    @Test func storageStaysBoundedOverAMinute() {
        let channels = 2
        var stretcher = AudioTimeStretcher(sampleRate: Self.sampleRate, channels: channels)
        let bound = (channels + 1) * 4 * (stretcher.windowFrames + stretcher.searchFrames)
        let rates = [1.2, 0.9, 1.0, 1.1, 2.0, 0.5]
        let chunkFrames = 1_024
        // Content does not matter here; a second of it, looped, keeps the debug build quick.
        let source = tones([(440, 0.4), (1_000, 0.2)], seconds: 2, channels: channels)
        var largestCapacity = 0
        var largestLatency = Duration.zero
        var frame = 0
        while frame < Self.sampleRate * 60 {
            stretcher.rate = rates[(frame / (Self.sampleRate * 5)) % rates.count]
            let offset = (frame % Self.sampleRate) * channels
            _ = stretcher.process(Array(source[offset..<(offset + chunkFrames * channels)]))
            largestCapacity = max(largestCapacity, stretcher.storageCapacity)
            largestLatency = max(largestLatency, stretcher.latency)
            frame += chunkFrames
        }
        #expect(largestCapacity <= bound, "capacity \(largestCapacity) samples, bound \(bound)")
        #expect(largestLatency <= .milliseconds(36), "latency \(largestLatency)")
        // One large call is consumed a hop at a time: storage does not grow with it.
        stretcher.rate = 1.2
        let bigChunk = Array(repeating: source, count: 5).flatMap { $0 }
        let output = stretcher.process(bigChunk)
        #expect(stretcher.storageCapacity <= bound, "capacity \(stretcher.storageCapacity) samples")
        #expect(output.count > bigChunk.count * 4 / 5)
    }

    @Test func rateIsClampedToTheDocumentedRange() {
        var stretcher = AudioTimeStretcher(sampleRate: Self.sampleRate, channels: 1)
        stretcher.rate = 5
        #expect(stretcher.rate == AudioTimeStretcher.rateRange.upperBound)
        stretcher.rate = 0.1
        #expect(stretcher.rate == AudioTimeStretcher.rateRange.lowerBound)
        stretcher.rate = .nan
        #expect(stretcher.rate == 1)
        #expect(stretcher.windowFrames == 960 && stretcher.searchFrames == 360)
    }
}

// MARK: - Signals and measurements

/// Feeds `input` in chunks of `chunkFrames` frames, then flushes; returns everything that came out.
private func stretch(_ input: [Float], with stretcher: inout AudioTimeStretcher, chunkFrames: Int) -> [Float] {
    let step = chunkFrames * stretcher.channels
    var output: [Float] = []
    var start = 0
    while start < input.count {
        let end = min(input.count, start + step)
        stretcher.process(Array(input[start..<end]), into: &output)
        start = end
    }
    output += stretcher.flush()
    return output
}

/// Sums of sines at 48 kHz, interleaved; each channel is phase-shifted so the channels differ.
private func tones(_ partials: [(frequency: Double, amplitude: Double)], seconds: Double, channels: Int) -> [Float] {
    let frames = Int(seconds * Double(AudioTimeStretcherTests.sampleRate))
    var samples: [Float] = []
    samples.reserveCapacity(frames * channels)
    for frame in 0..<frames {
        let time = Double(frame) / Double(AudioTimeStretcherTests.sampleRate)
        for channel in 0..<channels {
            let value = partials.reduce(0.0) { sum, partial in
                sum + partial.amplitude * sin(2 * Double.pi * partial.frequency * time + 0.7 * Double(channel))
            }
            samples.append(Float(value))
        }
    }
    return samples
}

/// Deterministic white noise in [-1, 1) (a 64-bit LCG).
private func noise(frames: Int, channels: Int) -> [Float] {
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    return (0..<(frames * channels)).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Float(Int32(truncatingIfNeeded: state >> 32)) / 2_147_483_648
    }
}

private func channel(_ index: Int, of interleaved: [Float], channels: Int) -> [Float] {
    stride(from: index, to: interleaved.count, by: channels).map { interleaved[$0] }
}

/// Largest sample-to-sample jump.
private func largestStep(_ samples: [Float]) -> Float {
    zip(samples, samples.dropFirst()).reduce(0) { max($0, abs($1.1 - $1.0)) }
}

/// Frequency from rising zero crossings, interpolated between samples, first to last.
private func zeroCrossingFrequency(_ samples: [Float], sampleRate: Int) -> Double {
    var crossings: [Double] = []
    for index in 1..<samples.count where samples[index - 1] < 0 && samples[index] >= 0 {
        let fraction = Double(-samples[index - 1]) / Double(samples[index] - samples[index - 1])
        crossings.append(Double(index - 1) + fraction)
    }
    guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
    return Double(crossings.count - 1) * Double(sampleRate) / (last - first)
}

/// `samples` under a Hann window, ready for ``magnitude(of:at:)``.
private func hannWindowed(_ samples: [Float]) -> [Double] {
    let count = Double(samples.count)
    return samples.enumerated().map { index, sample in
        Double(sample) * (0.5 - 0.5 * cos(2 * Double.pi * Double(index) / count))
    }
}

/// Magnitude of the DFT of windowed samples at `frequency` (Goertzel).
private func magnitude(of windowed: [Double], at frequency: Double) -> Double {
    let coefficient = 2 * cos(2 * Double.pi * frequency / Double(AudioTimeStretcherTests.sampleRate))
    var previous = 0.0
    var beforePrevious = 0.0
    for sample in windowed {
        let current = sample + coefficient * previous - beforePrevious
        beforePrevious = previous
        previous = current
    }
    let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
    return power.squareRoot()
}

/// The frequency in `range`, in steps of `step` Hz, where the DFT magnitude peaks.
private func peakFrequency(_ windowed: [Double], in range: ClosedRange<Double>, step: Double) -> Double {
    stride(from: range.lowerBound, through: range.upperBound, by: step)
        .map { (frequency: $0, magnitude: magnitude(of: windowed, at: $0)) }
        .max { $0.magnitude < $1.magnitude }?.frequency ?? 0
}
