public import LivePlayCore

/// FLV tag types (Adobe Flash Video File Format Specification v10.1, §E.4.1).
public enum FLVTagType: UInt8, Sendable {
    case audio = 8
    case video = 9
    case script = 18
}

/// `SoundFormat` of the audio tag header (§E.4.2.1).
public enum FLVSoundFormat: UInt8, Sendable {
    case linearPCMPlatformEndian = 0
    case adpcm = 1
    case mp3 = 2
    case linearPCMLittleEndian = 3
    case nellymoser16kMono = 4
    case nellymoser8kMono = 5
    case nellymoser = 6
    case g711ALaw = 7
    case g711MuLaw = 8
    /// Enhanced RTMP v2: the header continues with a FourCC.
    case extendedHeader = 9
    case aac = 10
    case speex = 11
    case mp3At8kHz = 14
    case deviceSpecific = 15
}

/// `CodecID` of the legacy video tag header (§E.4.3.1), plus id 12 as Chinese CDNs use it for HEVC.
public enum FLVVideoCodecID: UInt8, Sendable {
    case sorensonH263 = 2
    case screenVideo = 3
    case vp6 = 4
    case vp6Alpha = 5
    case screenVideo2 = 6
    case avc = 7
    /// Not in Adobe's spec: the HEVC dialect of SRS, ksvc and Chinese CDNs (same layout as AVC).
    case hevcLegacy = 12
}

/// `FrameType` of the video tag header (§E.4.3.1).
public enum FLVVideoFrameType: UInt8, Sendable {
    case keyframe = 1
    case interFrame = 2
    case disposableInterFrame = 3
    case generatedKeyframe = 4
    case videoInfoOrCommand = 5
}

/// `AVCPacketType`, shared by the HEVC codec-id-12 dialect (§E.4.3.1).
public enum FLVAVCPacketType: UInt8, Sendable {
    case sequenceHeader = 0
    case nalu = 1
    case endOfSequence = 2
}

/// `VideoPacketType` of the extended video tag header (Enhanced RTMP v2, "ExVideoTagHeader").
public enum FLVExtendedVideoPacketType: UInt8, Sendable {
    case sequenceStart = 0
    case codedFrames = 1
    case sequenceEnd = 2
    /// Coded frames with an implied composition time of zero.
    case codedFramesX = 3
    /// AMF0 `colorInfo`.
    case metadata = 4
    /// AV1 as an MPEG-2 TS descriptor (AV1VideoDescriptor).
    case mpeg2TSSequenceStart = 5
    /// The header continues with an ``FLVMultitrackType`` and the packet type of its tracks.
    case multitrack = 6
    /// A modifier (``FLVModExType``) precedes the real packet type.
    case modEx = 7
}

/// `AudioPacketType` of the extended audio tag header (Enhanced RTMP v2, "ExAudioTagHeader").
public enum FLVExtendedAudioPacketType: UInt8, Sendable {
    case sequenceStart = 0
    case codedFrames = 1
    case sequenceEnd = 2
    case multichannelConfig = 4
    case multitrack = 5
    case modEx = 7
}

/// `AvMultitrackType`: how the tracks of one multitrack message are laid out.
public enum FLVMultitrackType: UInt8, Sendable {
    /// One track, with its id, no size.
    case oneTrack = 0
    /// Several tracks of one codec, each with an id and a UI24 size.
    case manyTracks = 1
    /// Several tracks, each with its own FourCC, id and size.
    case manyTracksManyCodecs = 2
}

/// `VideoPacketModExType` / `AudioPacketModExType`.
public enum FLVModExType: UInt8, Sendable {
    /// UI24 nanoseconds (up to 999,999) added to this message's timestamp.
    case timestampOffsetNano = 0
}

/// FourCCs of Enhanced RTMP video.
public enum FLVVideoFourCC: UInt32, Sendable, CaseIterable {
    case avc1 = 0x6176_6331
    case hvc1 = 0x6876_6331
    case av01 = 0x6176_3031
    case vp09 = 0x7670_3039
    case vp08 = 0x7670_3038
    case vvc1 = 0x7676_6331

    public init?(codec: VideoCodec) {
        guard let fourCC = Self.allCases.first(where: { $0.codec == codec }) else { return nil }
        self = fourCC
    }

    /// The four characters (`av01`).
    public var name: String { fourCCString(rawValue) }

    public var codec: VideoCodec {
        switch self {
        case .avc1: .h264
        case .hvc1: .hevc
        case .av01: .av1
        case .vp09: .vp9
        case .vp08: .vp8
        case .vvc1: .vvc
        }
    }
}

/// FourCCs of Enhanced RTMP audio (SoundFormat 9).
public enum FLVAudioFourCC: UInt32, Sendable, CaseIterable {
    case opus = 0x4F70_7573
    case flac = 0x664C_6143
    case ac3 = 0x6163_2D33
    case eac3 = 0x6563_2D33
    case mp4a = 0x6D70_3461
    case mp3 = 0x2E6D_7033

    public init?(codec: AudioCodec) {
        guard let fourCC = Self.allCases.first(where: { $0.codec == codec }) else { return nil }
        self = fourCC
    }

    /// The four characters (`Opus`).
    public var name: String { fourCCString(rawValue) }

    public var codec: AudioCodec {
        switch self {
        case .opus: .opus
        case .flac: .flac
        case .ac3: .ac3
        case .eac3: .eac3
        case .mp4a: .aac
        case .mp3: .mp3
        }
    }
}

/// Renders a FourCC as its four characters, or as hex when they are not printable.
func fourCCString(_ value: UInt32) -> String {
    let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> UInt32($0)) }
    if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
        return String(decoding: bytes, as: UTF8.self)
    }
    return "0x" + String(value, radix: 16)
}

/// The 11 bytes before each FLV tag's body (§E.4.1): `TagType` (with the filter and reserved bits), `DataSize`,
/// `Timestamp` and `TimestampExtended`, `StreamID`. Read here and nowhere else: by the demuxer, the time-shift ring's
/// framer, the thumbnail reader's index walk and the demo server's splitter.
public struct FLVTagHeader: Sendable, Hashable {
    public static let size = 11
    /// The first byte as sent: the type in its low 5 bits, the filter bit (0x20, encryption) and two reserved bits.
    public var typeByte: UInt8
    /// The body's length.
    public var dataSize: Int
    /// The 32-bit timestamp in milliseconds: 24 bits, and the extension byte as the high 8.
    public var timestamp: UInt32
    /// Always 0 in a well-formed stream.
    public var streamID: UInt32

    /// The header at the start of `bytes`; nil when fewer than 11 bytes are there.
    @inlinable
    public init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= Self.size else { return nil }
        typeByte = bytes[0]
        dataSize = Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        timestamp = UInt32(bytes[7]) << 24 | UInt32(bytes[4]) << 16 | UInt32(bytes[5]) << 8 | UInt32(bytes[6])
        streamID = UInt32(bytes[8]) << 16 | UInt32(bytes[9]) << 8 | UInt32(bytes[10])
    }

    /// The header in `bytes[start..<start + 11]`; nil when fewer bytes are there. Not generic over the collection:
    /// an unspecialized generic reads each byte through a coroutine that can allocate (800 allocations a second of
    /// media in the debug build's `AllocationCountTests`).
    @inlinable
    public init?(_ bytes: [UInt8], at start: Int) {
        guard start >= 0, start <= bytes.count else { return nil }
        guard let header = bytes.withUnsafeBytes({ Self(UnsafeRawBufferPointer(rebasing: $0[start...])) }) else {
            return nil
        }
        self = header
    }

    /// The tag's type, when it is one liveplay knows and neither the filter bit nor a reserved bit is set.
    @inlinable
    public var type: FLVTagType? {
        typeByte & 0xE0 == 0 ? FLVTagType(rawValue: typeByte & 0x1F) : nil
    }

    /// Whether these bytes can be a tag header: a known type, no filter or reserved bit, a body within
    /// `maximumTagSize`; `strict` also asks for a zero `StreamID` (what a resynchronization trusts).
    @inlinable
    public func isPlausible(maximumTagSize: Int, strict: Bool = false) -> Bool {
        type != nil && dataSize <= maximumTagSize && (!strict || streamID == 0)
    }
}
