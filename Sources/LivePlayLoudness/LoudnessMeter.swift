internal import CEBUR128
internal import CLazyLibraries

/// A programme's loudness as EBU R 128 measures it (libebur128's momentary 400 ms and short-term 3 s windows, the
/// K-weighting of ITU-R BS.1770-4), fed interleaved Float PCM. Owns its `ebur128_state`, freed in `deinit`.
public final class LoudnessMeter {
    private var state: UnsafeMutablePointer<ebur128_state>?
    public let channels: Int
    public let sampleRate: Int

    /// - Throws: ``LoudnessError`` when libebur128 cannot be loaded or refuses the format.
    public init(channels: Int, sampleRate: Int) throws(LoudnessError) {
        try Self.load()
        self.channels = channels
        self.sampleRate = sampleRate
        let mode = Int32(EBUR128_MODE_S.rawValue)
        guard channels > 0, sampleRate > 0,
            let state = ebur128_init(UInt32(channels), UInt(sampleRate), mode)
        else {
            throw LoudnessError("libebur128 cannot measure \(channels) channels at \(sampleRate) Hz")
        }
        self.state = state
    }

    /// Loads libebur128, once for the process: a front end asks before it offers loudness normalisation.
    /// - Throws: ``LoudnessError`` with the loader's message and the Debian package to install.
    public static func load() throws(LoudnessError) {
        var error = [CChar](repeating: 0, count: 512)
        guard liveplay_lazy_load(LIVEPLAY_LAZY_EBUR128, &error, error.count) == 0 else {
            let message = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw LoudnessError("\(message) (Debian: apt-get install libebur128-1)")
        }
    }

    /// Adds `samples` (interleaved, ``channels`` to a frame).
    public func add(_ samples: [Float]) {
        let frames = samples.count / channels
        guard frames > 0 else { return }
        samples.withUnsafeBufferPointer { _ = ebur128_add_frames_float(state, $0.baseAddress, frames) }
    }

    /// The last 400 ms, LUFS; −∞ for silence.
    public var momentary: Double { read(ebur128_loudness_momentary) }
    /// The last 3 s, LUFS; −∞ for silence.
    public var shortTerm: Double { read(ebur128_loudness_shortterm) }

    private func read(_ measure: (UnsafeMutablePointer<ebur128_state>?, UnsafeMutablePointer<Double>?) -> Int32) -> Double {
        var value = -Double.infinity
        return measure(state, &value) == 0 ? value : -.infinity
    }

    deinit {
        ebur128_destroy(&state)
    }
}

/// Loudness cannot be measured: `message` says why.
public struct LoudnessError: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
