import LivePlayCore

/// Turns one complete tag body into elements; remembers what it needs across tags (timestamps,
/// current codec configurations, what it has already warned about).
struct FLVTagParser: Sendable {
    private let maximumAMFDepth: Int
    private var timestamps = MediaTimestamp.Unwrapper()
    private var videoSequenceHeader: [UInt8]?
    private var videoCodec: VideoCodec?
    private var audioSequenceHeader: [UInt8]?
    private var mp3Configuration: AudioCodecConfiguration?
    private var reportedUnsupportedVideo: String?
    private var reportedUnsupportedAudio: String?
    private var reportedMissingVideoConfiguration = false
    private var reportedMissingAudioConfiguration = false
    private var sawVideoPacket = false

    init(maximumAMFDepth: Int) {
        self.maximumAMFDepth = maximumAMFDepth
    }

    mutating func parse(
        type: FLVTagType, wireTimestamp: UInt32, body: ArraySlice<UInt8>, offset: Int64,
        into elements: inout [FLVElement]
    ) {
        // Zero-length tags carry nothing (some servers send them as keep-alives).
        guard !body.isEmpty else { return }
        let timestamp = timestamps.unwrap(wireTimestamp)
        var reader = TagBodyReader(body)
        switch type {
        case .video: parseVideo(&reader, timestamp: timestamp, offset: offset, into: &elements)
        case .audio: parseAudio(&reader, timestamp: timestamp, offset: offset, into: &elements)
        case .script: parseScript(Array(body), timestamp: timestamp, offset: offset, into: &elements)
        }
    }

    // MARK: - Video (§E.4.3.1 and Enhanced RTMP v1)

    private mutating func parseVideo(
        _ reader: inout TagBodyReader, timestamp: MediaTimestamp, offset: Int64, into elements: inout [FLVElement]
    ) {
        let first = reader.readUInt8()!
        if first & 0x80 != 0 {
            parseExtendedVideo(first, &reader, timestamp: timestamp, offset: offset, into: &elements)
            return
        }
        let frameType = first >> 4
        guard frameType != FLVVideoFrameType.videoInfoOrCommand.rawValue else { return }
        let codecID = first & 0x0F
        let codec: VideoCodec
        switch FLVVideoCodecID(rawValue: codecID) {
        case .avc: codec = .h264
        case .hevcLegacy: codec = .hevc
        default:
            reportUnsupportedVideo("FLV video codec id \(codecID)", offset: offset, into: &elements)
            return
        }
        guard let packetTypeByte = reader.readUInt8(), let compositionTime = reader.readInt24() else {
            elements.append(.warning(FLVError(.malformedTag, "video tag shorter than its AVC header", offset: offset)))
            return
        }
        switch FLVAVCPacketType(rawValue: packetTypeByte) {
        case .sequenceHeader:
            configureVideo(codec, record: Array(reader.readRest()), offset: offset, into: &elements)
        case .nalu:
            emitVideoPacket(
                codec: codec, frameType: frameType, payload: reader.readRest(), dts: timestamp,
                compositionTime: compositionTime, offset: offset, into: &elements)
        case .endOfSequence:
            elements.append(.endOfSequence(.video))
        case nil:
            elements.append(
                .warning(FLVError(.malformedTag, "unknown AVCPacketType \(packetTypeByte)", offset: offset)))
        }
    }

    private mutating func parseExtendedVideo(
        _ first: UInt8, _ reader: inout TagBodyReader, timestamp: MediaTimestamp, offset: Int64,
        into elements: inout [FLVElement]
    ) {
        let frameType = (first >> 4) & 0x07
        let packetTypeValue = first & 0x0F
        guard let fourCCValue = reader.readUInt32() else {
            elements.append(.warning(FLVError(.malformedTag, "extended video tag without FourCC", offset: offset)))
            return
        }
        guard let fourCC = FLVVideoFourCC(rawValue: fourCCValue), fourCC.codec.isSupported else {
            reportUnsupportedVideo("video FourCC '\(fourCCString(fourCCValue))'", offset: offset, into: &elements)
            return
        }
        guard frameType != FLVVideoFrameType.videoInfoOrCommand.rawValue else { return }
        switch FLVExtendedVideoPacketType(rawValue: packetTypeValue) {
        case .sequenceStart:
            configureVideo(fourCC.codec, record: Array(reader.readRest()), offset: offset, into: &elements)
        case .codedFrames:
            guard let compositionTime = reader.readInt24() else {
                elements.append(
                    .warning(FLVError(.malformedTag, "CodedFrames without composition time", offset: offset)))
                return
            }
            emitVideoPacket(
                codec: fourCC.codec, frameType: frameType, payload: reader.readRest(), dts: timestamp,
                compositionTime: compositionTime, offset: offset, into: &elements)
        case .codedFramesX:
            emitVideoPacket(
                codec: fourCC.codec, frameType: frameType, payload: reader.readRest(), dts: timestamp,
                compositionTime: 0, offset: offset, into: &elements)
        case .sequenceEnd:
            elements.append(.endOfSequence(.video))
        case .metadata:
            // HDR colour metadata (AMF0 "colorInfo"); surfaced like any other data message.
            if let message = decodeDataMessage(Array(reader.readRest()), timestamp: timestamp, offset: offset) {
                elements.append(.dataMessage(message))
            }
        case .mpeg2TSSequenceStart, nil:
            elements.append(
                .warning(
                    FLVError(.malformedTag, "unsupported extended video PacketType \(packetTypeValue)", offset: offset)
                ))
        }
    }

    private mutating func configureVideo(
        _ codec: VideoCodec, record: [UInt8], offset: Int64, into elements: inout [FLVElement]
    ) {
        // Servers with a GOP cache repeat the sequence header; only a different one is a change.
        guard record != videoSequenceHeader || codec != videoCodec else { return }
        do {
            let configuration =
                switch codec {
                case .hevc: try VideoCodecConfiguration.hevc(record: record)
                default: try VideoCodecConfiguration.avc(record: record)
                }
            videoSequenceHeader = record
            videoCodec = codec
            reportedMissingVideoConfiguration = false
            elements.append(.videoConfiguration(configuration))
        } catch {
            elements.append(.warning(FLVError(error.code, error.message, offset: offset)))
        }
    }

    private mutating func emitVideoPacket(
        codec: VideoCodec, frameType: UInt8, payload: ArraySlice<UInt8>, dts: MediaTimestamp,
        compositionTime: Int32, offset: Int64, into elements: inout [FLVElement]
    ) {
        guard !payload.isEmpty else { return }
        if videoCodec != codec, !reportedMissingVideoConfiguration {
            reportedMissingVideoConfiguration = true
            elements.append(
                .warning(
                    FLVError(
                        .missingConfiguration, "\(codec.rawValue) frames before their sequence header",
                        offset: offset)))
        }
        let isKeyframe = frameType == FLVVideoFrameType.keyframe.rawValue
        if !sawVideoPacket, !isKeyframe {
            elements.append(
                .warning(
                    FLVError(
                        .awaitingKeyframe, "video starts with a non-keyframe; it cannot be decoded until a keyframe",
                        offset: offset)))
        }
        sawVideoPacket = true
        elements.append(
            .packet(
                EncodedPacket(
                    kind: .video, dts: dts, pts: dts + Int64(compositionTime), isKeyframe: isKeyframe,
                    payload: Array(payload))))
    }

    private mutating func reportUnsupportedVideo(
        _ what: String, offset: Int64, into elements: inout [FLVElement]
    ) {
        guard reportedUnsupportedVideo != what else { return }
        reportedUnsupportedVideo = what
        elements.append(.warning(FLVError(.unsupportedCodec, "\(what) is not supported", offset: offset)))
    }

    // MARK: - Audio (§E.4.2.1)

    private mutating func parseAudio(
        _ reader: inout TagBodyReader, timestamp: MediaTimestamp, offset: Int64, into elements: inout [FLVElement]
    ) {
        let first = reader.readUInt8()!
        let formatValue = first >> 4
        switch FLVSoundFormat(rawValue: formatValue) {
        case .aac:
            guard let packetType = reader.readUInt8() else {
                elements.append(.warning(FLVError(.malformedTag, "AAC tag without AACPacketType", offset: offset)))
                return
            }
            if packetType == 0 {
                configureAAC(Array(reader.readRest()), offset: offset, into: &elements)
                return
            }
            let payload = reader.readRest()
            guard !payload.isEmpty else { return }
            if audioSequenceHeader == nil, !reportedMissingAudioConfiguration {
                reportedMissingAudioConfiguration = true
                elements.append(
                    .warning(FLVError(.missingConfiguration, "AAC frames before AudioSpecificConfig", offset: offset)))
            }
            elements.append(.packet(audioPacket(Array(payload), timestamp)))
        case .mp3, .mp3At8kHz:
            let payload = reader.readRest()
            guard !payload.isEmpty else { return }
            if let header = MPEGAudioFrameHeader(parsing: payload) {
                let configuration = AudioCodecConfiguration.mp3(header: header)
                if configuration != mp3Configuration {
                    mp3Configuration = configuration
                    elements.append(.audioConfiguration(configuration))
                }
            }
            elements.append(.packet(audioPacket(Array(payload), timestamp)))
        default:
            let what = "FLV sound format \(formatValue)"
            guard reportedUnsupportedAudio != what else { return }
            reportedUnsupportedAudio = what
            elements.append(.warning(FLVError(.unsupportedCodec, "\(what) is not supported", offset: offset)))
        }
    }

    private func audioPacket(_ payload: [UInt8], _ timestamp: MediaTimestamp) -> EncodedPacket {
        EncodedPacket(kind: .audio, dts: timestamp, pts: timestamp, isKeyframe: true, payload: payload)
    }

    private mutating func configureAAC(_ config: [UInt8], offset: Int64, into elements: inout [FLVElement]) {
        guard config != audioSequenceHeader else { return }
        do {
            let configuration = try AudioCodecConfiguration.aac(audioSpecificConfig: config)
            audioSequenceHeader = config
            elements.append(.audioConfiguration(configuration))
        } catch {
            elements.append(.warning(FLVError(error.code, error.message, offset: offset)))
        }
    }

    // MARK: - Script data (§E.4.4)

    private func parseScript(
        _ body: [UInt8], timestamp: MediaTimestamp, offset: Int64, into elements: inout [FLVElement]
    ) {
        var decoder = AMF0Decoder(body, maximumDepth: maximumAMFDepth, baseOffset: offset + 11)
        do {
            var values = try decoder.decodeAll()
            guard case .string(var name) = values.first else {
                elements.append(.warning(FLVError(.malformedTag, "script tag without a handler name", offset: offset)))
                return
            }
            values.removeFirst()
            // RTMP publishers wrap metadata as @setDataFrame("onMetaData", {...}).
            if name == "@setDataFrame", case .string(let inner) = values.first {
                name = inner
                values.removeFirst()
            }
            if name == "onMetaData", let properties = values.first?.properties {
                elements.append(.metadata(FLVMetadata(values: properties)))
            } else {
                elements.append(.dataMessage(FLVDataMessage(name: name, arguments: values, timestamp: timestamp)))
            }
        } catch {
            elements.append(.warning(error))
        }
    }

    private func decodeDataMessage(_ body: [UInt8], timestamp: MediaTimestamp, offset: Int64) -> FLVDataMessage? {
        var decoder = AMF0Decoder(body, maximumDepth: maximumAMFDepth, baseOffset: offset)
        guard let values = try? decoder.decodeAll(), case .string(let name) = values.first else { return nil }
        return FLVDataMessage(name: name, arguments: Array(values.dropFirst()), timestamp: timestamp)
    }
}

/// Reads a tag body in place: codec header fields straight from the demuxer's buffer, the payload as a slice of
/// it, so each packet's bytes are copied once, into the packet, and reading a tag allocates nothing else.
private struct TagBodyReader {
    private let body: ArraySlice<UInt8>
    /// Index of the next unread byte, in `body`'s indices.
    private var position: Int

    init(_ body: ArraySlice<UInt8>) {
        self.body = body
        position = body.startIndex
    }

    mutating func readUInt8() -> UInt8? {
        read(1).map { body[$0] }
    }

    mutating func readUInt32() -> UInt32? {
        read(4).map { bigEndian($0, 4) }
    }

    mutating func readInt24() -> Int32? {
        read(3).map { Int32(bitPattern: bigEndian($0, 3) << 8) >> 8 }
    }

    /// Everything after the fields read so far.
    mutating func readRest() -> ArraySlice<UInt8> {
        defer { position = body.endIndex }
        return body[position...]
    }

    /// The `count` bytes at `index`, big-endian.
    private func bigEndian(_ index: Int, _ count: Int) -> UInt32 {
        var value: UInt32 = 0
        var next = index
        while next < index + count {
            value = value << 8 | UInt32(body[next])
            next += 1
        }
        return value
    }

    /// The index of the next `count` bytes, consumed; nil when the body is shorter.
    private mutating func read(_ count: Int) -> Int? {
        guard body.endIndex - position >= count else { return nil }
        defer { position += count }
        return position
    }
}
