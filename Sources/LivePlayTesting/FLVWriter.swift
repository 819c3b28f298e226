public import LivePlayCore
public import LivePlayFLV

/// Writes FLV byte streams for tests: well-formed tags in every dialect the demuxer reads, and the
/// malformed ones it must survive (lying sizes, garbage, wrong trailers).
public struct FLVWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    /// Starts a stream with the FLV header and PreviousTagSize0.
    public init(hasAudio: Bool = true, hasVideo: Bool = true) {
        bytes = [0x46, 0x4C, 0x56, 0x01, (hasAudio ? 0x04 : 0) | (hasVideo ? 0x01 : 0), 0, 0, 0, 9, 0, 0, 0, 0]
    }

    /// Appends bytes as they are (garbage, truncation tests).
    public mutating func appendRaw(_ raw: [UInt8]) {
        bytes += raw
    }

    /// Appends one tag and its PreviousTagSize.
    /// - Parameters:
    ///   - declaredSize: DataSize to write instead of the body's real size (a lying header).
    ///   - previousTagSize: trailer to write instead of the correct one (a lying trailer).
    public mutating func writeTag(
        type: UInt8, timestamp: UInt32, body: [UInt8], declaredSize: Int? = nil, previousTagSize: UInt32? = nil
    ) {
        let size = declaredSize ?? body.count
        bytes.append(type)
        appendUInt24(UInt32(size & 0xFF_FFFF))
        appendUInt24(timestamp & 0xFF_FFFF)
        bytes.append(UInt8(timestamp >> 24))
        appendUInt24(0)
        bytes += body
        appendUInt32(previousTagSize ?? UInt32(body.count + 11))
    }

    /// A script tag: the handler name, then the values.
    public mutating func writeScript(name: String, _ values: [AMF0Value], timestamp: UInt32 = 0) {
        var encoder = AMF0Encoder()
        encoder.encode(.string(name))
        for value in values { encoder.encode(value) }
        writeTag(type: FLVTagType.script.rawValue, timestamp: timestamp, body: encoder.bytes)
    }

    public mutating func writeMetadata(_ properties: [AMF0Property]) {
        writeScript(name: "onMetaData", [.ecmaArray(properties)])
    }

    /// A legacy video tag (codec id 7 = AVC, 12 = HEVC as Chinese CDNs send it).
    public mutating func writeVideo(
        codecID: UInt8, packetType: FLVAVCPacketType, keyframe: Bool, timestamp: UInt32, compositionTime: Int32 = 0,
        payload: [UInt8]
    ) {
        var body: [UInt8] = [(keyframe ? 0x10 : 0x20) | codecID, packetType.rawValue]
        appendInt24(compositionTime, to: &body)
        writeTag(type: FLVTagType.video.rawValue, timestamp: timestamp, body: body + payload)
    }

    /// An Enhanced RTMP v1 video tag (IsExHeader set, FourCC after the first byte).
    public mutating func writeExtendedVideo(
        fourCC: FLVVideoFourCC, packetType: FLVExtendedVideoPacketType, keyframe: Bool, timestamp: UInt32,
        compositionTime: Int32 = 0, payload: [UInt8]
    ) {
        var body: [UInt8] = [0x80 | (keyframe ? 0x10 : 0x20) | packetType.rawValue]
        body += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: fourCC.rawValue >> UInt32($0)) }
        if packetType == .codedFrames { appendInt24(compositionTime, to: &body) }
        writeTag(type: FLVTagType.video.rawValue, timestamp: timestamp, body: body + payload)
    }

    /// One track's part of an Enhanced RTMP v2 message.
    public struct Track: Sendable {
        public var fourCC: UInt32
        public var id: UInt8
        /// The body after the track header (for NAL-unit codecs' CodedFrames, the composition time first).
        public var payload: [UInt8]

        public init(fourCC: UInt32, id: UInt8 = 0, payload: [UInt8]) {
            self.fourCC = fourCC
            self.id = id
            self.payload = payload
        }
    }

    /// A ModEx wrapper: its type and data (TimestampOffsetNano: type 0, three bytes of nanoseconds).
    public struct ModEx: Sendable {
        public var type: UInt8
        public var data: [UInt8]

        public init(type: UInt8, data: [UInt8]) {
            self.type = type
            self.data = data
        }

        public static func nanoseconds(_ value: UInt32) -> ModEx {
            ModEx(type: 0, data: [UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)])
        }
    }

    /// An Enhanced RTMP v2 video message (veovera enhanced-rtmp v2, ExVideoTagHeader and ExVideoTagBody):
    /// ModEx wrappers, then a plain FourCC body (`multitrack` nil, one track) or a multitrack one.
    public mutating func writeEnhancedVideo(
        packetType: UInt8, frameType: UInt8 = 1, timestamp: UInt32, modEx: [ModEx] = [],
        multitrack: FLVMultitrackType? = nil, tracks: [Track]
    ) {
        let body = Self.enhancedBody(
            firstNibble: 0x8 | frameType, packetType: packetType, multitrackValue: 6, modEx: modEx,
            multitrack: multitrack, tracks: tracks)
        writeTag(type: FLVTagType.video.rawValue, timestamp: timestamp, body: body)
    }

    /// An Enhanced RTMP v2 audio message (SoundFormat 9, ExAudioTagHeader and ExAudioTagBody).
    public mutating func writeEnhancedAudio(
        packetType: FLVExtendedAudioPacketType, timestamp: UInt32, modEx: [ModEx] = [],
        multitrack: FLVMultitrackType? = nil, tracks: [Track]
    ) {
        let body = Self.enhancedBody(
            firstNibble: 0x9, packetType: packetType.rawValue, multitrackValue: 5, modEx: modEx,
            multitrack: multitrack, tracks: tracks)
        writeTag(type: FLVTagType.audio.rawValue, timestamp: timestamp, body: body)
    }

    /// A video CodedFrames payload: the composition time for NAL-unit codecs (AVC, HEVC, VVC), then the frame.
    public static func codedFrames(_ codec: VideoCodec, compositionTime: Int32 = 0, _ frame: [UInt8]) -> [UInt8] {
        guard codec.usesNALUnits else { return frame }
        let raw = UInt32(bitPattern: compositionTime)
        return [UInt8(truncatingIfNeeded: raw >> 16), UInt8(truncatingIfNeeded: raw >> 8), UInt8(truncatingIfNeeded: raw)]
            + frame
    }

    private static func enhancedBody(
        firstNibble: UInt8, packetType: UInt8, multitrackValue: UInt8, modEx: [ModEx],
        multitrack: FLVMultitrackType?, tracks: [Track]
    ) -> [UInt8] {
        // Each header nibble names what follows: ModEx (7), Multitrack, or the real packet type.
        let afterModEx = multitrack == nil ? packetType : multitrackValue
        var body: [UInt8] = [firstNibble << 4 | (modEx.isEmpty ? afterModEx : 7)]
        for (index, wrapper) in modEx.enumerated() {
            let size = wrapper.data.count - 1
            if size < 255 {
                body.append(UInt8(size))
            } else {
                body += [0xFF, UInt8(truncatingIfNeeded: size >> 8), UInt8(truncatingIfNeeded: size)]
            }
            body += wrapper.data
            body.append(wrapper.type << 4 | (index + 1 < modEx.count ? 7 : afterModEx))
        }
        guard let multitrack else {
            return body + fourCCBytes(tracks[0].fourCC) + tracks[0].payload
        }
        body.append(multitrack.rawValue << 4 | packetType)
        if multitrack != .manyTracksManyCodecs { body += fourCCBytes(tracks[0].fourCC) }
        for track in tracks {
            if multitrack == .manyTracksManyCodecs { body += fourCCBytes(track.fourCC) }
            body.append(track.id)
            if multitrack != .oneTrack {
                let size = UInt32(track.payload.count)
                body += [UInt8(truncatingIfNeeded: size >> 16), UInt8(truncatingIfNeeded: size >> 8), UInt8(truncatingIfNeeded: size)]
            }
            body += track.payload
        }
        return body
    }

    private static func fourCCBytes(_ value: UInt32) -> [UInt8] {
        [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> UInt32($0)) }
    }

    /// An AAC tag: 44.1 kHz, 16-bit, stereo flags as FLV requires for AAC; `sequenceHeader` for the ASC.
    public mutating func writeAAC(sequenceHeader: Bool, timestamp: UInt32, payload: [UInt8]) {
        writeTag(
            type: FLVTagType.audio.rawValue, timestamp: timestamp, body: [0xAF, sequenceHeader ? 0 : 1] + payload)
    }

    /// Writes a demuxed packet back as a tag (configuration records come from `video` / `audio`).
    public mutating func write(_ packet: EncodedPacket, videoCodec: VideoCodec = .h264, timestampOffset: UInt32 = 0) {
        let timestamp = UInt32(truncatingIfNeeded: packet.dts.milliseconds) &+ timestampOffset
        switch packet.kind {
        case .video:
            writeVideo(
                codecID: videoCodec == .hevc ? 12 : 7, packetType: .nalu, keyframe: packet.isKeyframe,
                timestamp: timestamp, compositionTime: Int32(packet.pts.milliseconds - packet.dts.milliseconds),
                payload: packet.payload)
        case .audio:
            writeAAC(sequenceHeader: false, timestamp: timestamp, payload: packet.payload)
        }
    }

    private mutating func appendUInt24(_ value: UInt32) {
        bytes += [UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    private mutating func appendUInt32(_ value: UInt32) {
        bytes += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> UInt32($0)) }
    }

    private func appendInt24(_ value: Int32, to body: inout [UInt8]) {
        let raw = UInt32(bitPattern: value)
        body += [UInt8(truncatingIfNeeded: raw >> 16), UInt8(truncatingIfNeeded: raw >> 8), UInt8(truncatingIfNeeded: raw)]
    }
}

/// Feeds bytes to a fresh demuxer in the given chunk sizes (cycled) and collects every element.
public func demuxAll(
    _ bytes: [UInt8], chunkSizes: [Int] = [Int.max], configuration: FLVDemuxer.Configuration = .init()
) throws -> [FLVElement] {
    var demuxer = FLVDemuxer(configuration: configuration)
    var elements: [FLVElement] = []
    var offset = 0
    var sizeIndex = 0
    while offset < bytes.count {
        let size = min(chunkSizes[sizeIndex % chunkSizes.count], bytes.count - offset)
        sizeIndex += 1
        demuxer.append(bytes[offset..<offset + size])
        offset += size
        while let element = try demuxer.nextElement() { elements.append(element) }
    }
    demuxer.finish()
    while let element = try demuxer.nextElement() { elements.append(element) }
    return elements
}

extension Array where Element == FLVElement {
    public var packets: [EncodedPacket] {
        compactMap { if case .packet(let packet) = $0 { packet } else { nil } }
    }

    public var warnings: [FLVError] {
        compactMap { if case .warning(let warning) = $0 { warning } else { nil } }
    }
}
