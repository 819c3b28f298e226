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
