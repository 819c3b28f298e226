/// The one error type of LivePlayFLV: what went wrong, where, and (for nested parsers) why.
///
/// Fatal problems are thrown; recoverable ones are handed out as ``FLVElement/warning(_:)`` so
/// playback can go on. `Equatable`, so tests can `#expect(throws: FLVError(...))` on the code alone
/// via ``FLVError/Code``.
public struct FLVError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The stream does not start with an `FLV` version 1 header.
        public static let invalidHeader = Code(rawValue: "invalid_header")
        /// Input ended inside a header or tag.
        public static let truncated = Code(rawValue: "truncated")
        /// A tag's trailing PreviousTagSize disagreed with its DataSize.
        public static let previousTagSizeMismatch = Code(rawValue: "previous_tag_size_mismatch")
        /// Bytes that did not form a consistent tag were skipped to the next one that does.
        public static let resynchronized = Code(rawValue: "resynchronized")
        /// A tag claimed more than the configured maximum size.
        public static let tagTooLarge = Code(rawValue: "tag_too_large")
        /// A tag's body is too short or inconsistent for its declared type.
        public static let malformedTag = Code(rawValue: "malformed_tag")
        /// AMF0 data is truncated or uses an unknown marker.
        public static let malformedAMF = Code(rawValue: "malformed_amf")
        /// AMF0 nesting exceeded the configured depth.
        public static let amfNestingTooDeep = Code(rawValue: "amf_nesting_too_deep")
        /// An AVC / HEVC / AAC configuration record or parameter set could not be parsed.
        public static let malformedConfiguration = Code(rawValue: "malformed_configuration")
        /// A codec the stream uses that liveplay recognises but does not decode.
        public static let unsupportedCodec = Code(rawValue: "unsupported_codec")
        /// Coded frames arrived before the sequence header that configures their decoder.
        public static let missingConfiguration = Code(rawValue: "missing_configuration")
        /// Video started with a non-keyframe; packets are dropped until the first keyframe.
        public static let awaitingKeyframe = Code(rawValue: "awaiting_keyframe")
    }

    public var code: Code
    /// What was being read, in words.
    public var message: String
    /// Byte offset in the stream where the problem was found, when known.
    public var offset: Int64?

    public init(_ code: Code, _ message: String, offset: Int64? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
    }

    public var description: String {
        if let offset { return "\(code) at byte \(offset): \(message)" }
        return "\(code): \(message)"
    }
}
