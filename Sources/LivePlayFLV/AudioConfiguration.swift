public import LivePlayCore

/// The MPEG-4 Audio decoder configuration that FLV carries as the AAC sequence header (ISO/IEC 14496-3 §1.6.2.1).
///
/// Reads the object type, sampling frequency and channel configuration, explicit SBR / PS signalling
/// (object types 5 and 29, §1.6.5.2), and the backward-compatible `syncExtensionType` 0x2B7 signalling
/// that follows a `GASpecificConfig` when it can be reached without a program config element.
public struct AudioSpecificConfig: Sendable, Hashable {
    /// The `audioObjectType` signalled first: 2 for AAC-LC, 5 for explicit HE-AAC (SBR), 29 for HE-AACv2 (PS).
    public var audioObjectType: Int
    /// The object type of the core decoder: after a 5 or 29 the one that follows, otherwise `audioObjectType`.
    public var underlyingObjectType: Int
    /// `samplingFrequencyIndex`; 15 when the frequency is written out.
    public var samplingFrequencyIndex: Int
    /// The core sampling frequency in Hz (from Table 1.18, or the 24-bit explicit value).
    public var samplingFrequency: Int
    /// `channelConfiguration`: 0 means the layout is in a program config element.
    public var channelConfiguration: Int
    /// Spectral band replication is signalled, explicitly or by a sync extension.
    public var sbrPresent: Bool
    /// Parametric stereo is signalled, explicitly or by a sync extension.
    public var psPresent: Bool
    /// `extensionSamplingFrequencyIndex`, when SBR is signalled.
    public var extensionSamplingFrequencyIndex: Int?
    /// The SBR output sampling frequency in Hz, when SBR is signalled.
    public var extensionSamplingFrequency: Int?

    /// The output sampling rate: the SBR extension rate when there is one, else the core rate.
    public var sampleRate: Int { extensionSamplingFrequency ?? samplingFrequency }

    /// Output channels: Table 1.19 for `channelConfiguration`, 0 for "see the program config element",
    /// and 2 when parametric stereo widens a mono core.
    public var channels: Int {
        if psPresent && channelConfiguration == 1 { return 2 }
        return Self.channelCount(configuration: channelConfiguration) ?? 0
    }

    /// The object type to report for the stream: 29 with PS, 5 with SBR, otherwise `audioObjectType`.
    public var profileObjectType: Int {
        if psPresent { return 29 }
        if sbrPresent { return 5 }
        return audioObjectType
    }

    /// Parses an AudioSpecificConfig, throwing `.malformedConfiguration` if it is truncated or uses reserved values.
    public init(parsing bytes: some Collection<UInt8>) throws(FLVError) {
        var reader = ParameterSetBitReader(Array(bytes), structure: "AudioSpecificConfig")
        audioObjectType = try Self.readObjectType(&reader, "audioObjectType")
        guard audioObjectType != 0 else { throw reader.malformed("audioObjectType is 0 (null object)") }
        (samplingFrequencyIndex, samplingFrequency) = try Self.readSamplingFrequency(&reader, "samplingFrequencyIndex")
        channelConfiguration = Int(try reader.bits(4, "channelConfiguration"))
        guard Self.channelCount(configuration: channelConfiguration) != nil else {
            throw reader.malformed("channelConfiguration \(channelConfiguration) is reserved")
        }
        underlyingObjectType = audioObjectType
        sbrPresent = false
        psPresent = false
        extensionSamplingFrequencyIndex = nil
        extensionSamplingFrequency = nil

        if audioObjectType == 5 || audioObjectType == 29 {
            sbrPresent = true
            psPresent = audioObjectType == 29
            let (index, frequency) = try Self.readSamplingFrequency(&reader, "extensionSamplingFrequencyIndex")
            extensionSamplingFrequencyIndex = index
            extensionSamplingFrequency = frequency
            underlyingObjectType = try Self.readObjectType(&reader, "audioObjectType")
            guard ![0, 5, 29].contains(underlyingObjectType) else {
                throw reader.malformed("object type \(underlyingObjectType) cannot be the core of SBR")
            }
            return
        }
        // Implicit signalling is optional extra data; a config that stops early is still complete.
        let implicit = try? Self.syncExtension(
            after: &reader, objectType: audioObjectType, channelConfiguration: channelConfiguration
        )
        if let implicit {
            sbrPresent = implicit.sbrPresent
            psPresent = implicit.psPresent
            extensionSamplingFrequencyIndex = implicit.frequency?.index
            extensionSamplingFrequency = implicit.frequency?.hertz
        }
    }

    private struct SyncExtension {
        var sbrPresent: Bool
        var psPresent: Bool
        var frequency: (index: Int, hertz: Int)?
    }

    /// Skips `GASpecificConfig` (§4.4.1) and reads a following `syncExtensionType` 0x2B7 (§1.6.2.1), if any.
    private static func syncExtension(
        after reader: inout ParameterSetBitReader, objectType: Int, channelConfiguration: Int
    ) throws(FLVError) -> SyncExtension? {
        let generalAudioTypes: Set<Int> = [1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22, 23]
        // A program config element (channelConfiguration 0) is not worth parsing just to find SBR.
        guard generalAudioTypes.contains(objectType), channelConfiguration != 0 else { return nil }
        try reader.skip(1, "frameLengthFlag")
        if try reader.flag("dependsOnCoreCoder") {
            try reader.skip(14, "coreCoderDelay")
        }
        let extensionFlag = try reader.flag("extensionFlag")
        if objectType == 6 || objectType == 20 {
            try reader.skip(3, "layerNr")
        }
        if extensionFlag {
            if objectType == 22 {
                try reader.skip(16, "numOfSubFrame and layer_length")
            }
            if [17, 19, 20, 23].contains(objectType) {
                try reader.skip(3, "resilience flags")
            }
            try reader.skip(1, "extensionFlag3")
        }
        if objectType >= 17 {
            guard try reader.bits(2, "epConfig") < 2 else { return nil }
        }
        guard reader.bitsRemaining >= 16, try reader.bits(11, "syncExtensionType") == 0x2B7 else { return nil }
        guard try readObjectType(&reader, "extensionAudioObjectType") == 5 else { return nil }
        var result = SyncExtension(sbrPresent: try reader.flag("sbrPresentFlag"), psPresent: false)
        if result.sbrPresent {
            let (index, hertz) = try readSamplingFrequency(&reader, "extensionSamplingFrequencyIndex")
            result.frequency = (index, hertz)
            if reader.bitsRemaining >= 12, try reader.bits(11, "syncExtensionType") == 0x548 {
                result.psPresent = try reader.flag("psPresentFlag")
            }
        }
        return result
    }

    /// `GetAudioObjectType()` (§1.6.2.1): five bits, or 32 plus six more after the escape value 31.
    private static func readObjectType(_ reader: inout ParameterSetBitReader, _ field: String) throws(FLVError) -> Int {
        let objectType = Int(try reader.bits(5, field))
        guard objectType == 31 else { return objectType }
        return 32 + Int(try reader.bits(6, "audioObjectTypeExt"))
    }

    /// A sampling frequency index and its frequency (Table 1.18); index 15 escapes to a 24-bit value.
    private static func readSamplingFrequency(
        _ reader: inout ParameterSetBitReader, _ field: String
    ) throws(FLVError) -> (index: Int, hertz: Int) {
        let index = Int(try reader.bits(4, field))
        if index == 0x0F {
            let hertz = Int(try reader.bits(24, "samplingFrequency"))
            guard hertz > 0 else { throw reader.malformed("explicit sampling frequency is 0") }
            return (index, hertz)
        }
        let table = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]
        guard index < table.count else { throw reader.malformed("\(field) \(index) is reserved") }
        return (index, table[index])
    }

    /// Channels for a `channelConfiguration` (Table 1.19 with the 22.2 and 7.1 additions); `nil` if reserved.
    private static func channelCount(configuration: Int) -> Int? {
        switch configuration {
        case 0...6: configuration
        case 7, 12, 14: 8
        case 11: 7
        case 13: 24
        default: nil
        }
    }
}

/// The four-byte header that starts every MPEG audio frame (ISO/IEC 11172-3 §2.4.2.3, 13818-3, and MPEG-2.5).
public struct MPEGAudioFrameHeader: Sendable, Hashable {
    /// The `ID` bits, with MPEG-2.5's extension of the sync word.
    public enum Version: UInt8, Sendable, Hashable {
        /// MPEG-2.5, the unofficial low-rate extension (8, 11.025 and 12 kHz).
        case mpeg25 = 0
        /// MPEG-2 (ISO/IEC 13818-3) lower sampling frequencies.
        case mpeg2 = 2
        /// MPEG-1 (ISO/IEC 11172-3).
        case mpeg1 = 3
    }

    /// The `mode` field.
    public enum ChannelMode: UInt8, Sendable, Hashable {
        case stereo = 0
        case jointStereo = 1
        case dualChannel = 2
        case singleChannel = 3
    }

    public var version: Version
    /// 1, 2 or 3.
    public var layer: Int
    /// The frame carries a 16-bit CRC after the header (`protection_bit` is 0).
    public var hasCRC: Bool
    /// Bits per second.
    public var bitrate: Int
    /// Hz.
    public var sampleRate: Int
    /// The frame has one padding slot (4 bytes in Layer I, 1 byte otherwise).
    public var isPadded: Bool
    public var channelMode: ChannelMode
    /// 1 for single channel, otherwise 2.
    public var channels: Int { channelMode == .singleChannel ? 1 : 2 }
    /// 384 for Layer I, 1152 for Layer II and MPEG-1 Layer III, 576 for MPEG-2 / 2.5 Layer III.
    public var samplesPerFrame: Int {
        switch layer {
        case 1: 384
        case 3 where version != .mpeg1: 576
        default: 1152
        }
    }
    /// Bytes in the whole frame, header and padding included.
    public var frameLength: Int {
        if layer == 1 {
            return (12 * bitrate / sampleRate + (isPadded ? 1 : 0)) * 4
        }
        return samplesPerFrame / 8 * bitrate / sampleRate + (isPadded ? 1 : 0)
    }

    /// Parses the first four bytes; `nil` for a bad sync word, reserved values, or free-format bitrate.
    public init?(parsing bytes: some Collection<UInt8>) {
        var iterator = bytes.makeIterator()
        guard let byte0 = iterator.next(), let byte1 = iterator.next(), let byte2 = iterator.next(),
            let byte3 = iterator.next()
        else { return nil }
        guard byte0 == 0xFF, byte1 & 0xE0 == 0xE0 else { return nil }
        guard let version = Version(rawValue: byte1 >> 3 & 0x03) else { return nil }
        let layerBits = Int(byte1 >> 1 & 0x03)
        guard layerBits != 0 else { return nil }
        let bitrateIndex = Int(byte2 >> 4)
        let frequencyIndex = Int(byte2 >> 2 & 0x03)
        guard bitrateIndex != 0, bitrateIndex != 15, frequencyIndex != 3 else { return nil }

        self.version = version
        layer = 4 - layerBits
        hasCRC = byte1 & 0x01 == 0
        let kilobits: [Int] =
            switch (version, layer) {
            case (.mpeg1, 1): [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
            case (.mpeg1, 2): [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
            case (.mpeg1, _): [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
            case (_, 1): [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
            default: [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
            }
        bitrate = kilobits[bitrateIndex - 1] * 1000
        let mpeg1Rates = [44100, 48000, 32000]
        sampleRate =
            switch version {
            case .mpeg1: mpeg1Rates[frequencyIndex]
            case .mpeg2: mpeg1Rates[frequencyIndex] / 2
            case .mpeg25: mpeg1Rates[frequencyIndex] / 4
            }
        isPadded = byte2 & 0x02 != 0
        channelMode = ChannelMode(rawValue: byte3 >> 6)!
    }
}

extension AudioCodecConfiguration {
    /// An AAC configuration from an AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1).
    public static func aac(audioSpecificConfig: [UInt8]) throws(FLVError) -> AudioCodecConfiguration {
        let config = try AudioSpecificConfig(parsing: audioSpecificConfig)
        return AudioCodecConfiguration(
            codec: .aac, extradata: audioSpecificConfig, sampleRate: config.sampleRate, channels: config.channels,
            objectType: config.profileObjectType
        )
    }

    /// An MP3 configuration from the first frame's header (ISO/IEC 11172-3 §2.4.2.3); the object type is the layer.
    public static func mp3(header: MPEGAudioFrameHeader) -> AudioCodecConfiguration {
        AudioCodecConfiguration(
            codec: .mp3, extradata: [], sampleRate: header.sampleRate, channels: header.channels,
            objectType: header.layer
        )
    }
}
