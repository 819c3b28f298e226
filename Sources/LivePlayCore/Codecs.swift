/// Which elementary stream a packet or configuration belongs to.
public enum MediaKind: String, Sendable, Hashable, CaseIterable {
    case video
    case audio
}

/// Video codecs liveplay recognises. Raw values are the names ffmpeg uses.
public enum VideoCodec: String, Sendable, Hashable {
    case h264
    case hevc
    /// Recognised in Enhanced RTMP (`av01`), not decoded.
    case av1
    /// Recognised in Enhanced RTMP (`vp09`), not decoded.
    case vp9

    public var isSupported: Bool { self == .h264 || self == .hevc }
}

/// Audio codecs liveplay decodes. Raw values are the names ffmpeg uses.
public enum AudioCodec: String, Sendable, Hashable {
    case aac
    case mp3
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
    /// AAC's AudioSpecificConfig; empty for MP3.
    public var extradata: [UInt8]
    public var sampleRate: Int
    public var channels: Int
    /// AAC audio object type (2 = LC, 5 = HE-AAC, 29 = HE-AACv2); for MP3 the layer (3).
    public var objectType: Int

    public init(codec: AudioCodec, extradata: [UInt8], sampleRate: Int, channels: Int, objectType: Int) {
        self.codec = codec
        self.extradata = extradata
        self.sampleRate = sampleRate
        self.channels = channels
        self.objectType = objectType
    }
}
