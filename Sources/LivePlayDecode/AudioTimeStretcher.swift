/// WSOLA time-stretcher for interleaved Float PCM: changes playback speed without changing pitch.
///
/// Waveform-similarity overlap-add (W. Verhelst and M. Roelands, "An overlap-add technique based on waveform
/// similarity (WSOLA) for high quality time-scale modification of speech", ICASSP 1993, vol. 2, pp. 554–557).
/// Output is built from Hann-windowed segments of `windowDuration`, laid down every half window (so the windows
/// sum to one: constant overlap-add). Segment *k* is taken from near its nominal input position `k × hop × rate`,
/// within half of `searchDuration` either side, at the offset whose start best matches the natural continuation
/// of segment *k − 1* (normalized cross-correlation over the overlap, on a mono mixdown). Every channel is
/// overlap-added with the same offsets, so the stereo image stays put. Output is `1 / rate` as long as input.
///
/// Streaming: ``process(_:)`` takes any number of whole frames and returns whatever output is complete. The
/// output depends only on the samples and on where ``rate`` changed, never on how the input was chunked. The
/// input is consumed a hop at a time, so storage stays at a few windows however large a call is (see
/// ``storageCapacity``), and buffers are reused from call to call.
///
/// Rate exactly 1.0 is passthrough: samples come out bit-for-bit as they went in, with no latency. Changing
/// ``rate`` takes effect at the next hop (every `windowDuration / 2` of output):
/// - *to 1.0*: the next output continues the input from the natural continuation of the last segment, which is
///   exactly what the cross-fade of that segment's tail was heading to, so there is no seam; the samples held
///   (``latency``) come out first, then new input is copied straight through.
/// - *from 1.0*: stretching starts where passthrough stopped; the first segment cross-fades out of the input
///   as it was playing, and output first lags input by about `rate × windowDuration / 2 + searchDuration / 2`.
/// - *between other rates*: the next segment's nominal position advances at the new rate; nothing else changes.
public struct AudioTimeStretcher: Sendable {
    /// The rates ``rate`` is clamped to; WSOLA with this window keeps speech and music natural in this range.
    public static let rateRange: ClosedRange<Double> = 0.5...2.0

    /// Frames per second of the PCM fed in.
    public let sampleRate: Int
    /// Interleaved channels per frame.
    public let channels: Int
    /// Frames per overlap-add window (even; output advances by half of it per segment).
    public let windowFrames: Int
    /// Frames the similarity search may move a segment away from its nominal position, either side.
    public let searchFrames: Int

    /// Output frames per segment: half a window.
    private let hop: Int
    /// Frames per block in the coarse similarity search (4 at 48 kHz, 1 at 16 kHz and below).
    private let decimation: Int
    /// Rising half of a periodic Hann window, `sin²(πi / window)`, for the incoming segment.
    private let fadeIn: [Float]
    /// Falling half, `1 − fadeIn`, for the tail of the previous segment; the two sum to one.
    private let fadeOut: [Float]

    /// Interleaved input frames from absolute frame `storageStart` on.
    private var samples: [Float] = []
    /// Mean of the channels of each frame in `samples`, where the similarity search runs.
    private var mixdown: [Float] = []
    /// Coarse-search scratch: block averages of the target half-window and of the searched region.
    private var coarseTarget: [Float] = []
    private var coarseSignal: [Float] = []
    /// Absolute input frame index of `samples[0]`.
    private var storageStart = 0

    private var currentRate = 1.0
    /// Whether segments are being overlap-added (rate ≠ 1) or input copied through.
    private var stretching = false
    /// Passthrough: absolute input frame of the next sample to emit.
    private var passthroughPosition = 0
    /// Stretching: absolute input frame where the last segment starts; its second half is pending output.
    private var segmentPosition = 0
    /// Stretching: where the last segment would have started without the search (fractional, no drift).
    private var nominalPosition = 0.0
    /// Stretching: the search never looks before this frame (where stretching began or the stream restarted).
    private var searchFloor = 0

    /// Creates a stretcher at rate 1.0.
    ///
    /// - Parameters:
    ///   - windowDuration: Overlap-add window. About two pitch periods of the lowest voice; 20 ms suits speech
    ///     and music. Longer smears transients, shorter gets rough on low notes.
    ///   - searchDuration: Width of the region searched for the best-matching segment, centred on its nominal
    ///     position. It must span a pitch period of the lowest voice (15 ms: down to about 67 Hz); the cost of
    ///     the search, most of the stretcher's, grows with it.
    public init(
        sampleRate: Int, channels: Int, windowDuration: Duration = .milliseconds(20),
        searchDuration: Duration = .milliseconds(15)
    ) {
        precondition(sampleRate > 0 && channels > 0, "sample rate and channel count must be positive")
        self.sampleRate = sampleRate
        self.channels = channels
        let hop = max(2, Self.frames(in: windowDuration, sampleRate: sampleRate) / 2)
        self.hop = hop
        windowFrames = 2 * hop
        decimation = min(max(1, sampleRate / 12_000), max(1, hop / 8))
        searchFrames = max(0, Self.frames(in: searchDuration, sampleRate: sampleRate) / 2)
        let fadeIn = (0..<hop).map { index in
            let sine = Self.sine(Double.pi * Double(index) / Double(2 * hop))
            return Float(sine * sine)
        }
        self.fadeIn = fadeIn
        fadeOut = fadeIn.map { 1 - $0 }
    }

    /// Playback speed: 1.2 plays 20 % faster (output is `1 / 1.2` as long). Clamped to ``rateRange``; NaN is 1.
    public var rate: Double {
        get { currentRate }
        set {
            let clamped = newValue.isNaN ? 1 : min(max(newValue, Self.rateRange.lowerBound), Self.rateRange.upperBound)
            if clamped == 1, stretching {
                stretching = false
                passthroughPosition = segmentPosition + hop
            } else if clamped != 1, !stretching {
                startStretching(at: passthroughPosition)
            }
            currentRate = clamped
        }
    }

    /// Input held inside and not yet in the output, as time at ``sampleRate``: exactly what ``flush()`` returns.
    ///
    /// Zero in steady passthrough. While stretching it stays below `searchDuration + rate × windowDuration / 2`
    /// (at most 35 ms with the defaults).
    public var latency: Duration {
        .seconds(storageEnd - pendingStart) / sampleRate
    }

    /// Float samples the internal storage can hold without growing (input, its mono mixdown, search scratch).
    ///
    /// For diagnostics and tests: storage holds at most about `2 × (windowFrames + searchFrames)` frames, so
    /// with the arrays' growth slack this stays below `(channels + 1) × 4 × (windowFrames + searchFrames)`,
    /// however long the stream and however large each call.
    public var storageCapacity: Int {
        samples.capacity + mixdown.capacity + coarseTarget.capacity + coarseSignal.capacity
    }

    /// Feeds interleaved samples (whole frames); returns interleaved output ready to play.
    public mutating func process(_ interleaved: [Float]) -> [Float] {
        var output: [Float] = []
        output.reserveCapacity(Int(Double(interleaved.count) / currentRate) + (hop + 1) * channels)
        process(interleaved, into: &output)
        return output
    }

    /// Feeds interleaved samples (whole frames) and appends the output to `output`, so a caller that keeps
    /// one array allocates nothing per call.
    public mutating func process(_ interleaved: [Float], into output: inout [Float]) {
        precondition(interleaved.count % channels == 0, "input must be whole frames")
        let frames = interleaved.count / channels
        guard stretching else {
            // Passthrough: whatever a rate change left pending, then the input untouched.
            let end = storageEnd + frames
            output.append(contentsOf: samples[((passthroughPosition - storageStart) * channels)...])
            output.append(contentsOf: interleaved)
            samples.removeAll(keepingCapacity: true)
            mixdown.removeAll(keepingCapacity: true)
            storageStart = end
            passthroughPosition = end
            return
        }
        var consumed = 0
        while true {
            let required = emitAvailableSegments(into: &output)
            guard consumed < frames else { break }
            // Feed only what the next segment needs, so storage stays bounded however large the call.
            discardUnneededInput()
            let take = min(required - storageEnd, frames - consumed)
            append(interleaved, frames: consumed..<(consumed + take))
            consumed += take
        }
        discardUnneededInput()
    }

    /// Returns what is still held inside, unstretched, and forgets the stream's history.
    ///
    /// Call it at end of stream or before a discontinuity: the next input is treated as a new stream. The
    /// output continues the last segment seamlessly (as a change to rate 1.0 would). A change to rate 1.0
    /// needs no flush: the held samples simply lead the next ``process(_:)`` output.
    public mutating func flush() -> [Float] {
        let output = Array(samples[((pendingStart - storageStart) * channels)...])
        let end = storageEnd
        samples.removeAll(keepingCapacity: true)
        mixdown.removeAll(keepingCapacity: true)
        storageStart = end
        passthroughPosition = end
        if stretching { startStretching(at: end) }
        return output
    }

    // MARK: - Segments

    private var storageEnd: Int { storageStart + mixdown.count }

    /// First input frame not yet fully represented in the output.
    private var pendingStart: Int { stretching ? segmentPosition + hop : passthroughPosition }

    /// Begins overlap-adding at input frame `position`, as if a segment had ended there at rate 1.
    private mutating func startStretching(at position: Int) {
        stretching = true
        segmentPosition = position - hop
        nominalPosition = Double(position - hop)
        searchFloor = position
    }

    /// Emits every segment the stored input allows, then returns the storage end the next one needs.
    private mutating func emitAvailableSegments(into output: inout [Float]) -> Int {
        while true {
            if let required = overlapAddNextSegment(into: &output) { return required }
        }
    }

    /// Emits one hop of output if the input allows; otherwise returns the storage end the next segment needs.
    private mutating func overlapAddNextSegment(into output: inout [Float]) -> Int? {
        let nominal = nominalPosition + currentRate * Double(hop)
        let centre = Int(nominal.rounded(.down))
        let lower = max(searchFloor, centre - searchFrames)
        let upper = max(lower, centre + searchFrames)
        let required = max(segmentPosition + windowFrames, upper + hop)
        guard storageEnd >= required else { return required }

        let tail = segmentPosition + hop
        let best = mostSimilarPosition(to: tail, in: lower...upper)
        let tailOffset = (tail - storageStart) * channels
        let bestOffset = (best - storageStart) * channels
        let count = hop * channels
        let outputStart = output.count
        output.append(contentsOf: repeatElement(0, count: count))
        output.withUnsafeMutableBufferPointer { destination in
            samples.withUnsafeBufferPointer { source in
                fadeOut.withUnsafeBufferPointer { fadeOut in
                    fadeIn.withUnsafeBufferPointer { fadeIn in
                        for frame in 0..<hop {
                            let outgoing = fadeOut[frame]
                            let incoming = fadeIn[frame]
                            let base = frame * channels
                            for channel in 0..<channels {
                                destination[outputStart + base + channel] =
                                    outgoing * source[tailOffset + base + channel]
                                    + incoming * source[bestOffset + base + channel]
                            }
                        }
                    }
                }
            }
        }
        segmentPosition = best
        nominalPosition = nominal
        return nil
    }

    /// The segment start in `candidates` whose first half-window best matches the half-window at `target`:
    /// largest normalized cross-correlation, the earliest on ties (so silence stays silence).
    ///
    /// Coarse to fine, as an exhaustive search costs too much at 48 kHz: first every `decimation`-th candidate
    /// on block averages of `decimation` frames (a crude low-pass to about 6 kHz, where the pitch of voices and
    /// instruments lives), then every candidate within a block of the winner at full resolution.
    private mutating func mostSimilarPosition(to target: Int, in candidates: ClosedRange<Int>) -> Int {
        let factor = decimation
        var fine = candidates
        if factor > 1, candidates.count > 2 * factor - 1 {
            let lower = candidates.lowerBound
            Self.averageBlocks(
                of: mixdown, from: target - storageStart, count: hop / factor, size: factor, into: &coarseTarget)
            Self.averageBlocks(
                of: mixdown, from: lower - storageStart, count: (candidates.upperBound + hop - lower) / factor,
                size: factor, into: &coarseSignal)
            let winner = coarseSignal.withUnsafeBufferPointer { signal in
                coarseTarget.withUnsafeBufferPointer { target in
                    Self.bestMatch(
                        for: target.baseAddress!, length: target.count, in: signal.baseAddress!,
                        candidates: (candidates.upperBound - lower) / factor + 1)
                }
            }
            let centre = lower + winner * factor
            fine = max(lower, centre - factor + 1)...min(candidates.upperBound, centre + factor - 1)
        }
        let offset = mixdown.withUnsafeBufferPointer { mono in
            Self.bestMatch(
                for: mono.baseAddress! + (target - storageStart), length: hop,
                in: mono.baseAddress! + (fine.lowerBound - storageStart), candidates: fine.count)
        }
        return fine.lowerBound + offset
    }

    /// Index `k` in `0..<candidates` maximizing the normalized cross-correlation of `signal[k..<k + length]`
    /// with `target`, `c × |c| / energy` (sign kept, no square root); the first on ties.
    private static func bestMatch(
        for target: UnsafePointer<Float>, length: Int, in signal: UnsafePointer<Float>, candidates: Int
    ) -> Int {
        var energy = 0.0
        for index in 0..<length {
            energy += Double(signal[index]) * Double(signal[index])
        }
        let floor = 1e-12 * Double(length)
        var best = 0
        var bestScore = -Double.infinity
        for candidate in 0..<candidates {
            if candidate > 0 {
                let leaving = Double(signal[candidate - 1])
                let entering = Double(signal[candidate + length - 1])
                energy += entering * entering - leaving * leaving
            }
            let correlation = Double(dot(target, signal + candidate, count: length))
            let score = correlation * abs(correlation) / max(energy, floor)
            if score > bestScore {
                bestScore = score
                best = candidate
            }
        }
        return best
    }

    /// Replaces `output` with `count` means of `size` consecutive samples of `signal` from `start`.
    private static func averageBlocks(
        of signal: [Float], from start: Int, count: Int, size: Int, into output: inout [Float]
    ) {
        output.removeAll(keepingCapacity: true)
        let scale = 1 / Float(size)
        signal.withUnsafeBufferPointer { signal in
            for block in 0..<count {
                var sum: Float = 0
                let base = start + block * size
                for index in base..<(base + size) { sum += signal[index] }
                output.append(sum * scale)
            }
        }
    }

    /// Appends input frames, and their mixdown, to storage.
    private mutating func append(_ interleaved: [Float], frames: Range<Int>) {
        samples.append(contentsOf: interleaved[(frames.lowerBound * channels)..<(frames.upperBound * channels)])
        let scale = 1 / Float(channels)
        interleaved.withUnsafeBufferPointer { input in
            for frame in frames {
                var sum: Float = 0
                for channel in 0..<channels { sum += input[frame * channels + channel] }
                mixdown.append(channels == 1 ? sum : sum * scale)
            }
        }
    }

    /// Drops stored input no later segment can reach, once there is at least a hop of it (amortizes the move).
    private mutating func discardUnneededInput() {
        guard stretching else { return }
        // The next search starts no earlier than this whatever the rate (it advances by at least hop / 2).
        let slowest = Int((nominalPosition + Self.rateRange.lowerBound * Double(hop)).rounded(.down))
        let keepFrom = min(segmentPosition + hop, max(searchFloor, slowest - searchFrames))
        let drop = keepFrom - storageStart
        guard drop >= hop else { return }
        samples.removeFirst(drop * channels)
        mixdown.removeFirst(drop)
        storageStart = keepFrom
    }

    // MARK: - Arithmetic

    /// `Σ a[i] × b[i]` with four independent sums, so release builds pipeline it.
    private static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float {
        var sum0: Float = 0
        var sum1: Float = 0
        var sum2: Float = 0
        var sum3: Float = 0
        var index = 0
        while index + 4 <= count {
            sum0 += a[index] * b[index]
            sum1 += a[index + 1] * b[index + 1]
            sum2 += a[index + 2] * b[index + 2]
            sum3 += a[index + 3] * b[index + 3]
            index += 4
        }
        while index < count {
            sum0 += a[index] * b[index]
            index += 1
        }
        return (sum0 + sum1) + (sum2 + sum3)
    }

    /// `sin(x)` for `0 ≤ x ≤ π/2` by its Taylor series (exact to double precision there), without Foundation.
    private static func sine(_ x: Double) -> Double {
        var term = x
        var sum = x
        for k in 1...12 {
            term *= -x * x / Double((2 * k) * (2 * k + 1))
            sum += term
        }
        return sum
    }

    /// Whole frames in `duration` at `sampleRate`, rounded to nearest.
    private static func frames(in duration: Duration, sampleRate: Int) -> Int {
        let (seconds, attoseconds) = duration.components
        let exact = (Double(seconds) + Double(attoseconds) * 1e-18) * Double(sampleRate)
        return max(0, Int(exact.rounded()))
    }
}
