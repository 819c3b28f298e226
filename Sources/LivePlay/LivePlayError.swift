public import LivePlayDecode
public import LivePlayFLV
public import LivePlayManifest
public import LivePlayTransport

/// The one error type of LivePlay: what failed, in words, and the lower module's error as the cause.
public struct LivePlayError: Error, Sendable, CustomStringConvertible {
    public enum Cause: Sendable {
        case transport(TransportError)
        case demux(FLVError)
        case decode(DecodeError)
        case manifest(LASManifestError)
        case playlist(M3UPlaylistError)
    }

    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let sourceNotFound = Code(rawValue: "source_not_found")
        public static let sourceFailed = Code(rawValue: "source_failed")
        public static let notFLV = Code(rawValue: "not_flv")
        /// A LAS manifest that is not one, or cannot be played (``LASManifest/read(_:transport:)``).
        public static let badManifest = Code(rawValue: "bad_manifest")
        /// An M3U playlist that is not one, or names what cannot be played (``M3UPlaylist/read(_:transport:)``).
        public static let badPlaylist = Code(rawValue: "bad_playlist")
        /// A poster that is not a PNG or JPEG picture liveplay decodes (``StillImage/read(_:transport:)``).
        public static let badImage = Code(rawValue: "bad_image")
        /// Not an HTTP(S)-FLV or RTMP(S) URL (``LivePlayer/startPlay(_:type:)``).
        public static let unsupportedURL = Code(rawValue: "unsupported_url")
    }

    public var code: Code
    public var message: String
    public var cause: Cause?

    public init(_ code: Code, _ message: String, cause: Cause? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    init(transport error: TransportError) {
        self.init(
            error.code == .notFound ? .sourceNotFound : .sourceFailed, error.message, cause: .transport(error))
    }

    init(demux error: FLVError) {
        self.init(.notFLV, error.description, cause: .demux(error))
    }

    public var description: String { message }
}
