/// The one error type of LivePlayDecode.
public struct DecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// This libavcodec build has no decoder for the codec.
        public static let decoderNotFound = Code(rawValue: "decoder_not_found")
        /// `avcodec_open2` refused the configuration.
        public static let openFailed = Code(rawValue: "open_failed")
        /// libavcodec rejected a packet (corrupt or undecodable data).
        public static let invalidData = Code(rawValue: "invalid_data")
        /// A frame came out with decode errors (concealment, corrupt references) and was dropped.
        public static let corruptFrame = Code(rawValue: "corrupt_frame")
        /// The decoder produced a sample or pixel format liveplay cannot hand out.
        public static let unsupportedFormat = Code(rawValue: "unsupported_format")
        /// Memory allocation failed inside libavcodec.
        public static let outOfMemory = Code(rawValue: "out_of_memory")
        /// The stream's pictures are larger than ``DecoderOptions/maximumPixels``.
        public static let tooLarge = Code(rawValue: "too_large")
    }

    public var code: Code
    public var message: String
    /// The libavcodec return code, when one caused this.
    public var averror: Int32?

    public init(_ code: Code, _ message: String, averror: Int32? = nil) {
        self.code = code
        self.message = message
        self.averror = averror
    }

    public var description: String {
        if let averror { return "\(code): \(message) (AVERROR \(averror))" }
        return "\(code): \(message)"
    }
}

/// What a send left the decoder in.
public enum DecoderSendResult: Sendable, Hashable {
    /// The packet is inside the decoder.
    case accepted
    /// The decoder is full: receive frames first, then send the same packet again.
    case full
    /// Dropped without decoding: after an error, decoding resumes at the next keyframe.
    case skippedAwaitingKeyframe
}

/// What a receive produced.
public enum DecoderReceiveResult<Frame: Sendable>: Sendable {
    case frame(Frame)
    /// Send more packets.
    case needsInput
    /// Everything sent before ``VideoDecoder/drain()`` is out.
    case drained
}

/// Everything one packet produced: frames, and the errors met on the way (they do not stop decoding).
public struct DecodeOutput<Frame: Sendable>: Sendable {
    public var frames: [Frame] = []
    public var errors: [DecodeError] = []
    /// The packet was dropped because decoding waits for a keyframe.
    public var skipped = false
    /// What a video decoder's device did (started, or gave up to software).
    public var hardware: [HardwareNotice] = []

    public init() {}

    /// Empties it for the next packet, keeping its arrays' storage.
    mutating func removeAll() {
        frames.removeAll(keepingCapacity: true)
        errors.removeAll(keepingCapacity: true)
        skipped = false
        if !hardware.isEmpty { hardware.removeAll() }
    }
}
