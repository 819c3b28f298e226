public import LivePlayCore

// The decoder configurations of Enhanced RTMP v2's FourCC codecs: what the sequence start carries (AV1's av1C,
// VP8 / VP9's vpcC, Opus's ID header, FLAC's STREAMINFO) and, where the stream may lack one, what a keyframe
// or a frame header tells (the picture size of VP8 / VP9, AC-3's rate and channels).

extension VideoCodecConfiguration {
    /// An `AV1CodecConfigurationRecord` (AV1 ISOBMFF binding §2.3): four bytes of profile, level and colour
    /// format, then the configOBUs, whose sequence header gives the picture size. When the record has no
    /// sequence header, `keyframe` (a temporal unit) is searched for one.
    public static func av1(record: [UInt8], keyframe: [UInt8] = []) throws(FLVError) -> VideoCodecConfiguration {
        var reader = ConfigurationByteReader(record, structure: "AV1CodecConfigurationRecord")
        let marker = try reader.uint8("marker and version")
        guard marker == 0x81 else { throw reader.malformed("marker and version are 0x\(String(marker, radix: 16)), not 0x81") }
        let profileAndLevel = try reader.uint8("seq_profile")
        let format = try reader.uint8("colour format")
        _ = try reader.uint8("initial_presentation_delay")
        let highBitDepth = format & 0x40 != 0
        let bitDepth = highBitDepth ? (format & 0x20 != 0 ? 12 : 10) : 8
        let chromaFormat =
            if format & 0x10 != 0 { 0 } else {
                switch (format & 0x08 != 0, format & 0x04 != 0) {
                case (true, true): 1
                case (true, false): 2
                default: 3
                }
            }
        var header = try AV1SequenceHeader(searching: record.dropFirst(4))
        if header == nil { header = try AV1SequenceHeader(searching: keyframe[...]) }
        return VideoCodecConfiguration(
            codec: .av1, extradata: record, width: header?.width ?? 0, height: header?.height ?? 0,
            profile: Int(profileAndLevel >> 5), level: Int(profileAndLevel & 0x1F), nalLengthSize: 0,
            chromaFormat: chromaFormat, bitDepth: bitDepth)
    }

    /// VP8 or VP9: the `VPCodecConfigurationRecord` when the stream sent one (with or without the four bytes of
    /// version and flags FFmpeg's muxer writes in front, as in MP4's `vpcC` box), and the picture size from the
    /// keyframe's own header, which both codecs carry in every keyframe.
    public static func vpx(_ codec: VideoCodec, record: [UInt8], keyframe: [UInt8]) throws(FLVError)
        -> VideoCodecConfiguration
    {
        var profile = 0
        var level = 0
        var bitDepth = 8
        var chromaFormat = 1
        if !record.isEmpty {
            let fields = record.count >= 12 && record[1] == 0 && record[2] == 0 && record[3] == 0 ? record.dropFirst(4) : record[...]
            var reader = ConfigurationByteReader(Array(fields), structure: "VPCodecConfigurationRecord")
            profile = Int(try reader.uint8("profile"))
            level = Int(try reader.uint8("level"))
            let depthAndChroma = try reader.uint8("bitDepth")
            bitDepth = Int(depthAndChroma >> 4)
            // chromaSubsampling: 0 and 1 are 4:2:0 (two siting variants), 2 is 4:2:2, 3 is 4:4:4.
            chromaFormat = max(1, Int(depthAndChroma >> 1 & 0x07))
        }
        let size =
            codec == .vp8 ? try VPXKeyframeSize.vp8(keyframe) : try VPXKeyframeSize.vp9(keyframe)
        return VideoCodecConfiguration(
            codec: codec, extradata: record, width: size.width, height: size.height, profile: profile,
            level: level, nalLengthSize: 0, chromaFormat: chromaFormat, bitDepth: bitDepth)
    }
}

/// The fields of an AV1 `sequence_header_obu` (AV1 specification §5.5) up to the largest picture size.
struct AV1SequenceHeader {
    var width: Int
    var height: Int

    /// The first sequence header among `obus` (low-overhead format, §5.2); nil when there is none.
    init?(searching obus: ArraySlice<UInt8>) throws(FLVError) {
        var index = obus.startIndex
        while index < obus.endIndex {
            let header = obus[index]
            let type = header >> 3 & 0x0F
            var next = index + 1 + (header & 0x04 != 0 ? 1 : 0)
            var size = obus.endIndex - next
            if header & 0x02 != 0 {
                guard let (value, length) = Self.leb128(obus[min(next, obus.endIndex)...]) else {
                    throw FLVError(.malformedConfiguration, "AV1 OBU size is truncated")
                }
                size = value
                next += length
            }
            guard size >= 0, size <= obus.endIndex - next else {
                throw FLVError(.malformedConfiguration, "AV1 OBU claims \(size) bytes, \(obus.endIndex - next) remain")
            }
            if type == 1 {
                try self.init(parsing: Array(obus[next..<next + size]))
                return
            }
            index = next + size
        }
        return nil
    }

    private init(parsing payload: [UInt8]) throws(FLVError) {
        var reader = ParameterSetBitReader(payload, structure: "AV1 sequence header")
        _ = try reader.bits(3, "seq_profile")
        _ = try reader.flag("still_picture")
        if try reader.flag("reduced_still_picture_header") {
            try reader.skip(5, "seq_level_idx")
        } else {
            var bufferDelayLength = 0
            var decoderModelInfoPresent = false
            if try reader.flag("timing_info_present_flag") {
                try reader.skip(64, "timing_info")
                if try reader.flag("equal_picture_interval") {
                    var zeros = 0
                    while try !reader.flag("num_ticks_per_picture_minus_1") {
                        zeros += 1
                        guard zeros < 32 else { throw reader.malformed("num_ticks_per_picture_minus_1 is too long") }
                    }
                    try reader.skip(zeros, "num_ticks_per_picture_minus_1")
                }
                decoderModelInfoPresent = try reader.flag("decoder_model_info_present_flag")
                if decoderModelInfoPresent {
                    bufferDelayLength = Int(try reader.bits(5, "buffer_delay_length_minus_1")) + 1
                    try reader.skip(42, "decoder_model_info")
                }
            }
            let initialDisplayDelayPresent = try reader.flag("initial_display_delay_present_flag")
            let operatingPoints = Int(try reader.bits(5, "operating_points_cnt_minus_1")) + 1
            for _ in 0..<operatingPoints {
                try reader.skip(12, "operating_point_idc")
                if try reader.bits(5, "seq_level_idx") > 7 { try reader.skip(1, "seq_tier") }
                if decoderModelInfoPresent, try reader.flag("decoder_model_present_for_this_op") {
                    try reader.skip(2 * bufferDelayLength + 1, "operating_parameters_info")
                }
                if initialDisplayDelayPresent, try reader.flag("initial_display_delay_present_for_this_op") {
                    try reader.skip(4, "initial_display_delay_minus_1")
                }
            }
        }
        let widthBits = Int(try reader.bits(4, "frame_width_bits_minus_1")) + 1
        let heightBits = Int(try reader.bits(4, "frame_height_bits_minus_1")) + 1
        width = Int(try reader.bits(widthBits, "max_frame_width_minus_1")) + 1
        height = Int(try reader.bits(heightBits, "max_frame_height_minus_1")) + 1
    }

    /// An unsigned LEB128 (§4.10.5) and its length in bytes; nil when truncated or longer than 8 bytes.
    static func leb128(_ bytes: ArraySlice<UInt8>) -> (Int, Int)? {
        var value = 0
        for (count, byte) in bytes.prefix(8).enumerated() {
            value |= Int(byte & 0x7F) << (7 * count)
            if byte & 0x80 == 0 { return (value, count + 1) }
        }
        return nil
    }
}

/// The picture size in a VP8 or VP9 keyframe's uncompressed header.
enum VPXKeyframeSize {
    /// VP8 (RFC 6386 §9.1): a 3-byte frame tag, the start code 9D 01 2A, then 14-bit little-endian sizes.
    static func vp8(_ frame: [UInt8]) throws(FLVError) -> (width: Int, height: Int) {
        guard frame.count >= 10, frame[0] & 0x01 == 0, frame[3] == 0x9D, frame[4] == 0x01, frame[5] == 0x2A else {
            throw FLVError(.malformedConfiguration, "VP8 keyframe has no start code")
        }
        let size = (Int(frame[6]) | Int(frame[7] & 0x3F) << 8, Int(frame[8]) | Int(frame[9] & 0x3F) << 8)
        guard size.0 > 0, size.1 > 0 else { throw FLVError(.malformedConfiguration, "VP8 keyframe of size 0") }
        return size
    }

    /// VP9 (VP9 bitstream specification §6.2): frame marker, profile, frame type, the sync code, the colour
    /// configuration, then 16-bit sizes minus one.
    static func vp9(_ frame: [UInt8]) throws(FLVError) -> (width: Int, height: Int) {
        var reader = ParameterSetBitReader(frame, structure: "VP9 uncompressed header")
        guard try reader.bits(2, "frame_marker") == 2 else { throw reader.malformed("frame_marker is not 2") }
        let low = try reader.bits(1, "profile_low_bit")
        let profile = Int(try reader.bits(1, "profile_high_bit") << 1 | low)
        if profile == 3 { try reader.skip(1, "reserved_zero") }
        guard try !reader.flag("show_existing_frame"), try !reader.flag("frame_type") else {
            throw reader.malformed("the keyframe is not a key frame")
        }
        try reader.skip(2, "show_frame and error_resilient_mode")
        guard try reader.bits(24, "frame_sync_code") == 0x49_8342 else { throw reader.malformed("no frame_sync_code") }
        if profile >= 2 { try reader.skip(1, "ten_or_twelve_bit") }
        if try reader.bits(3, "color_space") != 7 {
            try reader.skip(1, "color_range")
            if profile == 1 || profile == 3 { try reader.skip(3, "subsampling") }
        } else if profile == 1 || profile == 3 {
            try reader.skip(1, "reserved_zero")
        }
        let width = Int(try reader.bits(16, "frame_width_minus_1")) + 1
        let height = Int(try reader.bits(16, "frame_height_minus_1")) + 1
        return (width, height)
    }
}

extension AudioCodecConfiguration {
    /// Opus: the ID header (RFC 7845 §5.1), which libavcodec opens with as it is. An empty sequence start means
    /// stereo at 48 kHz, or the channels `multichannel` names.
    public static func opus(header: [UInt8], multichannel: FLVMultichannelConfig? = nil) throws(FLVError)
        -> AudioCodecConfiguration
    {
        guard !header.isEmpty else {
            return AudioCodecConfiguration(
                codec: .opus, extradata: [], sampleRate: 48000, channels: multichannel?.channelCount ?? 2,
                objectType: 0, channelMask: multichannel?.channelMask)
        }
        guard header.count >= 19, header.starts(with: Array("OpusHead".utf8)) else {
            throw FLVError(.malformedConfiguration, "Opus ID header: no OpusHead signature, or shorter than 19 bytes")
        }
        let channels = Int(header[9])
        guard channels > 0 else { throw FLVError(.malformedConfiguration, "Opus ID header: 0 channels") }
        return AudioCodecConfiguration(
            codec: .opus, extradata: header, sampleRate: 48000, channels: channels, objectType: 0,
            channelMask: multichannel?.channelMask)
    }

    /// FLAC: "fLaC", a metadata block header and STREAMINFO (FLAC format §8.2). The decoder opens with the
    /// 34 bytes of STREAMINFO, the form both libavcodec and the MP4 muxer take.
    public static func flac(header: [UInt8]) throws(FLVError) -> AudioCodecConfiguration {
        guard header.count >= 42, header.starts(with: Array("fLaC".utf8)), header[4] & 0x7F == 0 else {
            throw FLVError(.malformedConfiguration, "FLAC sequence header: no fLaC signature and STREAMINFO block")
        }
        let streamInfo = Array(header[8..<42])
        let sampleRate = Int(streamInfo[10]) << 12 | Int(streamInfo[11]) << 4 | Int(streamInfo[12]) >> 4
        let channels = Int(streamInfo[12] >> 1 & 0x07) + 1
        guard sampleRate > 0 else { throw FLVError(.malformedConfiguration, "FLAC STREAMINFO: sample rate 0") }
        return AudioCodecConfiguration(
            codec: .flac, extradata: streamInfo, sampleRate: sampleRate, channels: channels, objectType: 0)
    }

    /// AC-3 or E-AC-3 from a frame's own header (ATSC A/52 §5.4.1 and Annex E §2.3.1): they have no sequence
    /// start. nil when `frame` does not begin with a syncframe.
    public static func dolby(frame: some Collection<UInt8>) -> AudioCodecConfiguration? {
        var reader = BitReader(Array(frame.prefix(8)))
        guard reader.readBits(16) == 0x0B77, reader.skipBits(24), let bsid = reader.readBits(5) else { return nil }
        reader = BitReader(Array(frame.prefix(8)))
        _ = reader.skipBits(16)
        let rates = [48000, 44100, 32000]
        let sampleRate: Int
        let acmod: UInt32
        if bsid <= 10 {
            guard reader.skipBits(16), let fscod = reader.readBits(2), fscod < 3, reader.skipBits(6 + 8),
                let mode = reader.readBits(3)
            else { return nil }
            sampleRate = rates[Int(fscod)]
            acmod = mode
            let skipped = (mode & 1 != 0 && mode != 1 ? 2 : 0) + (mode & 4 != 0 ? 2 : 0) + (mode == 2 ? 2 : 0)
            guard reader.skipBits(skipped) else { return nil }
        } else {
            guard reader.skipBits(2 + 3 + 11), let fscod = reader.readBits(2), let fscod2 = reader.readBits(2),
                let mode = reader.readBits(3)
            else { return nil }
            sampleRate = fscod == 3 ? (fscod2 < 3 ? rates[Int(fscod2)] / 2 : 0) : rates[Int(fscod)]
            acmod = mode
        }
        guard sampleRate > 0, let lfe = reader.readBit() else { return nil }
        let channels = [2, 1, 2, 3, 3, 4, 4, 5][Int(acmod)] + Int(lfe)
        return AudioCodecConfiguration(
            codec: bsid <= 10 ? .ac3 : .eac3, extradata: [], sampleRate: sampleRate, channels: channels, objectType: 0)
    }
}

/// Enhanced RTMP's `MultichannelConfig` audio packet: the channel count and, in native order, which speakers.
public struct FLVMultichannelConfig: Sendable, Hashable {
    public var channelCount: Int
    /// libavutil `AV_CH_*` bits; nil for an unspecified order, or a custom one that is not native order.
    public var channelMask: UInt64?
    /// A custom order that could not be expressed as a mask (the channels are then taken as the codec says).
    public var isReordered: Bool

    /// The spec's `AudioChannel` numbers 0–17 are libavutil's bit positions; its 22.2 additions are not.
    private static let extraSpeakers: [UInt8: UInt64] = [
        18: 1 << 35,  // LowFrequency2 → AV_CH_LOW_FREQUENCY_2
        19: 1 << 36,  // TopSideLeft → AV_CH_TOP_SIDE_LEFT
        20: 1 << 37,  // TopSideRight → AV_CH_TOP_SIDE_RIGHT
        21: 1 << 38,  // BottomFrontCenter
        22: 1 << 39,  // BottomFrontLeft
        23: 1 << 40,  // BottomFrontRight
    ]

    public init(parsing body: ArraySlice<UInt8>) throws(FLVError) {
        var reader = ConfigurationByteReader(Array(body), structure: "MultichannelConfig")
        let order = try reader.uint8("audioChannelOrder")
        channelCount = Int(try reader.uint8("channelCount"))
        channelMask = nil
        isReordered = false
        switch order {
        case 1:
            let flags = try reader.uint32("audioChannelFlags")
            var mask = UInt64(flags & 0x3_FFFF)
            for (bit, speaker) in Self.extraSpeakers where flags & (1 << UInt32(bit)) != 0 { mask |= speaker }
            channelMask = mask
        case 2:
            var speakers: [UInt64] = []
            for index in 0..<channelCount {
                let channel = try reader.uint8("audioChannelMapping[\(index)]")
                guard let speaker = channel < 18 ? UInt64(1) << UInt64(channel) : Self.extraSpeakers[channel] else {
                    isReordered = true
                    return
                }
                speakers.append(speaker)
            }
            if speakers == speakers.sorted(), Set(speakers).count == speakers.count {
                channelMask = speakers.reduce(0, |)
            } else {
                isReordered = true
            }
        default:
            break
        }
    }
}

extension VideoColorInfo {
    /// The `colorInfo` object (Enhanced RTMP v2, "Metadata Frame"): `colorConfig`, `hdrCll`, `hdrMdcv`; nil for
    /// Undefined or an object with none of them (the specification's reset).
    public init?(amf value: AMF0Value) {
        let config = value["colorConfig"]
        let light = value["hdrCll"]
        let mastering = value["hdrMdcv"]?.properties ?? []
        guard config != nil || light != nil || !mastering.isEmpty else { return nil }
        let integer = { (object: AMF0Value?, key: String) in object?[key]?.numberValue.flatMap { Int(exactly: $0.rounded()) } }
        self.init(
            bitDepth: integer(config, "bitDepth"), colorPrimaries: integer(config, "colorPrimaries"),
            transferCharacteristics: integer(config, "transferCharacteristics"),
            matrixCoefficients: integer(config, "matrixCoefficients"), maxContentLightLevel: integer(light, "maxCLL"),
            maxFrameAverageLightLevel: integer(light, "maxFall"),
            masteringDisplay: Dictionary(
                mastering.compactMap { property in property.value.numberValue.map { (property.key, $0) } },
                uniquingKeysWith: { first, _ in first }))
    }
}
