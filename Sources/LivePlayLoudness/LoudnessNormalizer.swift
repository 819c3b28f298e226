import Glibc

/// Brings a programme to a target loudness, as a broadcaster's loudness processor does for a live feed: a gain from
/// the measured loudness (``LoudnessMeter``'s momentary window for the first 3 s, then its short-term window), which
/// jumps to its first value once 400 ms have been heard and then moves at most ``gainSlew`` a second, so music keeps
/// its dynamics; silence and pauses (below −70 LUFS, EBU R 128's absolute gate, or 20 dB under the programme, its
/// relative gate) leave it where it is. A limiter holds every
/// sample at or below ``peakLimit``: each block's gain is cut at once to what its loudest sample allows, and comes
/// back at most ``limiterRelease`` a second. Time is the samples': no clock.
public struct LoudnessNormalizer {
    /// The loudness aimed at, LUFS (−70…0).
    public let target: Double
    /// −1 dBFS: no sample out is louder (EBU R 128's −1 dBTP for the programme, held on the samples).
    public static let peakLimit = -1.0
    public static let gainSlew = 3.0
    public static let limiterRelease = 40.0
    /// The most and the least the gain may be, dB.
    public static let gainRange = -30.0...30.0
    /// EBU R 128's absolute gate: quieter than this is silence, not programme.
    public static let silence = -70.0

    /// The programme's loudness as last measured (before the gain), LUFS; `nil` before 400 ms, in silence or a pause.
    public private(set) var measured: Double?
    /// The gain applied to the last sample, dB.
    public var appliedGain: Double { 20 * log10(Double(applied)) }

    private var meter: LoudnessMeter?
    /// The gain the loudness asks for, dB; `nil` before the first measure.
    private var wanted: Double?
    private var applied: Float = 1
    /// Sound measured since the meter started, in frames.
    private var heard = 0

    public init(target: Double) {
        self.target = min(0, max(-70, target))
    }

    /// Scales `samples` (interleaved) in place; a new channel count or rate restarts the measure (the gain stays).
    /// - Throws: ``LoudnessError`` when the sound cannot be measured (the samples are left as they are).
    public mutating func process(_ samples: inout [Float], channels: Int, sampleRate: Int) throws(LoudnessError) {
        let frames = samples.count / max(1, channels)
        guard frames > 0 else { return }
        if meter?.channels != channels || meter?.sampleRate != sampleRate {
            meter = try LoudnessMeter(channels: channels, sampleRate: sampleRate)
            heard = 0
        }
        guard let meter else { return }
        meter.add(samples)
        heard += frames
        if heard >= sampleRate * 2 / 5 {
            let now = meter.momentary
            let loudness = heard >= sampleRate * 3 ? meter.shortTerm : now
            // A pause (the last 400 ms silent, or 20 dB under the programme, EBU R 128's relative gate) is not
            // measured: the 3 s window emptying into it would read as a quiet programme and raise the gain.
            measured = loudness > Self.silence && now > Self.silence && now > loudness - 20 ? loudness : nil
        }
        let seconds = Double(frames) / Double(sampleRate)
        if let measured {
            let goal = min(Self.gainRange.upperBound, max(Self.gainRange.lowerBound, target - measured))
            let step = Self.gainSlew * seconds
            wanted = wanted.map { $0 + min(step, max(-step, goal - $0)) } ?? goal
        }
        var peak: Float = 0
        for sample in samples { peak = max(peak, abs(sample)) }
        let ceiling = Float(Self.linear(Self.peakLimit))
        let allowed = peak > 0 ? ceiling / peak : .infinity
        let released = applied * Float(Self.linear(Self.limiterRelease * seconds))
        let start = min(applied, allowed)
        let end = min(Float(Self.linear(wanted ?? 0)), allowed, released)
        // A ramp from start to end across the block: both ends within what the peak allows, so every sample is.
        for frame in 0..<frames {
            let gain = start + (end - start) * Float(frame + 1) / Float(frames)
            for channel in 0..<channels { samples[frame * channels + channel] *= gain }
        }
        applied = end
    }

    private static func linear(_ decibels: Double) -> Double {
        pow(10, decibels / 20)
    }
}
