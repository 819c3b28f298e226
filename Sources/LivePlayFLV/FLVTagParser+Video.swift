import LivePlayCore

/// Video tags: the legacy AVC / HEVC layout, Enhanced RTMP v2's FourCC messages, and each track's configuration.
extension FLVTagParser {
    // MARK: - Video (§E.4.3.1 and Enhanced RTMP v2)

    mutating func parseVideo(
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
        let unit = Unit(track: 0, fourCC: codec, body: reader.readRest())
        switch FLVAVCPacketType(rawValue: packetTypeByte) {
        case .sequenceHeader:
            configureVideo(unit, offset: offset, into: &elements)
        case .nalu:
            videoFrame(
                unit, frameType: frameType, dts: timestamp, compositionTime: compositionTime, offset: offset,
                into: &elements)
        case .endOfSequence:
            if activeVideo == 0 { elements.append(.endOfSequence(.video)) }
        case nil:
            elements.append(
                .warning(FLVError(.malformedTag, "unknown AVCPacketType \(packetTypeByte)", offset: offset)))
        }
    }

    mutating func parseExtendedVideo(
        _ first: UInt8, _ reader: inout TagBodyReader, timestamp: MediaTimestamp, offset: Int64,
        into elements: inout [FLVElement]
    ) {
        let frameType = (first >> 4) & 0x07
        var packetTypeValue = first & 0x0F
        var dts = timestamp
        guard readModEx(&packetTypeValue, &reader, timestamp: &dts, offset: offset, into: &elements) else { return }
        if packetTypeValue != FLVExtendedVideoPacketType.metadata.rawValue,
            frameType == FLVVideoFrameType.videoInfoOrCommand.rawValue
        {
            // A command frame (start / end of a client-side seek): a signal, not a picture.
            return
        }
        guard let units = readUnits(&packetTypeValue, &reader, offset: offset, into: &elements) else { return }
        guard let packetType = FLVExtendedVideoPacketType(rawValue: packetTypeValue) else {
            elements.append(
                .warning(FLVError(.malformedTag, "unknown extended video PacketType \(packetTypeValue)", offset: offset)))
            return
        }
        if activeVideo == nil { activeVideo = Self.firstChoice(units, requested: requestedVideo) }
        // A message with the asked-for track's keyframe switches before any of its tracks goes out, so the
        // old track's picture of the same instant is not shown too.
        if let requested = requestedVideo, requested != activeVideo,
            packetType == .codedFrames || packetType == .codedFramesX,
            frameType == FLVVideoFrameType.keyframe.rawValue, units.contains(where: { $0.track == requested }),
            let configuration = videoTracks[requested]?.configuration, configuration.width > 0
        {
            activeVideo = requested
            elements.append(.videoConfiguration(configuration))
        }
        for rawUnit in units {
            guard let fourCC = FLVVideoFourCC(rawValue: rawUnit.fourCC), fourCC.codec.isSupported else {
                let name = fourCCString(rawUnit.fourCC)
                reportUnsupportedVideo(
                    name == "vvc1"
                        ? "video FourCC 'vvc1' (H.266 / VVC): this libavcodec has no VVC decoder, so it"
                        : "video FourCC '\(name)'", offset: offset, into: &elements)
                continue
            }
            var unit = Unit(track: rawUnit.track, fourCC: fourCC.codec, body: rawUnit.body)
            switch packetType {
            case .sequenceStart:
                configureVideo(unit, offset: offset, into: &elements)
            case .codedFrames, .codedFramesX:
                var compositionTime: Int32 = 0
                if packetType == .codedFrames, fourCC.codec.usesNALUnits {
                    var bodyReader = TagBodyReader(unit.body)
                    guard let value = bodyReader.readInt24() else {
                        elements.append(
                            .warning(FLVError(.malformedTag, "CodedFrames without composition time", offset: offset)))
                        continue
                    }
                    compositionTime = value
                    unit.body = bodyReader.readRest()
                }
                videoFrame(
                    unit, frameType: frameType, dts: dts, compositionTime: compositionTime, offset: offset,
                    into: &elements)
            case .sequenceEnd:
                if unit.track == activeVideo { elements.append(.endOfSequence(.video)) }
            case .metadata:
                // HDR colour metadata (AMF0 "colorInfo"), for the track that plays.
                if unit.track == activeVideo || activeVideo == nil,
                    let message = decodeDataMessage(Array(unit.body), timestamp: dts, offset: offset)
                {
                    if message.name == "colorInfo" {
                        elements.append(.colorInfo(message.arguments.first.flatMap(VideoColorInfo.init(amf:)), at: dts))
                    } else {
                        elements.append(.dataMessage(message))
                    }
                }
            case .mpeg2TSSequenceStart:
                // AV1's MPEG-2 TS descriptor: the av1C sequence start says the same and is what decoders take.
                reportUnsupportedVideo("AV1 MPEG2TSSequenceStart (the av1C SequenceStart is used)", offset: offset, into: &elements)
            case .multitrack, .modEx:
                elements.append(
                    .warning(FLVError(.malformedTag, "video PacketType \(packetTypeValue) nested in a track", offset: offset)))
            }
        }
    }

    mutating func configureVideo(_ unit: Unit<VideoCodec>, offset: Int64, into elements: inout [FLVElement]) {
        var track = videoTracks[unit.track] ?? VideoTrack(codec: unit.fourCC)
        let record = Array(unit.body)
        // Servers with a GOP cache repeat the sequence header; only a different one is a change.
        guard record != track.record || unit.fourCC != track.codec || track.configuration == nil else { return }
        if unit.fourCC != track.codec { track = VideoTrack(codec: unit.fourCC) }
        track.record = record
        do {
            switch unit.fourCC {
            case .h264: track.configuration = try VideoCodecConfiguration.avc(record: record)
            case .hevc: track.configuration = try VideoCodecConfiguration.hevc(record: record)
            case .av1: track.configuration = try VideoCodecConfiguration.av1(record: record)
            // VP8 / VP9: the size is in the keyframe; the configuration is made there.
            case .vp8, .vp9, .vvc: track.configuration = nil
            }
        } catch {
            videoTracks[unit.track] = track
            elements.append(.warning(FLVError(error.code, error.message, offset: offset)))
            return
        }
        track.reportedMissingConfiguration = false
        videoTracks[unit.track] = track
        if activeVideo == nil, requestedVideo == nil || requestedVideo == unit.track { activeVideo = unit.track }
        if unit.track == activeVideo, let configuration = track.configuration, configuration.width > 0 {
            elements.append(.videoConfiguration(configuration))
        }
    }

    mutating func videoFrame(
        _ unit: Unit<VideoCodec>, frameType: UInt8, dts: MediaTimestamp, compositionTime: Int32, offset: Int64,
        into elements: inout [FLVElement]
    ) {
        guard !unit.body.isEmpty else { return }
        let isKeyframe = frameType == FLVVideoFrameType.keyframe.rawValue
        var track = videoTracks[unit.track] ?? VideoTrack(codec: unit.fourCC)
        if track.codec != unit.fourCC { track = VideoTrack(codec: unit.fourCC) }
        var configurationChanged = false
        if isKeyframe, track.configuration == nil, unit.fourCC == .h264 || unit.fourCC == .hevc,
            let record = Self.inBandRecord(unit.fourCC, keyframe: unit.body),
            let configuration = try? unit.fourCC == .h264
                ? VideoCodecConfiguration.avc(record: record) : VideoCodecConfiguration.hevc(record: record)
        {
            // No sequence header came, but the keyframe carries its parameter sets (GStreamer's x264enc, a server
            // that never sends the header to a late joiner): the record a muxer would have written. A real
            // sequence header later takes over.
            track.record = record
            track.configuration = configuration
            configurationChanged = true
        }
        if isKeyframe, track.configuration?.width ?? 0 == 0, unit.fourCC != .h264, unit.fourCC != .hevc {
            // VP8 / VP9 keyframes carry their size; an AV1 keyframe its sequence header.
            do {
                track.configuration =
                    unit.fourCC == .av1
                    ? try VideoCodecConfiguration.av1(
                        record: track.record ?? Self.minimalAV1Record, keyframe: Array(unit.body))
                    : try VideoCodecConfiguration.vpx(unit.fourCC, record: track.record ?? [], keyframe: Array(unit.body))
                configurationChanged = track.configuration?.width ?? 0 > 0
            } catch {
                elements.append(.warning(FLVError(error.code, error.message, offset: offset)))
            }
        }
        videoTracks[unit.track] = track
        // The first track to show a frame plays when nothing was asked for or the asked-for track is not there.
        if activeVideo == nil, requestedVideo == nil || requestedVideo == unit.track || videoTracks[requestedVideo!] == nil {
            activeVideo = unit.track
        }
        if unit.track != activeVideo {
            // A switch happens at the asked-for track's keyframe, so the picture never shows a broken frame.
            if unit.track == requestedVideo, isKeyframe, let configuration = track.configuration {
                activeVideo = unit.track
                elements.append(.videoConfiguration(configuration))
            } else {
                if allTracks { elements.append(.packet(videoPacket(unit, frameType, dts, compositionTime))) }
                return
            }
        } else if configurationChanged, let configuration = track.configuration {
            elements.append(.videoConfiguration(configuration))
        }
        if track.configuration == nil, !track.reportedMissingConfiguration {
            videoTracks[unit.track]?.reportedMissingConfiguration = true
            elements.append(
                .warning(
                    FLVError(
                        .missingConfiguration, "\(unit.fourCC.rawValue) frames before their sequence header",
                        offset: offset)))
        }
        if !sawVideoPacket, !isKeyframe {
            elements.append(
                .warning(
                    FLVError(
                        .awaitingKeyframe, "video starts with a non-keyframe; it cannot be decoded until a keyframe",
                        offset: offset)))
        }
        sawVideoPacket = true
        elements.append(.packet(videoPacket(unit, frameType, dts, compositionTime)))
    }

    func videoPacket(
        _ unit: Unit<VideoCodec>, _ frameType: UInt8, _ dts: MediaTimestamp, _ compositionTime: Int32
    ) -> EncodedPacket {
        var packet = EncodedPacket(
            kind: .video, dts: dts, pts: dts + Int64(compositionTime),
            isKeyframe: frameType == FLVVideoFrameType.keyframe.rawValue, payload: payload(unit.body))
        packet.track = unit.track
        return packet
    }

    /// The avcC / hvcC built from the SPS / PPS (/ VPS) a keyframe carries in-band, with 4-byte NAL lengths
    /// (what FLV's muxers write); nil when the keyframe does not walk as such or lacks a set.
    static func inBandRecord(_ codec: VideoCodec, keyframe: ArraySlice<UInt8>) -> [UInt8]? {
        var sets: [Int: [[UInt8]]] = [:]
        var index = keyframe.startIndex
        while index < keyframe.endIndex {
            guard keyframe.endIndex - index >= 5 else { return nil }
            let length = keyframe[index..<index + 4].reduce(0) { $0 << 8 | Int($1) }
            index += 4
            guard length > 0, length <= keyframe.endIndex - index else { return nil }
            let header = keyframe[index]
            let type = codec == .h264 ? Int(header & 0x1F) : Int(header >> 1 & 0x3F)
            if (codec == .h264 ? [7, 8] : [32, 33, 34]).contains(type), sets[type, default: []].count < 16 {
                sets[type, default: []].append(Array(keyframe[index..<index + length]))
            }
            index += length
        }
        if codec == .h264 {
            guard let sps = sets[7], let pps = sets[8] else { return nil }
            return try? AVCDecoderConfigurationRecord(sequenceParameterSets: sps, pictureParameterSets: pps).serialized()
        }
        guard let vps = sets[32], let sps = sets[33], let pps = sets[34] else { return nil }
        return try? HEVCDecoderConfigurationRecord(
            videoParameterSets: vps, sequenceParameterSets: sps, pictureParameterSets: pps
        ).serialized()
    }

    /// An av1C with no configOBUs (4:2:0, 8-bit, profile 0), for a stream that sent only keyframes: the sequence
    /// header is then read from the keyframe, and libdav1d reads it there too.
    static let minimalAV1Record: [UInt8] = [0x81, 0x00, 0x0C, 0x00]

    mutating func reportUnsupportedVideo(
        _ what: String, offset: Int64, into elements: inout [FLVElement]
    ) {
        guard reportedUnsupportedVideo != what else { return }
        reportedUnsupportedVideo = what
        elements.append(.warning(FLVError(.unsupportedCodec, "\(what) is not supported", offset: offset)))
    }

}
