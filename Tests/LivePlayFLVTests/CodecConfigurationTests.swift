import LivePlayCore
import LivePlayFLV
import Testing

// Fixtures: real encoder output from the ffmpeg CLI (ffmpeg 6 with libx264 164, libx265 3.5). Parameter sets are
// the Annex B NAL units of `-f h264` / `-f hevc` output; records are the `avcC` / `hvcC` / `esds` payloads of
// the same command with `-f mp4`, cut out with a few lines of python3 at dev time.

// MARK: - H.264 fixtures

/// `ffmpeg -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 1 -c:v libx264 -profile:v baseline -f mp4 out.mp4`
/// (the `avcC` box payload).
private let baselineRecord: [UInt8] = [
    0x01, 0x42, 0xC0, 0x0D, 0xFF, 0xE1, 0x00, 0x18, 0x67, 0x42, 0xC0, 0x0D, 0xD9, 0x01, 0x41, 0xFB,
    0x01, 0x10, 0x00, 0x00, 0x03, 0x00, 0x10, 0x00, 0x00, 0x03, 0x03, 0x20, 0xF1, 0x42, 0xA4, 0x80,
    0x01, 0x00, 0x05, 0x68, 0xCB, 0x83, 0xCB, 0x20,
]
/// The SPS inside ``baselineRecord`` (`pic_order_cnt_type` 2).
private let baselineSPS = Array(baselineRecord[8..<32])

/// `ffmpeg -f lavfi -i testsrc2=size=1918x1078:rate=25 -frames:v 1 -c:v libx264 -profile:v high -f mp4 out.mp4`
/// (the `avcC` box payload): 1920x1088 coded, cropped by 2 and 10 luma samples.
private let highCroppedRecord: [UInt8] = [
    0x01, 0x64, 0x00, 0x28, 0xFF, 0xE1, 0x00, 0x1B, 0x67, 0x64, 0x00, 0x28, 0xAC, 0xD9, 0x40, 0x78,
    0x02, 0x27, 0xA9, 0xB0, 0x11, 0x00, 0x00, 0x03, 0x00, 0x01, 0x00, 0x00, 0x03, 0x00, 0x32, 0x0F,
    0x18, 0x31, 0x96, 0x01, 0x00, 0x06, 0x68, 0xEB, 0xE3, 0xCB, 0x22, 0xC0, 0xFD, 0xF8, 0xF8, 0x00,
]
private let highCroppedSPS = Array(highCroppedRecord[8..<35])
private let highCroppedPPS = Array(highCroppedRecord[38..<44])

/// `ffmpeg -f lavfi -i testsrc2=size=320x240:rate=30 -frames:v 1 -pix_fmt yuv444p -c:v libx264 -profile:v high444
/// -f mp4 out.mp4` (the `avcC` box payload; profile 244, chroma_format_idc 3).
private let high444Record: [UInt8] = [
    0x01, 0xF4, 0x00, 0x0D, 0xFF, 0xE1, 0x00, 0x19, 0x67, 0xF4, 0x00, 0x0D, 0x91, 0x9B, 0x28, 0x28,
    0x3F, 0x60, 0x22, 0x00, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00, 0x78, 0x1E, 0x28, 0x53,
    0x2C, 0x01, 0x00, 0x06, 0x68, 0xEB, 0xE3, 0xC4, 0x48, 0x44, 0xFF, 0xF8, 0xF8, 0x00,
]
private let high444SPS = Array(high444Record[8..<33])

/// `ffmpeg -f lavfi -i testsrc2=size=318x238:rate=50 -frames:v 1 -pix_fmt yuv422p10le -c:v libx264
/// -profile:v high422 -f h264 out.h264` (the SPS NAL unit; 4:2:2, 10-bit, cropped to 318x238).
private let high422TenBitSPS: [UInt8] = [
    0x67, 0x7A, 0x00, 0x15, 0xB6, 0xCD, 0x94, 0x14, 0x1F, 0xEA, 0xF0, 0x11, 0x00, 0x00, 0x03, 0x00,
    0x01, 0x00, 0x00, 0x03, 0x00, 0x64, 0x0F, 0x16, 0x2D, 0x96,
]

/// `ffmpeg -f lavfi -i testsrc2=size=1920x1080:rate=30000/1001 -frames:v 2 -c:v libx264 -profile:v high
/// -x264-params interlaced=1 -f h264 out.h264` (the SPS NAL unit; `frame_mbs_only_flag` 0).
private let interlacedSPS: [UInt8] = [
    0x67, 0x64, 0x00, 0x28, 0xAC, 0xD9, 0x40, 0x78, 0x04, 0x4F, 0xDE, 0x02, 0x20, 0x00, 0x00, 0x7D,
    0x20, 0x00, 0x1D, 0x4C, 0x03, 0xE2, 0xC5, 0xB2, 0xC0,
]

/// x264 puts custom matrices in the PPS, so SPS scaling lists are hand-made: the SPS of
/// `ffmpeg -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 1 -c:v libx264 -profile:v high -f h264 out.h264`
/// re-encoded with `seq_scaling_matrix_present_flag` 1 and lists 0 (explicit, 16 deltas), 2 (default),
/// 3 (ends early on nextScale 0) and 6 (explicit, 64 deltas) present. ffmpeg decodes the stream with it at 320x240.
private let scalingListSPS: [UInt8] = [
    0x67, 0x64, 0x00, 0x0D, 0xAD, 0x84, 0x12, 0x49, 0x24, 0x92, 0x49, 0x24, 0x84, 0x62, 0x0A, 0x15,
    0x21, 0x0A, 0x29, 0x84, 0xD9, 0x0E, 0x22, 0x8A, 0x61, 0x36, 0x43, 0x88, 0xA2, 0x98, 0x4D, 0x90,
    0xE2, 0x28, 0xA6, 0x13, 0x64, 0x38, 0x8A, 0x29, 0x84, 0xD9, 0x0E, 0x22, 0x8A, 0x61, 0x36, 0x43,
    0x88, 0xA2, 0xB6, 0x50, 0x50, 0x7E, 0xC0, 0x44, 0x00, 0x00, 0x03, 0x00, 0x04, 0x00, 0x00, 0x03,
    0x00, 0xC8, 0x3C, 0x50, 0xA6, 0x58,
]

/// ``high444SPS`` re-encoded by hand with all twelve 4:4:4 scaling lists signalled: 0–5 default, 6–10 absent,
/// 11 explicit. A parser that reads only eight lists misreads everything after. ffmpeg decodes it at 320x240.
private let scalingList444SPS: [UInt8] = [
    0x67, 0xF4, 0x00, 0x0D, 0x91, 0xB0, 0x8C, 0x23, 0x08, 0xC2, 0x30, 0x8C, 0x22, 0x0A, 0xFF, 0xFF,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFC, 0xDB, 0x28, 0x28, 0x3F, 0x60, 0x22, 0x00, 0x00, 0x03, 0x00,
    0x02, 0x00, 0x00, 0x03, 0x00, 0x78, 0x1E, 0x28, 0x53, 0x2C,
]

/// ``baselineSPS`` re-encoded by hand with `pic_order_cnt_type` 1: offsets -2 and 1, a cycle of three
/// (2, -300, 70000). ffmpeg's `trace_headers` bitstream filter reads it back as 320x240, 25 fps.
private let pictureOrderCountType1SPS: [UInt8] = [
    0x67, 0x42, 0xC0, 0x0D, 0xD0, 0xA8, 0x84, 0x00, 0x4B, 0x20, 0x00, 0x08, 0x8B, 0x80, 0x80, 0xA0,
    0xFD, 0x80, 0x88, 0x00, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x03, 0x01, 0x90, 0x78, 0xA1, 0x52,
    0x40,
]

// MARK: - HEVC fixtures

/// `ffmpeg -f lavfi -i testsrc2=size=318x238:rate=25 -frames:v 1 -c:v libx265 -x265-params log-level=error:info=0
/// -f mp4 out.mp4` (the `hvcC` box payload): 320x240 coded, conformance window 1 chroma sample right and bottom.
private let hevcRecord: [UInt8] = [
    0x01, 0x01, 0x60, 0x00, 0x00, 0x00, 0x90, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3C, 0xF0, 0x00, 0xFC,
    0xFD, 0xF8, 0xF8, 0x00, 0x00, 0x0F, 0x03, 0x20, 0x00, 0x01, 0x00, 0x18, 0x40, 0x01, 0x0C, 0x01,
    0xFF, 0xFF, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00,
    0x3C, 0x95, 0x98, 0x09, 0x21, 0x00, 0x01, 0x00, 0x2B, 0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00,
    0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00, 0x3C, 0xA0, 0x0A, 0x08, 0x0F, 0x1D,
    0x56, 0x59, 0x59, 0xA4, 0x93, 0x2B, 0xC0, 0x5A, 0x02, 0x00, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00,
    0x03, 0x00, 0x32, 0x10, 0x22, 0x00, 0x01, 0x00, 0x07, 0x44, 0x01, 0xC1, 0x72, 0xB4, 0x62, 0x40,
]
private let hevcVPS = Array(hevcRecord[28..<52])
private let hevcSPS = Array(hevcRecord[57..<100])
private let hevcPPS = Array(hevcRecord[105..<112])

/// As ``hevcRecord`` with `-pix_fmt yuv422p10le`: Rext profile (4), 4:2:2, 10-bit, so the conformance window's
/// bottom offset counts luma rows (SubHeightC 1) while the right offset counts pairs (SubWidthC 2).
private let hevc422TenBitRecord: [UInt8] = [
    0x01, 0x04, 0x08, 0x00, 0x00, 0x00, 0x9D, 0x08, 0x00, 0x00, 0x00, 0x00, 0x3C, 0xF0, 0x00, 0xFC,
    0xFE, 0xFA, 0xFA, 0x00, 0x00, 0x0F, 0x03, 0x20, 0x00, 0x01, 0x00, 0x17, 0x40, 0x01, 0x0C, 0x01,
    0xFF, 0xFF, 0x04, 0x08, 0x00, 0x00, 0x03, 0x00, 0x9D, 0x08, 0x00, 0x00, 0x03, 0x00, 0x00, 0x3C,
    0x95, 0x98, 0x09, 0x21, 0x00, 0x01, 0x00, 0x2A, 0x42, 0x01, 0x01, 0x04, 0x08, 0x00, 0x00, 0x03,
    0x00, 0x9D, 0x08, 0x00, 0x00, 0x03, 0x00, 0x00, 0x3C, 0xB0, 0x0A, 0x08, 0x0F, 0x1D, 0x5B, 0x65,
    0x95, 0x9A, 0x49, 0x32, 0xBC, 0x05, 0xA0, 0x20, 0x00, 0x00, 0x03, 0x00, 0x20, 0x00, 0x00, 0x03,
    0x03, 0x21, 0x22, 0x00, 0x01, 0x00, 0x07, 0x44, 0x01, 0xC1, 0x72, 0xB4, 0x62, 0x40,
]

/// ``hevcSPS`` re-encoded by hand with `sps_max_sub_layers_minus1` 2: sub-layer 0 has profile (Main) and level 30,
/// sub-layer 1 level 60 only. ffmpeg's `trace_headers` reads it back with the same size fields.
private let hevcSubLayerSPS: [UInt8] = [
    0x42, 0x01, 0x05, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03,
    0x00, 0x3C, 0xD0, 0x00, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00,
    0x03, 0x00, 0x1E, 0x3C, 0xA0, 0x0A, 0x08, 0x0F, 0x1D, 0x56, 0x59, 0x59, 0xA4, 0x93, 0x2B, 0xC0,
    0x5A, 0x02, 0x00, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00, 0x32, 0x10,
]

// MARK: - Audio fixtures

/// `ffmpeg -f lavfi -i sine=sample_rate=44100 -ac 2 -c:a aac -f mp4 out.mp4` (the DecoderSpecificInfo in `esds`):
/// AAC-LC, 44.1 kHz, stereo, then sync extension 0x2B7 saying "no SBR".
private let lcStereoConfig: [UInt8] = [0x12, 0x10, 0x56, 0xE5, 0x00]
/// `ffmpeg -f lavfi -i sine=sample_rate=48000 -ac 1 -c:a aac -f mp4 out.mp4`: AAC-LC, 48 kHz, mono.
private let lcMonoConfig: [UInt8] = [0x11, 0x88, 0x56, 0xE5, 0x00]
/// Hand-built, ISO/IEC 14496-3 §1.6.2.1 explicit hierarchical signalling: object type 5, core 22.05 kHz (index 7),
/// stereo, extension index 4 (44.1 kHz), core object type 2. ffmpeg's encoder does not write HE-AAC.
private let heAACConfig: [UInt8] = [0x2B, 0x92, 0x08, 0x00]
/// Hand-built as ``heAACConfig`` with object type 29 (PS), core 24 kHz (index 6), mono, extension index 3 (48 kHz).
private let heAACv2Config: [UInt8] = [0xEB, 0x09, 0x88, 0x00]
/// Hand-built backward-compatible signalling (§1.6.2.1, `syncExtensionType` 0x2B7): LC at 22.05 kHz stereo,
/// then extension object type 5, `sbrPresentFlag` 1, extension index 4 (44.1 kHz).
private let implicitSBRConfig: [UInt8] = [0x13, 0x90, 0x56, 0xE5, 0xA0]
/// As ``implicitSBRConfig`` at 24 kHz mono, extension index 3 (48 kHz), then `syncExtensionType` 0x548 with
/// `psPresentFlag` 1.
private let implicitPSConfig: [UInt8] = [0x13, 0x08, 0x56, 0xE5, 0x9D, 0x48, 0x80]
/// Hand-built: object type 42 through the escape (31, then 10), explicit 24-bit 44100 Hz (index 15), stereo.
private let escapedConfig: [UInt8] = [0xF9, 0x5E, 0x01, 0x58, 0x88, 0x40]

// MARK: - H.264

@Suite("H.264 configuration")
struct AVCConfigurationTests {
    @Test("baseline 320x240 record and SPS")
    func baseline() throws {
        let record = try AVCDecoderConfigurationRecord(parsing: baselineRecord)
        #expect(record.configurationVersion == 1)
        #expect(record.profileIndication == 66)
        #expect(record.profileCompatibility == 0xC0)
        #expect(record.levelIndication == 13)
        #expect(record.nalLengthSize == 4)
        #expect(record.sequenceParameterSets == [baselineSPS])
        #expect(record.pictureParameterSets == [[0x68, 0xCB, 0x83, 0xCB, 0x20]])
        #expect(record.formatExtension == nil)

        let parameterSet = try H264SequenceParameterSet(parsing: baselineSPS)
        #expect(parameterSet.profileIdc == 66)
        #expect(parameterSet.constraintSetFlags == 0xC0)
        #expect(parameterSet.levelIdc == 13)
        #expect(parameterSet.chromaFormatIdc == 1)
        #expect(parameterSet.bitDepthLuma == 8)
        #expect(parameterSet.picOrderCntType == 2)
        #expect(parameterSet.frameMbsOnly)
        #expect(parameterSet.width == 320)
        #expect(parameterSet.height == 240)
        #expect(parameterSet.frameRate == 25)

        let configuration = try VideoCodecConfiguration.avc(record: baselineRecord)
        #expect(
            configuration
                == VideoCodecConfiguration(
                    codec: .h264, extradata: baselineRecord, width: 320, height: 240, profile: 66, level: 13,
                    nalLengthSize: 4, chromaFormat: 1, bitDepth: 8
                )
        )
    }

    @Test("high profile 1918x1078 applies the cropping window")
    func highProfileCropping() throws {
        let record = try AVCDecoderConfigurationRecord(parsing: highCroppedRecord)
        #expect(record.profileIndication == 100)
        #expect(record.levelIndication == 40)
        #expect(
            record.formatExtension
                == .init(chromaFormat: 1, bitDepthLuma: 8, bitDepthChroma: 8, sequenceParameterSetExtensions: [])
        )

        let parameterSet = try H264SequenceParameterSet(parsing: highCroppedSPS)
        #expect(parameterSet.codedWidth == 1920)
        #expect(parameterSet.codedHeight == 1088)
        #expect(parameterSet.width == 1918)
        #expect(parameterSet.height == 1078)
        #expect(parameterSet.picOrderCntType == 0)
        #expect(parameterSet.frameRate == 25)

        let configuration = try VideoCodecConfiguration.avc(record: highCroppedRecord)
        #expect(
            configuration
                == VideoCodecConfiguration(
                    codec: .h264, extradata: highCroppedRecord, width: 1918, height: 1078, profile: 100, level: 40,
                    nalLengthSize: 4, chromaFormat: 1, bitDepth: 8
                )
        )
    }

    @Test("high 4:4:4 predictive")
    func high444() throws {
        let parameterSet = try H264SequenceParameterSet(parsing: high444SPS)
        #expect(parameterSet.profileIdc == 244)
        #expect(parameterSet.chromaFormatIdc == 3)
        #expect(!parameterSet.separateColourPlane)
        #expect(parameterSet.width == 320)
        #expect(parameterSet.height == 240)
        #expect(parameterSet.frameRate == 30)

        let configuration = try VideoCodecConfiguration.avc(record: high444Record)
        #expect(configuration.chromaFormat == 3)
        #expect(configuration.profile == 244)
        let record = try AVCDecoderConfigurationRecord(parsing: high444Record)
        #expect(record.formatExtension?.chromaFormat == 3)
    }

    @Test("high 4:2:2 10-bit crops in 4:2:2 units")
    func high422TenBit() throws {
        let parameterSet = try H264SequenceParameterSet(parsing: high422TenBitSPS)
        #expect(parameterSet.profileIdc == 122)
        #expect(parameterSet.chromaFormatIdc == 2)
        #expect(parameterSet.bitDepthLuma == 10)
        #expect(parameterSet.bitDepthChroma == 10)
        #expect(parameterSet.codedWidth == 320)
        #expect(parameterSet.codedHeight == 240)
        #expect(parameterSet.width == 318)
        #expect(parameterSet.height == 238)
        #expect(parameterSet.frameRate == 50)
    }

    @Test("interlaced 1080i doubles map units and crop rows")
    func interlaced() throws {
        let parameterSet = try H264SequenceParameterSet(parsing: interlacedSPS)
        #expect(!parameterSet.frameMbsOnly)
        #expect(parameterSet.codedWidth == 1920)
        #expect(parameterSet.codedHeight == 1088)
        #expect(parameterSet.width == 1920)
        #expect(parameterSet.height == 1080)
        let frameRate = try #require(parameterSet.frameRate)
        #expect(abs(frameRate - 30000.0 / 1001.0) < 1e-9)
    }

    @Test("scaling lists are skipped, for 8 and for 12 lists")
    func scalingLists() throws {
        let parameterSet = try H264SequenceParameterSet(parsing: scalingListSPS)
        #expect(parameterSet.profileIdc == 100)
        #expect(parameterSet.width == 320)
        #expect(parameterSet.height == 240)
        #expect(parameterSet.frameRate == 25)

        let fourFourFour = try H264SequenceParameterSet(parsing: scalingList444SPS)
        #expect(fourFourFour.chromaFormatIdc == 3)
        #expect(fourFourFour.width == 320)
        #expect(fourFourFour.height == 240)
        #expect(fourFourFour.frameRate == 30)
    }

    @Test("pic_order_cnt_type 1 with an offset cycle")
    func pictureOrderCountType1() throws {
        let parameterSet = try H264SequenceParameterSet(parsing: pictureOrderCountType1SPS)
        #expect(parameterSet.picOrderCntType == 1)
        #expect(parameterSet.width == 320)
        #expect(parameterSet.height == 240)
        #expect(parameterSet.frameRate == 25)
    }

    @Test("records serialize back to the bytes ffmpeg wrote")
    func recordRoundTrip() throws {
        for bytes in [baselineRecord, highCroppedRecord, high444Record] {
            let record = try AVCDecoderConfigurationRecord(parsing: bytes)
            #expect(record.serialized() == bytes)
            #expect(try AVCDecoderConfigurationRecord(parsing: record.serialized()) == record)
        }
    }

    @Test("a record built from parameter sets matches ffmpeg's")
    func recordFromParameterSets() throws {
        let built = try AVCDecoderConfigurationRecord(
            sequenceParameterSets: [highCroppedSPS], pictureParameterSets: [highCroppedPPS]
        )
        #expect(built.serialized() == highCroppedRecord)

        let baseline = try AVCDecoderConfigurationRecord(
            sequenceParameterSets: [baselineSPS], pictureParameterSets: [[0x68, 0xCB, 0x83, 0xCB, 0x20]]
        )
        #expect(baseline.serialized() == baselineRecord)

        let twoByteLengths = try AVCDecoderConfigurationRecord(
            sequenceParameterSets: [high444SPS], pictureParameterSets: [[0x68, 0xEB, 0xE3, 0xC4, 0x48, 0x44]],
            nalLengthSize: 2
        )
        let reparsed = try AVCDecoderConfigurationRecord(parsing: twoByteLengths.serialized())
        #expect(reparsed == twoByteLengths)
        #expect(reparsed.nalLengthSize == 2)
        #expect(reparsed.formatExtension?.chromaFormat == 3)
    }
}

// MARK: - HEVC

@Suite("HEVC configuration")
struct HEVCConfigurationTests {
    @Test("x265 318x238 record and SPS")
    func record() throws {
        let record = try HEVCDecoderConfigurationRecord(parsing: hevcRecord)
        #expect(record.configurationVersion == 1)
        #expect(record.generalProfileSpace == 0)
        #expect(!record.generalTierFlag)
        #expect(record.generalProfileIdc == 1)
        #expect(record.generalProfileCompatibilityFlags == 0x6000_0000)
        #expect(record.generalConstraintIndicatorFlags == 0x9000_0000_0000)
        #expect(record.generalLevelIdc == 60)
        #expect(record.chromaFormat == 1)
        #expect(record.bitDepthLuma == 8)
        #expect(record.bitDepthChroma == 8)
        #expect(record.numTemporalLayers == 1)
        #expect(record.temporalIdNested)
        #expect(record.nalLengthSize == 4)
        #expect(record.arrays.map(\.nalUnitType) == [32, 33, 34])
        #expect(record.arrays.allSatisfy { !$0.isComplete })
        #expect(record.videoParameterSets == [hevcVPS])
        #expect(record.sequenceParameterSets == [hevcSPS])
        #expect(record.pictureParameterSets == [hevcPPS])

        let parameterSet = try HEVCSequenceParameterSet(parsing: hevcSPS)
        #expect(parameterSet.maxSubLayers == 1)
        #expect(parameterSet.profileIdc == 1)
        #expect(parameterSet.levelIdc == 60)
        #expect(parameterSet.chromaFormatIdc == 1)
        #expect(parameterSet.codedWidth == 320)
        #expect(parameterSet.codedHeight == 240)
        #expect(parameterSet.width == 318)
        #expect(parameterSet.height == 238)
        #expect(parameterSet.bitDepthLuma == 8)

        let configuration = try VideoCodecConfiguration.hevc(record: hevcRecord)
        #expect(
            configuration
                == VideoCodecConfiguration(
                    codec: .hevc, extradata: hevcRecord, width: 318, height: 238, profile: 1, level: 60,
                    nalLengthSize: 4, chromaFormat: 1, bitDepth: 8
                )
        )
    }

    @Test("4:2:2 10-bit range extensions record")
    func rangeExtensions() throws {
        let configuration = try VideoCodecConfiguration.hevc(record: hevc422TenBitRecord)
        #expect(configuration.profile == 4)
        #expect(configuration.chromaFormat == 2)
        #expect(configuration.bitDepth == 10)
        #expect(configuration.width == 318)
        #expect(configuration.height == 238)
        let record = try HEVCDecoderConfigurationRecord(parsing: hevc422TenBitRecord)
        #expect(record.generalConstraintIndicatorFlags == 0x9D08_0000_0000)
        #expect(record.bitDepthChroma == 10)
    }

    @Test("sub-layer profile and level fields are skipped")
    func subLayers() throws {
        let parameterSet = try HEVCSequenceParameterSet(parsing: hevcSubLayerSPS)
        #expect(parameterSet.maxSubLayers == 3)
        #expect(parameterSet.profileIdc == 1)
        #expect(parameterSet.levelIdc == 60)
        #expect(parameterSet.width == 318)
        #expect(parameterSet.height == 238)
        #expect(parameterSet.bitDepthChroma == 8)
    }

    @Test("records serialize back to the bytes ffmpeg wrote")
    func roundTrip() throws {
        for bytes in [hevcRecord, hevc422TenBitRecord] {
            let record = try HEVCDecoderConfigurationRecord(parsing: bytes)
            #expect(record.serialized() == bytes)
            #expect(try HEVCDecoderConfigurationRecord(parsing: record.serialized()) == record)
        }
    }

    @Test("a record built from VPS, SPS and PPS matches ffmpeg's")
    func recordFromParameterSets() throws {
        let built = try HEVCDecoderConfigurationRecord(
            videoParameterSets: [hevcVPS], sequenceParameterSets: [hevcSPS], pictureParameterSets: [hevcPPS]
        )
        #expect(built.serialized() == hevcRecord)

        let parsed = try HEVCDecoderConfigurationRecord(parsing: hevc422TenBitRecord)
        let rebuilt = try HEVCDecoderConfigurationRecord(
            videoParameterSets: parsed.videoParameterSets, sequenceParameterSets: parsed.sequenceParameterSets,
            pictureParameterSets: parsed.pictureParameterSets
        )
        #expect(rebuilt == parsed)

        let complete = try HEVCDecoderConfigurationRecord(
            videoParameterSets: [hevcVPS], sequenceParameterSets: [hevcSPS], pictureParameterSets: [hevcPPS],
            nalLengthSize: 2, arraysAreComplete: true
        )
        let reparsed = try HEVCDecoderConfigurationRecord(parsing: complete.serialized())
        #expect(reparsed == complete)
        #expect(reparsed.nalLengthSize == 2)
        #expect(reparsed.arrays.allSatisfy { $0.isComplete })
    }
}

// MARK: - Audio

@Suite("Audio configuration")
struct AudioConfigurationTests {
    @Test("AAC-LC from ffmpeg, with the no-SBR sync extension")
    func lowComplexity() throws {
        let stereo = try AudioSpecificConfig(parsing: lcStereoConfig)
        #expect(stereo.audioObjectType == 2)
        #expect(stereo.underlyingObjectType == 2)
        #expect(stereo.samplingFrequencyIndex == 4)
        #expect(stereo.samplingFrequency == 44100)
        #expect(stereo.channelConfiguration == 2)
        #expect(!stereo.sbrPresent)
        #expect(!stereo.psPresent)
        #expect(stereo.sampleRate == 44100)
        #expect(stereo.channels == 2)
        #expect(
            try AudioCodecConfiguration.aac(audioSpecificConfig: lcStereoConfig)
                == AudioCodecConfiguration(
                    codec: .aac, extradata: lcStereoConfig, sampleRate: 44100, channels: 2, objectType: 2
                )
        )

        let mono = try AudioSpecificConfig(parsing: lcMonoConfig)
        #expect(mono.sampleRate == 48000)
        #expect(mono.channels == 1)
        // The two-byte form without any extension is just as valid.
        #expect(try AudioSpecificConfig(parsing: lcStereoConfig.prefix(2)).sampleRate == 44100)
    }

    @Test("explicit HE-AAC and HE-AACv2 report the SBR rate")
    func explicitSBR() throws {
        let heAAC = try AudioSpecificConfig(parsing: heAACConfig)
        #expect(heAAC.audioObjectType == 5)
        #expect(heAAC.underlyingObjectType == 2)
        #expect(heAAC.samplingFrequency == 22050)
        #expect(heAAC.extensionSamplingFrequencyIndex == 4)
        #expect(heAAC.extensionSamplingFrequency == 44100)
        #expect(heAAC.sbrPresent)
        #expect(heAAC.sampleRate == 44100)
        #expect(heAAC.channels == 2)
        #expect(try AudioCodecConfiguration.aac(audioSpecificConfig: heAACConfig).objectType == 5)

        let heAACv2 = try AudioSpecificConfig(parsing: heAACv2Config)
        #expect(heAACv2.audioObjectType == 29)
        #expect(heAACv2.underlyingObjectType == 2)
        #expect(heAACv2.psPresent)
        #expect(heAACv2.samplingFrequency == 24000)
        #expect(heAACv2.sampleRate == 48000)
        #expect(heAACv2.channelConfiguration == 1)
        #expect(heAACv2.channels == 2)
        let configuration = try AudioCodecConfiguration.aac(audioSpecificConfig: heAACv2Config)
        #expect(configuration.objectType == 29)
        #expect(configuration.sampleRate == 48000)
        #expect(configuration.channels == 2)
    }

    @Test("backward-compatible SBR and PS signalling")
    func implicitSBR() throws {
        let sbr = try AudioSpecificConfig(parsing: implicitSBRConfig)
        #expect(sbr.audioObjectType == 2)
        #expect(sbr.sbrPresent)
        #expect(!sbr.psPresent)
        #expect(sbr.samplingFrequency == 22050)
        #expect(sbr.sampleRate == 44100)
        #expect(sbr.profileObjectType == 5)

        let parametricStereo = try AudioSpecificConfig(parsing: implicitPSConfig)
        #expect(parametricStereo.psPresent)
        #expect(parametricStereo.sampleRate == 48000)
        #expect(parametricStereo.channels == 2)
        #expect(parametricStereo.profileObjectType == 29)
    }

    @Test("escaped object type and explicit sampling frequency")
    func escapes() throws {
        let config = try AudioSpecificConfig(parsing: escapedConfig)
        #expect(config.audioObjectType == 42)
        #expect(config.samplingFrequencyIndex == 15)
        #expect(config.samplingFrequency == 44100)
        #expect(config.channels == 2)
    }

    @Test("channel configurations", arguments: [(0, 0), (1, 1), (6, 6), (7, 8), (11, 7), (12, 8), (13, 24)])
    func channelConfigurations(configuration: Int, channels: Int) throws {
        // AAC-LC (2), 48 kHz (index 3), then the configuration under test and an empty GASpecificConfig.
        let bytes: [UInt8] = [0x11, 0x80 | UInt8(configuration) << 3]
        let config = try AudioSpecificConfig(parsing: bytes)
        #expect(config.channelConfiguration == configuration)
        #expect(config.channels == channels)
    }

    @Test("reserved values are rejected")
    func reservedValues() {
        // Object type 0, sampling frequency indices 13 and 14, channel configurations 8 and 15, explicit 0 Hz.
        let invalid: [[UInt8]] = [
            [0x00, 0x10], [0x16, 0x90], [0x17, 0x10], [0x11, 0xC0], [0x11, 0xF8],
            [0x17, 0x80, 0x00, 0x00, 0x10],
        ]
        for bytes in invalid {
            expectMalformed { () throws(FLVError) in _ = try AudioSpecificConfig(parsing: bytes) }
        }
        // SBR whose core is SBR again.
        expectMalformed { () throws(FLVError) in _ = try AudioSpecificConfig(parsing: [0x2B, 0x92, 0x14, 0x00]) }
    }

    @Test(
        "MPEG audio frame headers from ffmpeg",
        arguments: [
            // -ar 44100 -ac 2 -c:a libmp3lame -b:a 128k -write_xing 0 -id3v2_version 0 -f mp3
            ([0xFF, 0xFB, 0x90, 0x64], MPEGAudioFrameHeader.Version.mpeg1, 3, 128_000, 44100, 2, 1152, 417),
            // -ar 22050 -ac 1 -c:a libmp3lame -b:a 32k (MPEG-2)
            ([0xFF, 0xF3, 0x40, 0xC4], .mpeg2, 3, 32000, 22050, 1, 576, 104),
            // -ar 8000 -ac 1 -c:a libmp3lame -b:a 8k (MPEG-2.5)
            ([0xFF, 0xE3, 0x18, 0xC4], .mpeg25, 3, 8000, 8000, 1, 576, 72),
            // -ar 48000 -ac 2 -c:a mp2 -b:a 192k -f mp2
            ([0xFF, 0xFD, 0xA4, 0x04], .mpeg1, 2, 192_000, 48000, 2, 1152, 576),
            // Hand-built Layer I, 44.1 kHz, 32 kbit/s, padded: (12 × 32000 / 44100 + 1) × 4 = 36 bytes.
            ([0xFF, 0xFF, 0x12, 0xC0], .mpeg1, 1, 32000, 44100, 1, 384, 36),
        ] as [([UInt8], MPEGAudioFrameHeader.Version, Int, Int, Int, Int, Int, Int)]
    )
    func mpegAudioHeaders(
        bytes: [UInt8], version: MPEGAudioFrameHeader.Version, layer: Int, bitrate: Int, sampleRate: Int,
        channels: Int, samplesPerFrame: Int, frameLength: Int
    ) throws {
        let header = try #require(MPEGAudioFrameHeader(parsing: bytes + [0x00, 0x11]))
        #expect(header.version == version)
        #expect(header.layer == layer)
        #expect(header.bitrate == bitrate)
        #expect(header.sampleRate == sampleRate)
        #expect(header.channels == channels)
        #expect(header.samplesPerFrame == samplesPerFrame)
        #expect(header.frameLength == frameLength)
        #expect(
            AudioCodecConfiguration.mp3(header: header)
                == AudioCodecConfiguration(
                    codec: .mp3, extradata: [], sampleRate: sampleRate, channels: channels, objectType: layer
                )
        )
    }

    @Test("invalid MPEG audio headers are nil")
    func invalidMPEGAudioHeaders() {
        let invalid: [[UInt8]] = [
            [], [0xFF, 0xFB, 0x90],  // too short
            [0xFE, 0xFB, 0x90, 0x64], [0xFF, 0xDB, 0x90, 0x64],  // bad sync
            [0xFF, 0xEB, 0x90, 0x64],  // reserved version
            [0xFF, 0xF9, 0x90, 0x64],  // reserved layer
            [0xFF, 0xFB, 0x00, 0x64],  // free format
            [0xFF, 0xFB, 0xF0, 0x64],  // bitrate index 15
            [0xFF, 0xFB, 0x9C, 0x64],  // reserved sampling frequency
        ]
        for bytes in invalid {
            #expect(MPEGAudioFrameHeader(parsing: bytes) == nil, "\(bytes)")
        }
    }
}

// MARK: - Malformed input

@Suite("Malformed codec configurations")
struct MalformedConfigurationTests {
    @Test("every truncation of a record throws")
    func truncatedRecords() {
        for count in 0..<baselineRecord.count {
            expectMalformed { () throws(FLVError) in
                _ = try AVCDecoderConfigurationRecord(parsing: baselineRecord.prefix(count))
            }
        }
        // A high-profile record may legitimately end before its chroma/bit-depth extension (4 bytes).
        for count in 0..<highCroppedRecord.count where count != highCroppedRecord.count - 4 {
            expectMalformed { () throws(FLVError) in
                _ = try AVCDecoderConfigurationRecord(parsing: highCroppedRecord.prefix(count))
            }
        }
        for count in 0..<hevcRecord.count {
            expectMalformed { () throws(FLVError) in
                _ = try HEVCDecoderConfigurationRecord(parsing: hevcRecord.prefix(count))
            }
            expectMalformed { () throws(FLVError) in
                _ = try VideoCodecConfiguration.hevc(record: Array(hevcRecord.prefix(count)))
            }
        }
        for config in [heAACConfig, heAACv2Config, escapedConfig] {
            for count in 0..<3 {
                expectMalformed { () throws(FLVError) in _ = try AudioSpecificConfig(parsing: config.prefix(count)) }
            }
        }
    }

    @Test("every truncation of a parameter set throws or agrees on the picture size")
    func truncatedParameterSets() throws {
        let sets: [[UInt8]] = [
            baselineSPS, highCroppedSPS, high444SPS, high422TenBitSPS, interlacedSPS, scalingListSPS,
            scalingList444SPS, pictureOrderCountType1SPS,
        ]
        var sawSizeWithoutFrameRate = false
        for set in sets {
            let full = try H264SequenceParameterSet(parsing: set)
            for count in 0..<set.count {
                let result = Result { () throws(FLVError) in try H264SequenceParameterSet(parsing: set.prefix(count)) }
                switch result {
                case .success(let partial):
                    // Only the VUI may be cut; it costs the frame rate and nothing else.
                    #expect(partial.width == full.width && partial.height == full.height)
                    #expect(partial.frameRate == nil || partial.frameRate == full.frameRate)
                    sawSizeWithoutFrameRate = sawSizeWithoutFrameRate || partial.frameRate == nil
                case .failure(let error):
                    #expect(error.code == .malformedConfiguration)
                }
            }
        }
        #expect(sawSizeWithoutFrameRate)

        for set in [hevcSPS, hevcSubLayerSPS] {
            let full = try HEVCSequenceParameterSet(parsing: set)
            for count in 0..<set.count {
                let result = Result { () throws(FLVError) in try HEVCSequenceParameterSet(parsing: set.prefix(count)) }
                switch result {
                case .success(let partial):
                    #expect(partial == full)
                case .failure(let error):
                    #expect(error.code == .malformedConfiguration)
                }
            }
        }
    }

    @Test("NAL length size 3 is rejected")
    func nalLengthSizeThree() {
        var avc = baselineRecord
        avc[4] = 0xFE
        expectMalformed { () throws(FLVError) in _ = try AVCDecoderConfigurationRecord(parsing: avc) }
        var hevc = hevcRecord
        hevc[21] = 0x0E
        expectMalformed { () throws(FLVError) in _ = try HEVCDecoderConfigurationRecord(parsing: hevc) }
        expectMalformed { () throws(FLVError) in
            _ = try AVCDecoderConfigurationRecord(
                sequenceParameterSets: [baselineSPS], pictureParameterSets: [], nalLengthSize: 3
            )
        }
        expectMalformed { () throws(FLVError) in
            _ = try HEVCDecoderConfigurationRecord(
                videoParameterSets: [hevcVPS], sequenceParameterSets: [hevcSPS], pictureParameterSets: [hevcPPS],
                nalLengthSize: 3
            )
        }
    }

    @Test("counts and lengths that claim more than the bytes hold")
    func overclaimingCounts() {
        var manySPS = baselineRecord
        manySPS[5] = 0xFF  // 31 SPS
        var manyPPS = baselineRecord
        manyPPS[32] = 0xFF  // 255 PPS
        var longSPS = baselineRecord
        longSPS[6...7] = [0xFF, 0xFF]  // one SPS of 65535 bytes
        var manyArrays = hevcRecord
        manyArrays[22] = 0xFF
        var manyUnits = hevcRecord
        manyUnits[24...25] = [0xFF, 0xFF]
        var longUnit = hevcRecord
        longUnit[103...104] = [0x7F, 0xFF]  // the PPS claims 32767 bytes
        for bytes in [manySPS, manyPPS, longSPS] {
            expectMalformed { () throws(FLVError) in _ = try AVCDecoderConfigurationRecord(parsing: bytes) }
        }
        for bytes in [manyArrays, manyUnits, longUnit] {
            expectMalformed { () throws(FLVError) in _ = try HEVCDecoderConfigurationRecord(parsing: bytes) }
        }
        // A record without any SPS parses, but cannot describe a picture.
        expectMalformed { () throws(FLVError) in
            _ = try VideoCodecConfiguration.avc(record: [0x01, 0x42, 0xC0, 0x0D, 0xFF, 0xE0, 0x00])
        }
        expectMalformed { () throws(FLVError) in
            _ = try AVCDecoderConfigurationRecord(sequenceParameterSets: [], pictureParameterSets: [])
        }
        expectMalformed { () throws(FLVError) in
            _ = try HEVCDecoderConfigurationRecord(
                videoParameterSets: [], sequenceParameterSets: [hevcSPS], pictureParameterSets: [hevcPPS]
            )
        }
    }

    @Test("absurd Exp-Golomb values are rejected")
    func absurdExpGolomb() throws {
        func sps(_ build: (inout TestBitWriter) -> Void) -> [UInt8] {
            var writer = TestBitWriter()
            writer.write(0x67, bits: 8)  // NAL header
            writer.write(66, bits: 8)  // profile_idc
            writer.write(0, bits: 8)
            writer.write(30, bits: 8)  // level_idc
            build(&writer)
            return writer.nalUnit()
        }
        func baseline(width: UInt32 = 19, height: UInt32 = 14, cycle: UInt32? = nil, crop: [UInt32]? = nil)
            -> (inout TestBitWriter) -> Void
        {
            { writer in
                writer.unsignedExpGolomb(0)  // seq_parameter_set_id
                writer.unsignedExpGolomb(0)  // log2_max_frame_num_minus4
                if let cycle {
                    writer.unsignedExpGolomb(1)
                    writer.write(0, bits: 1)
                    writer.unsignedExpGolomb(0)
                    writer.unsignedExpGolomb(0)
                    writer.unsignedExpGolomb(cycle)
                } else {
                    writer.unsignedExpGolomb(2)
                }
                writer.unsignedExpGolomb(1)  // max_num_ref_frames
                writer.write(0, bits: 1)
                writer.unsignedExpGolomb(width)
                writer.unsignedExpGolomb(height)
                writer.write(1, bits: 1)  // frame_mbs_only_flag
                writer.write(1, bits: 1)  // direct_8x8_inference_flag
                if let crop {
                    writer.write(1, bits: 1)
                    for offset in crop { writer.unsignedExpGolomb(offset) }
                } else {
                    writer.write(0, bits: 1)
                }
                writer.write(0, bits: 1)  // vui_parameters_present_flag
            }
        }

        // The builder itself makes a valid 320x240 SPS.
        #expect(try H264SequenceParameterSet(parsing: sps(baseline())).width == 320)
        #expect(try H264SequenceParameterSet(parsing: sps(baseline(crop: [0, 2, 0, 4]))).height == 232)

        let absurd: [[UInt8]] = [
            sps { $0.write(0, bits: 40) },  // more than 31 leading zeros
            sps { $0.unsignedExpGolomb(32) },  // seq_parameter_set_id above 31
            sps { $0.unsignedExpGolomb(0xFFFF_FFFE) },  // the largest 32-bit code
            sps(baseline(width: 1 << 20)),  // a million macroblocks wide
            sps(baseline(height: 0xFFFF_FFFE)),
            sps(baseline(cycle: 0xFFFF_FF00)),  // a huge offset_for_ref_frame loop
            sps(baseline(crop: [0, 160, 0, 0])),  // cropping the whole width away
            sps(baseline(crop: [0, 0, 0xFFFF_FFFE, 0xFFFF_FFFE])),
        ]
        for bytes in absurd {
            expectMalformed { () throws(FLVError) in _ = try H264SequenceParameterSet(parsing: bytes) }
        }

        // A PPS is not an SPS, for either codec; nor is an H.264 SPS an HEVC one.
        expectMalformed { () throws(FLVError) in _ = try H264SequenceParameterSet(parsing: highCroppedPPS) }
        expectMalformed { () throws(FLVError) in _ = try HEVCSequenceParameterSet(parsing: hevcPPS) }
        expectMalformed { () throws(FLVError) in _ = try HEVCSequenceParameterSet(parsing: baselineSPS) }
        // sps_max_sub_layers_minus1 7 is reserved.
        var reservedSubLayers = hevcSPS
        reservedSubLayers[2] = 0x0F
        expectMalformed { () throws(FLVError) in _ = try HEVCSequenceParameterSet(parsing: reservedSubLayers) }
    }

    @Test("random bytes never trap")
    func randomBytes() {
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<2000 {
            let count = Int(generator.next() % 64)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = try? H264SequenceParameterSet(parsing: [0x67] + bytes)
            _ = try? HEVCSequenceParameterSet(parsing: [0x42, 0x01] + bytes)
            _ = try? AudioSpecificConfig(parsing: bytes)
            _ = MPEGAudioFrameHeader(parsing: [0xFF] + bytes)
            _ = try? AVCDecoderConfigurationRecord(parsing: [0x01] + bytes)
            _ = try? HEVCDecoderConfigurationRecord(parsing: [0x01] + bytes)
            // Mutate a real record in one byte, too.
            bytes = hevcRecord
            bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            _ = try? VideoCodecConfiguration.hevc(record: bytes)
            bytes = highCroppedRecord
            bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            _ = try? VideoCodecConfiguration.avc(record: bytes)
        }
    }
}

// MARK: - Helpers

/// Expects `body` to throw an `FLVError` with code `.malformedConfiguration`.
private func expectMalformed(
    _ body: () throws(FLVError) -> Void, sourceLocation: SourceLocation = #_sourceLocation
) {
    let error = #expect(throws: FLVError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.code == .malformedConfiguration, sourceLocation: sourceLocation)
}

/// Writes H.264 syntax elements most-significant bit first and frames them as a NAL unit.
private struct TestBitWriter {
    private var bits: [Bool] = []

    mutating func write(_ value: UInt64, bits count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) {
            bits.append(value >> UInt64(shift) & 1 == 1)
        }
    }

    mutating func unsignedExpGolomb(_ value: UInt32) {
        let coded = UInt64(value) + 1
        let length = 64 - coded.leadingZeroBitCount
        write(0, bits: length - 1)
        write(coded, bits: length)
    }

    /// The bits with RBSP trailing bits and emulation-prevention bytes (ITU-T H.264 §7.4.1).
    func nalUnit() -> [UInt8] {
        var padded = bits + [true]
        while padded.count % 8 != 0 { padded.append(false) }
        var output: [UInt8] = []
        var zeros = 0
        for start in stride(from: 0, to: padded.count, by: 8) {
            let byte = padded[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
            if zeros >= 2 && byte <= 3 {
                output.append(3)
                zeros = 0
            }
            output.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return output
    }
}

/// A small deterministic generator, so the random-bytes test is reproducible.
private struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
