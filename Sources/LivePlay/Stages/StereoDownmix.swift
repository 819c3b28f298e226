import LivePlayDecode

/// Multichannel sound folded to stereo for a sink that takes two channels, with the coefficients FFmpeg's
/// libswresample uses by default (`-ac 2`): front left / right at 1, centre and surrounds at −3 dB (1/√2),
/// back centre at −6 dB to each side, LFE left out; the matrix scaled so no output row sums above 1, which keeps
/// a full-scale input from clipping. A layout the decoder does not name is taken as libavutil's default order for
/// its count.
struct StereoDownmix {
    private let mask: UInt64?
    private let channels: Int
    /// Per input channel: its weight in the left and the right output.
    private let weights: [(left: Float, right: Float)]

    // libavutil's AV_CH_* bits.
    private static let frontLeft: UInt64 = 0x1, frontRight: UInt64 = 0x2, frontCenter: UInt64 = 0x4
    private static let backLeft: UInt64 = 0x10, backRight: UInt64 = 0x20, frontLeftOfCenter: UInt64 = 0x40
    private static let frontRightOfCenter: UInt64 = 0x80, backCenter: UInt64 = 0x100, sideLeft: UInt64 = 0x200
    private static let sideRight: UInt64 = 0x400

    /// libavutil's default layouts by channel count (`av_channel_layout_default`), for a frame that names none.
    private static let defaults: [Int: UInt64] = [3: 0x7, 4: 0x107, 5: 0x607, 6: 0x60F, 7: 0x70F, 8: 0x63F]

    init(_ frame: AudioFrame) {
        mask = frame.channelMask
        channels = frame.channels
        let layout = frame.channelMask ?? Self.defaults[frame.channels] ?? 0
        let half = Float(0.5.squareRoot())
        var weights: [(left: Float, right: Float)] = []
        for bit in 0..<64 where layout & (1 << UInt64(bit)) != 0 {
            switch UInt64(1) << UInt64(bit) {
            case Self.frontLeft, Self.frontLeftOfCenter: weights.append((1, 0))
            case Self.frontRight, Self.frontRightOfCenter: weights.append((0, 1))
            case Self.frontCenter: weights.append((half, half))
            case Self.backLeft, Self.sideLeft: weights.append((half, 0))
            case Self.backRight, Self.sideRight: weights.append((0, half))
            case Self.backCenter: weights.append((half * half, half * half))
            default: weights.append((0, 0))
            }
        }
        // A count the mask does not describe: the first two channels as they are, the rest left out.
        if weights.count != frame.channels {
            weights = (0..<frame.channels).map { $0 == 0 ? (1, 0) : $0 == 1 ? (0, 1) : (0, 0) }
        }
        let largest = max(weights.reduce(0) { $0 + $1.left }, weights.reduce(0) { $0 + $1.right })
        let scale = largest > 1 ? 1 / largest : 1
        self.weights = weights.map { ($0.left * scale, $0.right * scale) }
    }

    func matches(_ frame: AudioFrame) -> Bool {
        frame.channelMask == mask && frame.channels == channels
    }

    /// Interleaved samples of the frame's channels → interleaved stereo.
    func apply(_ samples: [Float]) -> [Float] {
        let frames = samples.count / max(1, channels)
        var output = [Float](repeating: 0, count: frames * 2)
        for index in 0..<frames {
            var left: Float = 0
            var right: Float = 0
            for channel in 0..<channels {
                let sample = samples[index * channels + channel]
                left += sample * weights[channel].left
                right += sample * weights[channel].right
            }
            output[index * 2] = left
            output[index * 2 + 1] = right
        }
        return output
    }
}
