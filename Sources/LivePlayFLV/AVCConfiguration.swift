public import LivePlayCore

/// The `avcC` record that configures an H.264 decoder (ISO/IEC 14496-15 §5.3.3.1).
///
/// FLV carries it as the body of the AVC sequence header. Parsing never traps and never allocates more
/// than the input's size: every count is checked against the bytes that are actually there.
public struct AVCDecoderConfigurationRecord: Sendable, Hashable {
    /// The fields that follow the parameter sets for profiles other than 66, 77 and 88 (§5.3.3.1).
    public struct FormatExtension: Sendable, Hashable {
        /// `chroma_format`: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
        public var chromaFormat: Int
        /// `bit_depth_luma_minus8` + 8.
        public var bitDepthLuma: Int
        /// `bit_depth_chroma_minus8` + 8.
        public var bitDepthChroma: Int
        /// Sequence parameter set extension NAL units (type 13).
        public var sequenceParameterSetExtensions: [[UInt8]]

        public init(
            chromaFormat: Int, bitDepthLuma: Int, bitDepthChroma: Int, sequenceParameterSetExtensions: [[UInt8]]
        ) {
            self.chromaFormat = chromaFormat
            self.bitDepthLuma = bitDepthLuma
            self.bitDepthChroma = bitDepthChroma
            self.sequenceParameterSetExtensions = sequenceParameterSetExtensions
        }
    }

    /// `configurationVersion`; always 1.
    public var configurationVersion: Int
    /// `AVCProfileIndication`: the `profile_idc` of the parameter sets.
    public var profileIndication: Int
    /// `profile_compatibility`: the constraint-set flags byte of the parameter sets.
    public var profileCompatibility: UInt8
    /// `AVCLevelIndication`: the `level_idc` of the parameter sets.
    public var levelIndication: Int
    /// Bytes in each NAL unit's length prefix: `lengthSizeMinusOne` + 1, one of 1, 2 or 4.
    public var nalLengthSize: Int
    /// Sequence parameter set NAL units, each with its one-byte NAL header.
    public var sequenceParameterSets: [[UInt8]]
    /// Picture parameter set NAL units, each with its one-byte NAL header.
    public var pictureParameterSets: [[UInt8]]
    /// Chroma format and bit depths; `nil` when the record omits them (common for older encoders).
    public var formatExtension: FormatExtension?

    /// Parses an `avcC` record, throwing `.malformedConfiguration` if it is truncated or inconsistent.
    public init(parsing bytes: some Collection<UInt8>) throws(FLVError) {
        var reader = ConfigurationByteReader(Array(bytes), structure: "AVC decoder configuration record")
        configurationVersion = Int(try reader.uint8("configurationVersion"))
        guard configurationVersion == 1 else {
            throw reader.malformed("configurationVersion is \(configurationVersion), expected 1")
        }
        profileIndication = Int(try reader.uint8("AVCProfileIndication"))
        profileCompatibility = try reader.uint8("profile_compatibility")
        levelIndication = Int(try reader.uint8("AVCLevelIndication"))
        nalLengthSize = Int(try reader.uint8("lengthSizeMinusOne") & 0x03) + 1
        guard nalLengthSize != 3 else {
            throw reader.malformed("lengthSizeMinusOne is 2; NAL length prefixes must be 1, 2 or 4 bytes")
        }
        let sequenceParameterSetCount = Int(try reader.uint8("numOfSequenceParameterSets") & 0x1F)
        sequenceParameterSets = try reader.lengthPrefixedUnits(sequenceParameterSetCount, "sequenceParameterSetNALUnit")
        let pictureParameterSetCount = Int(try reader.uint8("numOfPictureParameterSets"))
        pictureParameterSets = try reader.lengthPrefixedUnits(pictureParameterSetCount, "pictureParameterSetNALUnit")

        formatExtension = nil
        if Self.profileHasFormatExtension(profileIndication) && reader.remaining > 0 {
            guard reader.remaining >= 4 else {
                throw reader.malformed("chroma format and bit depth fields are truncated")
            }
            let chromaFormat = Int(try reader.uint8("chroma_format") & 0x03)
            let bitDepthLuma = Int(try reader.uint8("bit_depth_luma_minus8") & 0x07) + 8
            let bitDepthChroma = Int(try reader.uint8("bit_depth_chroma_minus8") & 0x07) + 8
            let extensionCount = Int(try reader.uint8("numOfSequenceParameterSetExt"))
            let extensions = try reader.lengthPrefixedUnits(extensionCount, "sequenceParameterSetExtNALUnit")
            formatExtension = FormatExtension(
                chromaFormat: chromaFormat, bitDepthLuma: bitDepthLuma, bitDepthChroma: bitDepthChroma,
                sequenceParameterSetExtensions: extensions
            )
        }
    }

    /// Builds a record from parameter sets (ISO/IEC 14496-15 §5.3.3.1), as a muxer does.
    ///
    /// Profile, compatibility and level come from the first SPS; for profiles other than 66, 77 and 88 the
    /// chroma format and bit depths are parsed from it too and written as the format extension.
    public init(
        sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]], nalLengthSize: Int = 4
    ) throws(FLVError) {
        let structure = "AVC decoder configuration record"
        guard [1, 2, 4].contains(nalLengthSize) else {
            throw FLVError(.malformedConfiguration, "\(structure): NAL length size \(nalLengthSize) is not 1, 2 or 4")
        }
        guard let first = sequenceParameterSets.first else {
            throw FLVError(.malformedConfiguration, "\(structure): at least one sequence parameter set is needed")
        }
        guard sequenceParameterSets.count <= 31, pictureParameterSets.count <= 255 else {
            throw FLVError(.malformedConfiguration, "\(structure): too many parameter sets for the count fields")
        }
        guard (sequenceParameterSets + pictureParameterSets).allSatisfy({ $0.count <= Int(UInt16.max) }) else {
            throw FLVError(.malformedConfiguration, "\(structure): a parameter set is longer than 65535 bytes")
        }
        let parameterSet = try H264SequenceParameterSet(parsing: first)
        configurationVersion = 1
        profileIndication = parameterSet.profileIdc
        profileCompatibility = parameterSet.constraintSetFlags
        levelIndication = parameterSet.levelIdc
        self.nalLengthSize = nalLengthSize
        self.sequenceParameterSets = sequenceParameterSets
        self.pictureParameterSets = pictureParameterSets
        formatExtension = nil
        if Self.profileHasFormatExtension(profileIndication) {
            formatExtension = FormatExtension(
                chromaFormat: parameterSet.chromaFormatIdc, bitDepthLuma: parameterSet.bitDepthLuma,
                bitDepthChroma: parameterSet.bitDepthChroma, sequenceParameterSetExtensions: []
            )
        }
    }

    /// The record's wire form (ISO/IEC 14496-15 §5.3.3.1), reserved bits set to 1.
    ///
    /// Counts and lengths are truncated to their field widths, so a record that was built by hand with
    /// more than 31 SPS or units longer than 65535 bytes does not round-trip.
    public func serialized() -> [UInt8] {
        var output: [UInt8] = [
            UInt8(truncatingIfNeeded: configurationVersion),
            UInt8(truncatingIfNeeded: profileIndication),
            profileCompatibility,
            UInt8(truncatingIfNeeded: levelIndication),
            0xFC | UInt8(truncatingIfNeeded: nalLengthSize - 1) & 0x03,
            0xE0 | UInt8(truncatingIfNeeded: sequenceParameterSets.count) & 0x1F,
        ]
        appendLengthPrefixed(sequenceParameterSets, to: &output)
        output.append(UInt8(truncatingIfNeeded: pictureParameterSets.count))
        appendLengthPrefixed(pictureParameterSets, to: &output)
        if let formatExtension {
            output.append(0xFC | UInt8(truncatingIfNeeded: formatExtension.chromaFormat) & 0x03)
            output.append(0xF8 | UInt8(truncatingIfNeeded: formatExtension.bitDepthLuma - 8) & 0x07)
            output.append(0xF8 | UInt8(truncatingIfNeeded: formatExtension.bitDepthChroma - 8) & 0x07)
            output.append(UInt8(truncatingIfNeeded: formatExtension.sequenceParameterSetExtensions.count))
            appendLengthPrefixed(formatExtension.sequenceParameterSetExtensions, to: &output)
        }
        return output
    }

    /// Whether §5.3.3.1 puts chroma format and bit depths after the parameter sets for this profile.
    private static func profileHasFormatExtension(_ profile: Int) -> Bool {
        profile != 66 && profile != 77 && profile != 88
    }
}

/// Appends each unit with a 16-bit big-endian length in front, as `avcC` and `hvcC` store them.
func appendLengthPrefixed(_ units: [[UInt8]], to output: inout [UInt8]) {
    for unit in units {
        output.append(UInt8(truncatingIfNeeded: unit.count >> 8))
        output.append(UInt8(truncatingIfNeeded: unit.count))
        output.append(contentsOf: unit)
    }
}

/// The fields of an H.264 sequence parameter set that size and describe the picture (ITU-T H.264 §7.3.2.1.1).
///
/// Parsing stops after the VUI timing information; HRD parameters and later fields are not read.
public struct H264SequenceParameterSet: Sendable, Hashable {
    /// `profile_idc` (66 baseline, 77 main, 100 high, 244 high 4:4:4 predictive, …).
    public var profileIdc: Int
    /// `constraint_set0_flag` … `constraint_set5_flag` and the two reserved bits, as one byte.
    public var constraintSetFlags: UInt8
    /// `level_idc`: ten times the level number (31 is level 3.1).
    public var levelIdc: Int
    /// `seq_parameter_set_id`.
    public var seqParameterSetId: Int
    /// `chroma_format_idc`: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
    public var chromaFormatIdc: Int
    /// `separate_colour_plane_flag`: 4:4:4 coded as three monochrome planes.
    public var separateColourPlane: Bool
    /// `bit_depth_luma_minus8` + 8.
    public var bitDepthLuma: Int
    /// `bit_depth_chroma_minus8` + 8.
    public var bitDepthChroma: Int
    /// `pic_order_cnt_type`: 0, 1 or 2.
    public var picOrderCntType: Int
    /// `frame_mbs_only_flag`: false when the stream may contain fields (interlaced coding).
    public var frameMbsOnly: Bool
    /// Decoded frame width in luma samples, before cropping.
    public var codedWidth: Int
    /// Decoded frame height in luma samples, before cropping.
    public var codedHeight: Int
    /// Display width: the coded width minus the frame cropping window.
    public var width: Int
    /// Display height: the coded height minus the frame cropping window.
    public var height: Int
    /// Frames per second, `time_scale / (2 × num_units_in_tick)` from the VUI (§E.2.1), when signalled.
    ///
    /// `nil` when the VUI has no timing information, or is truncated before it.
    public var frameRate: Double?

    /// Parses an SPS NAL unit, including its one-byte NAL header and any emulation-prevention bytes.
    public init(parsing nalUnit: some Collection<UInt8>) throws(FLVError) {
        var reader = ParameterSetBitReader(BitReader.rbsp(nalUnit), structure: "H.264 sequence parameter set")
        guard try reader.bits(1, "forbidden_zero_bit") == 0 else {
            throw reader.malformed("forbidden_zero_bit is set")
        }
        try reader.skip(2, "nal_ref_idc")
        let nalUnitType = try reader.bits(5, "nal_unit_type")
        guard nalUnitType == 7 else {
            throw reader.malformed("nal_unit_type is \(nalUnitType), expected 7")
        }

        profileIdc = Int(try reader.bits(8, "profile_idc"))
        constraintSetFlags = UInt8(try reader.bits(8, "constraint_set_flags"))
        levelIdc = Int(try reader.bits(8, "level_idc"))
        seqParameterSetId = try reader.unsignedExpGolomb("seq_parameter_set_id", maximum: 31)

        chromaFormatIdc = 1
        separateColourPlane = false
        bitDepthLuma = 8
        bitDepthChroma = 8
        if Self.profileHasChromaFields(profileIdc) {
            chromaFormatIdc = try reader.unsignedExpGolomb("chroma_format_idc", maximum: 3)
            if chromaFormatIdc == 3 {
                separateColourPlane = try reader.flag("separate_colour_plane_flag")
            }
            bitDepthLuma = try reader.unsignedExpGolomb("bit_depth_luma_minus8", maximum: 6) + 8
            bitDepthChroma = try reader.unsignedExpGolomb("bit_depth_chroma_minus8", maximum: 6) + 8
            try reader.skip(1, "qpprime_y_zero_transform_bypass_flag")
            if try reader.flag("seq_scaling_matrix_present_flag") {
                let listCount = chromaFormatIdc == 3 ? 12 : 8
                for index in 0..<listCount {
                    if try reader.flag("seq_scaling_list_present_flag") {
                        try Self.skipScalingList(size: index < 6 ? 16 : 64, reader: &reader)
                    }
                }
            }
        }

        _ = try reader.unsignedExpGolomb("log2_max_frame_num_minus4", maximum: 12)
        picOrderCntType = try reader.unsignedExpGolomb("pic_order_cnt_type", maximum: 2)
        if picOrderCntType == 0 {
            _ = try reader.unsignedExpGolomb("log2_max_pic_order_cnt_lsb_minus4", maximum: 12)
        } else if picOrderCntType == 1 {
            try reader.skip(1, "delta_pic_order_always_zero_flag")
            _ = try reader.signedExpGolomb("offset_for_non_ref_pic")
            _ = try reader.signedExpGolomb("offset_for_top_to_bottom_field")
            let cycleLength = try reader.unsignedExpGolomb("num_ref_frames_in_pic_order_cnt_cycle", maximum: 255)
            for _ in 0..<cycleLength {
                _ = try reader.signedExpGolomb("offset_for_ref_frame")
            }
        }
        _ = try reader.unsignedExpGolomb("max_num_ref_frames", maximum: 255)
        try reader.skip(1, "gaps_in_frame_num_value_allowed_flag")
        let widthInMacroblocks = try reader.unsignedExpGolomb("pic_width_in_mbs_minus1", maximum: 4095) + 1
        let heightInMapUnits = try reader.unsignedExpGolomb("pic_height_in_map_units_minus1", maximum: 4095) + 1
        frameMbsOnly = try reader.flag("frame_mbs_only_flag")
        if !frameMbsOnly {
            try reader.skip(1, "mb_adaptive_frame_field_flag")
        }
        try reader.skip(1, "direct_8x8_inference_flag")

        codedWidth = widthInMacroblocks * 16
        codedHeight = (frameMbsOnly ? 1 : 2) * heightInMapUnits * 16
        width = codedWidth
        height = codedHeight
        if try reader.flag("frame_cropping_flag") {
            let left = try reader.unsignedExpGolomb("frame_crop_left_offset")
            let right = try reader.unsignedExpGolomb("frame_crop_right_offset")
            let top = try reader.unsignedExpGolomb("frame_crop_top_offset")
            let bottom = try reader.unsignedExpGolomb("frame_crop_bottom_offset")
            // Crop units (§7.4.2.1.1, equations 7-19 to 7-22) depend on the chroma subsampling.
            let chromaArrayType = separateColourPlane ? 0 : chromaFormatIdc
            let subWidth = chromaArrayType == 1 || chromaArrayType == 2 ? 2 : 1
            let subHeight = chromaArrayType == 1 ? 2 : 1
            let cropUnitX = subWidth
            let cropUnitY = subHeight * (frameMbsOnly ? 1 : 2)
            width -= cropUnitX * (left + right)
            height -= cropUnitY * (top + bottom)
            guard width > 0, height > 0 else {
                throw reader.malformed(
                    "frame cropping (\(left), \(right), \(top), \(bottom)) leaves nothing of "
                        + "\(codedWidth)x\(codedHeight)"
                )
            }
        }

        frameRate = nil
        if (try? reader.flag("vui_parameters_present_flag")) == true {
            // A truncated or odd VUI costs only the frame rate, never the picture size.
            frameRate = try? Self.frameRateFromVUI(&reader)
        }
    }

    /// Reads VUI parameters up to `timing_info_present_flag` and its fields (ITU-T H.264 §E.1.1).
    private static func frameRateFromVUI(_ reader: inout ParameterSetBitReader) throws(FLVError) -> Double? {
        if try reader.flag("aspect_ratio_info_present_flag") {
            if try reader.bits(8, "aspect_ratio_idc") == 255 {
                try reader.skip(32, "sar_width and sar_height")
            }
        }
        if try reader.flag("overscan_info_present_flag") {
            try reader.skip(1, "overscan_appropriate_flag")
        }
        if try reader.flag("video_signal_type_present_flag") {
            try reader.skip(4, "video_format and video_full_range_flag")
            if try reader.flag("colour_description_present_flag") {
                try reader.skip(24, "colour_primaries, transfer_characteristics and matrix_coefficients")
            }
        }
        if try reader.flag("chroma_loc_info_present_flag") {
            _ = try reader.unsignedExpGolomb("chroma_sample_loc_type_top_field", maximum: 5)
            _ = try reader.unsignedExpGolomb("chroma_sample_loc_type_bottom_field", maximum: 5)
        }
        guard try reader.flag("timing_info_present_flag") else { return nil }
        let unitsInTick = try reader.bits(32, "num_units_in_tick")
        let timeScale = try reader.bits(32, "time_scale")
        guard unitsInTick > 0, timeScale > 0 else { return nil }
        return Double(timeScale) / (2 * Double(unitsInTick))
    }

    /// Skips one `scaling_list()` (ITU-T H.264 §7.3.2.1.1.1), which is delta-coded and ends early on a zero.
    private static func skipScalingList(size: Int, reader: inout ParameterSetBitReader) throws(FLVError) {
        var lastScale = 8
        var nextScale = 8
        for _ in 0..<size {
            if nextScale != 0 {
                let delta = try reader.signedExpGolomb("delta_scale", range: -128...127)
                nextScale = (lastScale + delta + 256) % 256
            }
            lastScale = nextScale == 0 ? lastScale : nextScale
        }
    }

    /// Whether the profile carries `chroma_format_idc`, bit depths and scaling matrices (§7.3.2.1.1).
    private static func profileHasChromaFields(_ profile: Int) -> Bool {
        switch profile {
        case 100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135: true
        default: false
        }
    }
}

extension VideoCodecConfiguration {
    /// An H.264 configuration from an `avcC` record (ISO/IEC 14496-15 §5.3.3.1), described by its first SPS.
    public static func avc(record: [UInt8]) throws(FLVError) -> VideoCodecConfiguration {
        let parsed = try AVCDecoderConfigurationRecord(parsing: record)
        guard let first = parsed.sequenceParameterSets.first else {
            throw FLVError(.malformedConfiguration, "AVC decoder configuration record has no sequence parameter set")
        }
        let parameterSet = try H264SequenceParameterSet(parsing: first)
        return VideoCodecConfiguration(
            codec: .h264, extradata: record, width: parameterSet.width, height: parameterSet.height,
            profile: parameterSet.profileIdc, level: parameterSet.levelIdc, nalLengthSize: parsed.nalLengthSize,
            chromaFormat: parameterSet.chromaFormatIdc, bitDepth: parameterSet.bitDepthLuma
        )
    }
}
