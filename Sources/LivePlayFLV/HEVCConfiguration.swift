public import LivePlayCore

/// The `hvcC` record that configures an HEVC decoder (ISO/IEC 14496-15 §8.3.3.1).
///
/// Enhanced RTMP and the legacy codec-id-12 convention both carry it as the HEVC sequence header.
/// Parsing never traps and never allocates more than the input's size.
public struct HEVCDecoderConfigurationRecord: Sendable, Hashable {
    /// One entry of the record's NAL unit arrays: all units of one type (§8.3.3.1).
    public struct NALUnitArray: Sendable, Hashable {
        /// `array_completeness`: every unit of this type is here, none will come in band.
        public var isComplete: Bool
        /// `NAL_unit_type`: 32 VPS, 33 SPS, 34 PPS, 39 / 40 SEI.
        public var nalUnitType: Int
        /// The NAL units, each with its two-byte NAL header.
        public var units: [[UInt8]]

        public init(isComplete: Bool, nalUnitType: Int, units: [[UInt8]]) {
            self.isComplete = isComplete
            self.nalUnitType = nalUnitType
            self.units = units
        }
    }

    /// `configurationVersion`; always 1.
    public var configurationVersion: Int
    /// `general_profile_space`.
    public var generalProfileSpace: Int
    /// `general_tier_flag`: false Main tier, true High tier.
    public var generalTierFlag: Bool
    /// `general_profile_idc` (1 Main, 2 Main 10, 3 Main Still Picture, 4 range extensions, …).
    public var generalProfileIdc: Int
    /// `general_profile_compatibility_flags`, flag 0 in the most significant bit.
    public var generalProfileCompatibilityFlags: UInt32
    /// `general_constraint_indicator_flags`: the 48 bits from `general_progressive_source_flag` on.
    public var generalConstraintIndicatorFlags: UInt64
    /// `general_level_idc`: thirty times the level number (93 is level 3.1).
    public var generalLevelIdc: Int
    /// `min_spatial_segmentation_idc`.
    public var minSpatialSegmentationIdc: Int
    /// `parallelismType`: 0 unknown or mixed, 1 slices, 2 tiles, 3 wavefront.
    public var parallelismType: Int
    /// `chromaFormat`, as `chroma_format_idc`: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
    public var chromaFormat: Int
    /// `bitDepthLumaMinus8` + 8.
    public var bitDepthLuma: Int
    /// `bitDepthChromaMinus8` + 8.
    public var bitDepthChroma: Int
    /// `avgFrameRate` in frames per 256 seconds; 0 when unspecified.
    public var averageFrameRate: Int
    /// `constantFrameRate`: 0 unknown, 1 constant, 2 each temporal layer constant.
    public var constantFrameRate: Int
    /// `numTemporalLayers`: 0 unknown, 1 not temporally scalable.
    public var numTemporalLayers: Int
    /// `temporalIdNested`.
    public var temporalIdNested: Bool
    /// Bytes in each NAL unit's length prefix: `lengthSizeMinusOne` + 1, one of 1, 2 or 4.
    public var nalLengthSize: Int
    /// The parameter-set and SEI arrays, in record order.
    public var arrays: [NALUnitArray]

    /// Video parameter set NAL units (type 32) from all arrays.
    public var videoParameterSets: [[UInt8]] { units(ofType: 32) }
    /// Sequence parameter set NAL units (type 33) from all arrays.
    public var sequenceParameterSets: [[UInt8]] { units(ofType: 33) }
    /// Picture parameter set NAL units (type 34) from all arrays.
    public var pictureParameterSets: [[UInt8]] { units(ofType: 34) }

    /// Parses an `hvcC` record, throwing `.malformedConfiguration` if it is truncated or inconsistent.
    public init(parsing bytes: some Collection<UInt8>) throws(FLVError) {
        var reader = ConfigurationByteReader(Array(bytes), structure: "HEVC decoder configuration record")
        configurationVersion = Int(try reader.uint8("configurationVersion"))
        guard configurationVersion == 1 else {
            throw reader.malformed("configurationVersion is \(configurationVersion), expected 1")
        }
        let profileByte = try reader.uint8("general_profile_idc")
        generalProfileSpace = Int(profileByte >> 6)
        generalTierFlag = profileByte & 0x20 != 0
        generalProfileIdc = Int(profileByte & 0x1F)
        generalProfileCompatibilityFlags = try reader.uint32("general_profile_compatibility_flags")
        let constraintHigh = try reader.uint16("general_constraint_indicator_flags")
        let constraintLow = try reader.uint32("general_constraint_indicator_flags")
        generalConstraintIndicatorFlags = UInt64(constraintHigh) << 32 | UInt64(constraintLow)
        generalLevelIdc = Int(try reader.uint8("general_level_idc"))
        minSpatialSegmentationIdc = Int(try reader.uint16("min_spatial_segmentation_idc") & 0x0FFF)
        parallelismType = Int(try reader.uint8("parallelismType") & 0x03)
        chromaFormat = Int(try reader.uint8("chromaFormat") & 0x03)
        bitDepthLuma = Int(try reader.uint8("bitDepthLumaMinus8") & 0x07) + 8
        bitDepthChroma = Int(try reader.uint8("bitDepthChromaMinus8") & 0x07) + 8
        averageFrameRate = Int(try reader.uint16("avgFrameRate"))
        let layering = try reader.uint8("lengthSizeMinusOne")
        constantFrameRate = Int(layering >> 6)
        numTemporalLayers = Int(layering >> 3 & 0x07)
        temporalIdNested = layering & 0x04 != 0
        nalLengthSize = Int(layering & 0x03) + 1
        guard nalLengthSize != 3 else {
            throw reader.malformed("lengthSizeMinusOne is 2; NAL length prefixes must be 1, 2 or 4 bytes")
        }
        let arrayCount = Int(try reader.uint8("numOfArrays"))
        var arrays: [NALUnitArray] = []
        for _ in 0..<arrayCount {
            let typeByte = try reader.uint8("NAL_unit_type")
            let unitCount = Int(try reader.uint16("numNalus"))
            let units = try reader.lengthPrefixedUnits(unitCount, "nalUnit of type \(typeByte & 0x3F)")
            let array = NALUnitArray(isComplete: typeByte & 0x80 != 0, nalUnitType: Int(typeByte & 0x3F), units: units)
            arrays.append(array)
        }
        self.arrays = arrays
    }

    /// Builds a record from parameter sets (ISO/IEC 14496-15 §8.3.3.1), as a muxer does.
    ///
    /// Profile, tier, level and their flags, chroma format, bit depths and temporal layering come from
    /// the first SPS. Frame-rate and segmentation hints are left at 0 ("unspecified"), as ffmpeg writes
    /// them when the VUI does not say otherwise. `arraysAreComplete` is `array_completeness`; ffmpeg's FLV
    /// muxer writes 0, `hvc1` sample entries in MP4 require 1.
    public init(
        videoParameterSets: [[UInt8]], sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]],
        nalLengthSize: Int = 4, arraysAreComplete: Bool = false
    ) throws(FLVError) {
        let structure = "HEVC decoder configuration record"
        guard [1, 2, 4].contains(nalLengthSize) else {
            throw FLVError(.malformedConfiguration, "\(structure): NAL length size \(nalLengthSize) is not 1, 2 or 4")
        }
        guard let first = sequenceParameterSets.first, !videoParameterSets.isEmpty, !pictureParameterSets.isEmpty
        else {
            throw FLVError(.malformedConfiguration, "\(structure): at least one VPS, SPS and PPS are needed")
        }
        let lists = [videoParameterSets, sequenceParameterSets, pictureParameterSets]
        guard lists.allSatisfy({ $0.count <= Int(UInt16.max) && $0.allSatisfy { $0.count <= Int(UInt16.max) } })
        else {
            throw FLVError(.malformedConfiguration, "\(structure): too many parameter sets or one over 65535 bytes")
        }
        let parameterSet = try HEVCSequenceParameterSet(parsing: first)
        configurationVersion = 1
        generalProfileSpace = parameterSet.generalProfileSpace
        generalTierFlag = parameterSet.generalTierFlag
        generalProfileIdc = parameterSet.profileIdc
        generalProfileCompatibilityFlags = parameterSet.generalProfileCompatibilityFlags
        generalConstraintIndicatorFlags = parameterSet.generalConstraintIndicatorFlags
        generalLevelIdc = parameterSet.levelIdc
        minSpatialSegmentationIdc = 0
        parallelismType = 0
        chromaFormat = parameterSet.chromaFormatIdc
        bitDepthLuma = parameterSet.bitDepthLuma
        bitDepthChroma = parameterSet.bitDepthChroma
        averageFrameRate = 0
        constantFrameRate = 0
        numTemporalLayers = parameterSet.maxSubLayers
        temporalIdNested = parameterSet.temporalIdNesting
        self.nalLengthSize = nalLengthSize
        arrays = [
            NALUnitArray(isComplete: arraysAreComplete, nalUnitType: 32, units: videoParameterSets),
            NALUnitArray(isComplete: arraysAreComplete, nalUnitType: 33, units: sequenceParameterSets),
            NALUnitArray(isComplete: arraysAreComplete, nalUnitType: 34, units: pictureParameterSets),
        ]
    }

    /// The record's wire form (ISO/IEC 14496-15 §8.3.3.1), reserved bits set to 1.
    ///
    /// Counts and lengths are truncated to their field widths, so a record built by hand beyond them
    /// does not round-trip.
    public func serialized() -> [UInt8] {
        let constraints = generalConstraintIndicatorFlags
        let compatibility = generalProfileCompatibilityFlags
        var output: [UInt8] = [
            UInt8(truncatingIfNeeded: configurationVersion),
            UInt8(truncatingIfNeeded: generalProfileSpace & 0x03) << 6 | (generalTierFlag ? 0x20 : 0)
                | UInt8(truncatingIfNeeded: generalProfileIdc & 0x1F),
            UInt8(truncatingIfNeeded: compatibility >> 24), UInt8(truncatingIfNeeded: compatibility >> 16),
            UInt8(truncatingIfNeeded: compatibility >> 8), UInt8(truncatingIfNeeded: compatibility),
            UInt8(truncatingIfNeeded: constraints >> 40), UInt8(truncatingIfNeeded: constraints >> 32),
            UInt8(truncatingIfNeeded: constraints >> 24), UInt8(truncatingIfNeeded: constraints >> 16),
            UInt8(truncatingIfNeeded: constraints >> 8), UInt8(truncatingIfNeeded: constraints),
            UInt8(truncatingIfNeeded: generalLevelIdc),
            0xF0 | UInt8(truncatingIfNeeded: minSpatialSegmentationIdc >> 8) & 0x0F,
            UInt8(truncatingIfNeeded: minSpatialSegmentationIdc),
            0xFC | UInt8(truncatingIfNeeded: parallelismType) & 0x03,
            0xFC | UInt8(truncatingIfNeeded: chromaFormat) & 0x03,
            0xF8 | UInt8(truncatingIfNeeded: bitDepthLuma - 8) & 0x07,
            0xF8 | UInt8(truncatingIfNeeded: bitDepthChroma - 8) & 0x07,
            UInt8(truncatingIfNeeded: averageFrameRate >> 8), UInt8(truncatingIfNeeded: averageFrameRate),
            UInt8(truncatingIfNeeded: constantFrameRate & 0x03) << 6
                | UInt8(truncatingIfNeeded: numTemporalLayers & 0x07) << 3 | (temporalIdNested ? 0x04 : 0)
                | UInt8(truncatingIfNeeded: nalLengthSize - 1) & 0x03,
            UInt8(truncatingIfNeeded: arrays.count),
        ]
        for array in arrays {
            output.append((array.isComplete ? 0x80 : 0) | UInt8(truncatingIfNeeded: array.nalUnitType) & 0x3F)
            output.append(UInt8(truncatingIfNeeded: array.units.count >> 8))
            output.append(UInt8(truncatingIfNeeded: array.units.count))
            appendLengthPrefixed(array.units, to: &output)
        }
        return output
    }

    private func units(ofType type: Int) -> [[UInt8]] {
        arrays.filter { $0.nalUnitType == type }.flatMap(\.units)
    }
}

/// The leading fields of an HEVC sequence parameter set, through the bit depths (ITU-T H.265 §7.3.2.2).
///
/// Enough to size the picture and fill an `hvcC` record; later fields are not read.
public struct HEVCSequenceParameterSet: Sendable, Hashable {
    /// `sps_video_parameter_set_id`.
    public var videoParameterSetId: Int
    /// `sps_max_sub_layers_minus1` + 1.
    public var maxSubLayers: Int
    /// `sps_temporal_id_nesting_flag`.
    public var temporalIdNesting: Bool
    /// `general_profile_space` from `profile_tier_level` (§7.3.3).
    public var generalProfileSpace: Int
    /// `general_tier_flag`: false Main tier, true High tier.
    public var generalTierFlag: Bool
    /// `general_profile_idc` (1 Main, 2 Main 10, 3 Main Still Picture, 4 range extensions, …).
    public var profileIdc: Int
    /// `general_profile_compatibility_flag[0…31]`, flag 0 in the most significant bit.
    public var generalProfileCompatibilityFlags: UInt32
    /// The 48 bits from `general_progressive_source_flag` up to `general_level_idc`, as `hvcC` stores them.
    public var generalConstraintIndicatorFlags: UInt64
    /// `general_level_idc`: thirty times the level number (93 is level 3.1).
    public var levelIdc: Int
    /// `sps_seq_parameter_set_id`.
    public var seqParameterSetId: Int
    /// `chroma_format_idc`: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
    public var chromaFormatIdc: Int
    /// `separate_colour_plane_flag`: 4:4:4 coded as three monochrome planes.
    public var separateColourPlane: Bool
    /// `pic_width_in_luma_samples`: the decoded width before the conformance window.
    public var codedWidth: Int
    /// `pic_height_in_luma_samples`: the decoded height before the conformance window.
    public var codedHeight: Int
    /// Display width: the coded width minus the conformance window.
    public var width: Int
    /// Display height: the coded height minus the conformance window.
    public var height: Int
    /// `bit_depth_luma_minus8` + 8.
    public var bitDepthLuma: Int
    /// `bit_depth_chroma_minus8` + 8.
    public var bitDepthChroma: Int

    /// Parses an SPS NAL unit, including its two-byte NAL header and any emulation-prevention bytes.
    public init(parsing nalUnit: some Collection<UInt8>) throws(FLVError) {
        var reader = ParameterSetBitReader(BitReader.rbsp(nalUnit), structure: "HEVC sequence parameter set")
        guard try reader.bits(1, "forbidden_zero_bit") == 0 else {
            throw reader.malformed("forbidden_zero_bit is set")
        }
        let nalUnitType = try reader.bits(6, "nal_unit_type")
        guard nalUnitType == 33 else {
            throw reader.malformed("nal_unit_type is \(nalUnitType), expected 33")
        }
        try reader.skip(9, "nuh_layer_id and nuh_temporal_id_plus1")

        videoParameterSetId = Int(try reader.bits(4, "sps_video_parameter_set_id"))
        let maxSubLayersMinus1 = Int(try reader.bits(3, "sps_max_sub_layers_minus1"))
        guard maxSubLayersMinus1 <= 6 else {
            throw reader.malformed("sps_max_sub_layers_minus1 is 7, a reserved value")
        }
        maxSubLayers = maxSubLayersMinus1 + 1
        temporalIdNesting = try reader.flag("sps_temporal_id_nesting_flag")

        // profile_tier_level(1, sps_max_sub_layers_minus1), §7.3.3.
        generalProfileSpace = Int(try reader.bits(2, "general_profile_space"))
        generalTierFlag = try reader.flag("general_tier_flag")
        profileIdc = Int(try reader.bits(5, "general_profile_idc"))
        generalProfileCompatibilityFlags = try reader.bits(32, "general_profile_compatibility_flag")
        let constraintHigh = try reader.bits(16, "general_constraint_indicator_flags")
        let constraintLow = try reader.bits(32, "general_constraint_indicator_flags")
        generalConstraintIndicatorFlags = UInt64(constraintHigh) << 32 | UInt64(constraintLow)
        levelIdc = Int(try reader.bits(8, "general_level_idc"))
        var subLayerProfilePresent: [Bool] = []
        var subLayerLevelPresent: [Bool] = []
        for _ in 0..<maxSubLayersMinus1 {
            subLayerProfilePresent.append(try reader.flag("sub_layer_profile_present_flag"))
            subLayerLevelPresent.append(try reader.flag("sub_layer_level_present_flag"))
        }
        if maxSubLayersMinus1 > 0 {
            try reader.skip(2 * (8 - maxSubLayersMinus1), "reserved_zero_2bits")
        }
        for index in 0..<maxSubLayersMinus1 {
            if subLayerProfilePresent[index] {
                try reader.skip(88, "sub-layer profile fields")
            }
            if subLayerLevelPresent[index] {
                try reader.skip(8, "sub_layer_level_idc")
            }
        }

        seqParameterSetId = try reader.unsignedExpGolomb("sps_seq_parameter_set_id", maximum: 15)
        chromaFormatIdc = try reader.unsignedExpGolomb("chroma_format_idc", maximum: 3)
        separateColourPlane = false
        if chromaFormatIdc == 3 {
            separateColourPlane = try reader.flag("separate_colour_plane_flag")
        }
        codedWidth = try reader.unsignedExpGolomb("pic_width_in_luma_samples", maximum: 65535)
        codedHeight = try reader.unsignedExpGolomb("pic_height_in_luma_samples", maximum: 65535)
        guard codedWidth > 0, codedHeight > 0 else {
            throw reader.malformed("picture size \(codedWidth)x\(codedHeight) is empty")
        }
        width = codedWidth
        height = codedHeight
        if try reader.flag("conformance_window_flag") {
            let left = try reader.unsignedExpGolomb("conf_win_left_offset")
            let right = try reader.unsignedExpGolomb("conf_win_right_offset")
            let top = try reader.unsignedExpGolomb("conf_win_top_offset")
            let bottom = try reader.unsignedExpGolomb("conf_win_bottom_offset")
            // Offsets count chroma samples: SubWidthC × SubHeightC luma samples each (Table 6-1).
            let chromaArrayType = separateColourPlane ? 0 : chromaFormatIdc
            let subWidth = chromaArrayType == 1 || chromaArrayType == 2 ? 2 : 1
            let subHeight = chromaArrayType == 1 ? 2 : 1
            width -= subWidth * (left + right)
            height -= subHeight * (top + bottom)
            guard width > 0, height > 0 else {
                throw reader.malformed(
                    "conformance window (\(left), \(right), \(top), \(bottom)) leaves nothing of "
                        + "\(codedWidth)x\(codedHeight)"
                )
            }
        }
        bitDepthLuma = try reader.unsignedExpGolomb("bit_depth_luma_minus8", maximum: 8) + 8
        bitDepthChroma = try reader.unsignedExpGolomb("bit_depth_chroma_minus8", maximum: 8) + 8
    }
}

extension VideoCodecConfiguration {
    /// An HEVC configuration from an `hvcC` record (ISO/IEC 14496-15 §8.3.3.1), described by its first SPS.
    public static func hevc(record: [UInt8]) throws(FLVError) -> VideoCodecConfiguration {
        let parsed = try HEVCDecoderConfigurationRecord(parsing: record)
        guard let first = parsed.sequenceParameterSets.first else {
            throw FLVError(.malformedConfiguration, "HEVC decoder configuration record has no sequence parameter set")
        }
        let parameterSet = try HEVCSequenceParameterSet(parsing: first)
        return VideoCodecConfiguration(
            codec: .hevc, extradata: record, width: parameterSet.width, height: parameterSet.height,
            profile: parameterSet.profileIdc, level: parameterSet.levelIdc, nalLengthSize: parsed.nalLengthSize,
            chromaFormat: parameterSet.chromaFormatIdc, bitDepth: parameterSet.bitDepthLuma
        )
    }
}
