/// Which elementary stream a packet or configuration belongs to.
public enum MediaKind: String, Sendable, Hashable, CaseIterable {
    case video
    case audio
}

/// Video codecs liveplay recognises. Raw values are the names ffmpeg uses.
public enum VideoCodec: String, Sendable, Hashable, CaseIterable {
    case h264
    case hevc
    /// Enhanced RTMP `av01`, decoded by libdav1d.
    case av1
    /// Enhanced RTMP `vp09`.
    case vp9
    /// Enhanced RTMP `vp08`.
    case vp8
    /// Enhanced RTMP `vvc1`: recognised by name, not decoded (Debian's libavcodec has no VVC decoder).
    case vvc

    public var isSupported: Bool { self != .vvc }

    /// Whether packets are length-prefixed NAL units (and carry a composition time in FLV).
    public var usesNALUnits: Bool { self == .h264 || self == .hevc || self == .vvc }
}

/// Audio codecs liveplay decodes. Raw values are the names ffmpeg uses.
public enum AudioCodec: String, Sendable, Hashable, CaseIterable {
    case aac
    case mp3
    /// Enhanced RTMP `Opus`: the sequence start is the Opus ID header (RFC 7845 §5.1).
    case opus
    /// Enhanced RTMP `fLaC`: the sequence start is "fLaC" and the STREAMINFO block.
    case flac
    /// Enhanced RTMP `ac-3`: no sequence start; each frame describes itself.
    case ac3
    /// Enhanced RTMP `ec-3`.
    case eac3
}

/// What a video decoder needs to open, and what a person wants to know about the picture.
public struct VideoCodecConfiguration: Sendable, Hashable {
    public var codec: VideoCodec
    /// The decoder configuration record as carried in the sequence header (`avcC` / `hvcC`).
    public var extradata: [UInt8]
    /// Display size, after the SPS cropping window is applied.
    public var width: Int
    public var height: Int
    /// `profile_idc` / `general_profile_idc`.
    public var profile: Int
    /// `level_idc` / `general_level_idc`.
    public var level: Int
    /// Bytes in each NAL unit's length prefix (1, 2 or 4).
    public var nalLengthSize: Int
    /// 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
    public var chromaFormat: Int
    public var bitDepth: Int

    public init(
        codec: VideoCodec, extradata: [UInt8], width: Int, height: Int, profile: Int, level: Int,
        nalLengthSize: Int, chromaFormat: Int = 1, bitDepth: Int = 8
    ) {
        self.codec = codec
        self.extradata = extradata
        self.width = width
        self.height = height
        self.profile = profile
        self.level = level
        self.nalLengthSize = nalLengthSize
        self.chromaFormat = chromaFormat
        self.bitDepth = bitDepth
    }
}

/// What an audio decoder needs to open, and what a person wants to know about the sound.
public struct AudioCodecConfiguration: Sendable, Hashable {
    public var codec: AudioCodec
    /// What the decoder opens with: AAC's AudioSpecificConfig, Opus's ID header, FLAC's STREAMINFO; empty for
    /// MP3, AC-3 and E-AC-3.
    public var extradata: [UInt8]
    public var sampleRate: Int
    public var channels: Int
    /// AAC audio object type (2 = LC, 5 = HE-AAC, 29 = HE-AACv2); for MP3 the layer (3); 0 for the others.
    public var objectType: Int
    /// The speakers present, when the stream names them (Enhanced RTMP's MultichannelConfig in native order),
    /// as a mask of libavutil's `AV_CH_*` bits (the specification's `AudioChannelMask` uses the same bits for
    /// its first 18 speakers); nil when only the count is known and the codec's own default applies.
    public var channelMask: UInt64?

    public init(
        codec: AudioCodec, extradata: [UInt8], sampleRate: Int, channels: Int, objectType: Int,
        channelMask: UInt64? = nil
    ) {
        self.codec = codec
        self.extradata = extradata
        self.sampleRate = sampleRate
        self.channels = channels
        self.objectType = objectType
        self.channelMask = channelMask
    }
}

/// Enhanced RTMP's `colorInfo` video metadata: the colour description and HDR levels of the pictures that follow,
/// until the next one (the codes are ITU-T H.273's, as the codecs' own headers use them).
public struct VideoColorInfo: Sendable, Hashable {
    public var bitDepth: Int?
    public var colorPrimaries: Int?
    public var transferCharacteristics: Int?
    public var matrixCoefficients: Int?
    /// Content light levels (cd/m²): `maxCLL` and `maxFall`.
    public var maxContentLightLevel: Int?
    public var maxFrameAverageLightLevel: Int?
    /// Mastering display colour volume (`hdrMdcv`): `redX` … `whitePointY`, `maxLuminance`, `minLuminance`.
    public var masteringDisplay: [String: Double]

    public init(
        bitDepth: Int? = nil, colorPrimaries: Int? = nil, transferCharacteristics: Int? = nil,
        matrixCoefficients: Int? = nil, maxContentLightLevel: Int? = nil, maxFrameAverageLightLevel: Int? = nil,
        masteringDisplay: [String: Double] = [:]
    ) {
        self.bitDepth = bitDepth
        self.colorPrimaries = colorPrimaries
        self.transferCharacteristics = transferCharacteristics
        self.matrixCoefficients = matrixCoefficients
        self.maxContentLightLevel = maxContentLightLevel
        self.maxFrameAverageLightLevel = maxFrameAverageLightLevel
        self.masteringDisplay = masteringDisplay
    }

    /// Whether the pictures are HDR: PQ (16) or HLG (18) transfer.
    public var isHDR: Bool { transferCharacteristics == 16 || transferCharacteristics == 18 }
}
