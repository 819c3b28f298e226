import LivePlayCore

/// Turns one complete tag body into elements; remembers what it needs across tags (timestamps, each track's
/// codec configuration, which tracks play, what it has already warned about).
///
/// Every stream is tracks: a legacy tag or a single-track Enhanced RTMP message is track 0 of its media type,
/// a multitrack message (Enhanced RTMP v2) names its tracks. One video and one audio track are *active*: only
/// their configurations and packets come out, so everything downstream sees one stream of each. The others are
/// followed (their configurations kept) and listed in ``FLVElement/tracks(_:)``, so a switch needs no
/// reconnect: a video switch waits for the new track's next keyframe, an audio switch takes its next packet.
struct FLVTagParser: Sendable {
    private let maximumAMFDepth: Int
    private var timestamps = MediaTimestamp.Unwrapper()
    private var videoTracks: [UInt8: VideoTrack] = [:]
    private var audioTracks: [UInt8: AudioTrack] = [:]
    private var activeVideo: UInt8?
    private var activeAudio: UInt8?
    /// The tracks the user asked for; the lowest id plays until the asked-for one is there.
    private var requestedVideo: UInt8?
    private var requestedAudio: UInt8?
    /// Set by the first multitrack message: from then on the track list is reported when it changes.
    private var isMultitrack = false
    private var reportedTracks: [FLVTrack] = []
    /// `onMetaData`'s per-track descriptions (`videoTrackIdInfoMap`, `audioTrackIdInfoMap`), by kind and id.
    private var trackDescriptions: [MediaKind: [UInt8: AMF0Value]] = [:]
    private var reportedUnsupportedVideo: String?
    private var reportedUnsupportedAudio: String?
    private var reportedModExTypes: Set<UInt8> = []
    private var sawVideoPacket = false
    private var audioIsSilent = false
    /// Every track's packets go out, not only the playing ones'.
    private let allTracks: Bool

    private struct VideoTrack {
        var codec: VideoCodec
        /// The sequence start as received (its absence matters to VP8 / VP9, which can do without).
        var record: [UInt8]?
        var configuration: VideoCodecConfiguration?
        var reportedMissingConfiguration = false
    }

    private struct AudioTrack {
        var codec: AudioCodec
        var header: [UInt8]?
        var configuration: AudioCodecConfiguration?
        var multichannel: FLVMultichannelConfig?
        var reportedMissingConfiguration = false
    }

    /// One track's part of a message: its codec, packet type and body.
    private struct Unit<FourCC> {
        var track: UInt8
        var fourCC: FourCC
        var body: ArraySlice<UInt8>
    }

    init(maximumAMFDepth: Int, videoTrack: UInt8? = nil, audioTrack: UInt8? = nil, allTracks: Bool = false) {
        self.maximumAMFDepth = maximumAMFDepth
        self.allTracks = allTracks
        requestedVideo = videoTrack
        requestedAudio = audioTrack
    }

    /// Asks for a track (nil: the default, the lowest id). Video moves at the track's next keyframe, audio at its
    /// next packet; until then the current track plays on.
    mutating func select(_ kind: MediaKind, track: UInt8?) {
        switch kind {
        case .video: requestedVideo = track
        case .audio: requestedAudio = track
        }
    }

    mutating func parse(
        type: FLVTagType, wireTimestamp: UInt32, body: ArraySlice<UInt8>, offset: Int64,
        into elements: inout [FLVElement]
    ) {
        let timestamp = timestamps.unwrap(wireTimestamp)
        guard !body.isEmpty else {
            // Zero-length tags carry nothing (some servers send them as keep-alives), except that an empty
            // audio message is Enhanced RTMP's "silence": play out what is buffered, then run on the wall clock.
            if type == .audio, !audioIsSilent {
                audioIsSilent = true
                elements.append(.endOfSequence(.audio))
            }
            return
        }
        var reader = TagBodyReader(body)
        switch type {
        case .video: parseVideo(&reader, timestamp: timestamp, offset: offset, into: &elements)
        case .audio: parseAudio(&reader, timestamp: timestamp, offset: offset, into: &elements)
        case .script: parseScript(Array(body), timestamp: timestamp, offset: offset, into: &elements)
        }
        reportTracksIfChanged(into: &elements)
    }

    // MARK: - Video (§E.4.3.1 and Enhanced RTMP v2)

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

    private mutating func parseExtendedVideo(
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

    private mutating func configureVideo(_ unit: Unit<VideoCodec>, offset: Int64, into elements: inout [FLVElement]) {
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

    private mutating func videoFrame(
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

    private func videoPacket(
        _ unit: Unit<VideoCodec>, _ frameType: UInt8, _ dts: MediaTimestamp, _ compositionTime: Int32
    ) -> EncodedPacket {
        var packet = EncodedPacket(
            kind: .video, dts: dts, pts: dts + Int64(compositionTime),
            isKeyframe: frameType == FLVVideoFrameType.keyframe.rawValue, payload: Array(unit.body))
        packet.track = unit.track
        return packet
    }

    /// The avcC / hvcC built from the SPS / PPS (/ VPS) a keyframe carries in-band, with 4-byte NAL lengths
    /// (what FLV's muxers write); nil when the keyframe does not walk as such or lacks a set.
    private static func inBandRecord(_ codec: VideoCodec, keyframe: ArraySlice<UInt8>) -> [UInt8]? {
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
    private static let minimalAV1Record: [UInt8] = [0x81, 0x00, 0x0C, 0x00]

    private mutating func reportUnsupportedVideo(
        _ what: String, offset: Int64, into elements: inout [FLVElement]
    ) {
        guard reportedUnsupportedVideo != what else { return }
        reportedUnsupportedVideo = what
        elements.append(.warning(FLVError(.unsupportedCodec, "\(what) is not supported", offset: offset)))
    }

    // MARK: - Enhanced RTMP v2 headers shared by audio and video

    /// Reads the ModEx wrappers in front of the real packet type (each: a size, its data, a type nibble and the
    /// next packet type nibble). TimestampOffsetNano moves `timestamp` by its nanoseconds rounded to the
    /// millisecond timeline; unknown types are skipped with one warning each. False when the header is cut short.
    private mutating func readModEx(
        _ packetType: inout UInt8, _ reader: inout TagBodyReader, timestamp: inout MediaTimestamp, offset: Int64,
        into elements: inout [FLVElement]
    ) -> Bool {
        // The ModEx value is 7 for video and audio alike.
        while packetType == FLVExtendedVideoPacketType.modEx.rawValue {
            guard var size = reader.readUInt8().map({ Int($0) + 1 }) else { return truncatedHeader(offset, &elements) }
            if size == 256 {
                guard let wide = reader.readUInt16() else { return truncatedHeader(offset, &elements) }
                size = Int(wide) + 1
            }
            guard let data = reader.readBytes(size), let types = reader.readUInt8() else {
                return truncatedHeader(offset, &elements)
            }
            packetType = types & 0x0F
            let modExType = types >> 4
            switch FLVModExType(rawValue: modExType) {
            case .timestampOffsetNano:
                guard data.count >= 3 else {
                    elements.append(
                        .warning(FLVError(.malformedTag, "TimestampOffsetNano shorter than 3 bytes", offset: offset)))
                    continue
                }
                let start = data.startIndex
                let nanoseconds = Int64(data[start]) << 16 | Int64(data[start + 1]) << 8 | Int64(data[start + 2])
                timestamp = timestamp + (min(nanoseconds, 999_999) + 500_000) / 1_000_000
            case nil:
                if reportedModExTypes.insert(modExType).inserted {
                    elements.append(
                        .warning(
                            FLVError(.malformedTag, "unknown ModEx type \(modExType) skipped", offset: offset)))
                }
            }
        }
        return true
    }

    /// The header's FourCC and the per-track units of the body: one unit for a plain message, one per track for
    /// a multitrack one (OneTrack, ManyTracks, ManyTracksManyCodecs). The multitrack value is 6 for video and 5
    /// for audio. nil, with a warning, when the header or a track's size does not fit the body.
    private mutating func readUnits(
        _ packetType: inout UInt8, _ reader: inout TagBodyReader, multitrackValue: UInt8 = 6, offset: Int64,
        into elements: inout [FLVElement]
    ) -> [Unit<UInt32>]? {
        guard packetType == multitrackValue else {
            guard let fourCC = reader.readUInt32() else {
                _ = truncatedHeader(offset, &elements)
                return nil
            }
            return [Unit(track: 0, fourCC: fourCC, body: reader.readRest())]
        }
        isMultitrack = true
        guard let types = reader.readUInt8() else {
            _ = truncatedHeader(offset, &elements)
            return nil
        }
        packetType = types & 0x0F
        guard let layout = FLVMultitrackType(rawValue: types >> 4) else {
            elements.append(.warning(FLVError(.malformedTag, "unknown AvMultitrackType \(types >> 4)", offset: offset)))
            return nil
        }
        var sharedFourCC: UInt32 = 0
        if layout != .manyTracksManyCodecs {
            guard let fourCC = reader.readUInt32() else {
                _ = truncatedHeader(offset, &elements)
                return nil
            }
            sharedFourCC = fourCC
        }
        var units: [Unit<UInt32>] = []
        while !reader.isAtEnd {
            var fourCC = sharedFourCC
            if layout == .manyTracksManyCodecs {
                guard let own = reader.readUInt32() else { break }
                fourCC = own
            }
            guard let track = reader.readUInt8() else { break }
            if layout == .oneTrack {
                units.append(Unit(track: track, fourCC: fourCC, body: reader.readRest()))
                break
            }
            guard let size = reader.readUInt24(), let body = reader.readBytes(Int(size)) else {
                elements.append(
                    .warning(FLVError(.malformedTag, "track \(track) is larger than its message", offset: offset)))
                break
            }
            units.append(Unit(track: track, fourCC: fourCC, body: body))
        }
        return units
    }

    /// The track to play when nothing plays yet and a message names several: the asked-for one if it is there,
    /// else the lowest id of those whose codec liveplay decodes; nil when none is.
    private static func firstChoice(_ units: [Unit<UInt32>], requested: UInt8?) -> UInt8? {
        let playable = units.filter {
            FLVVideoFourCC(rawValue: $0.fourCC)?.codec.isSupported ?? (FLVAudioFourCC(rawValue: $0.fourCC) != nil)
        }.map(\.track)
        // The asked-for track may come in a later message: the first frames decide then.
        guard let requested else { return playable.min() }
        return playable.contains(requested) ? requested : nil
    }

    private func truncatedHeader(_ offset: Int64, _ elements: inout [FLVElement]) -> Bool {
        elements.append(.warning(FLVError(.malformedTag, "extended tag header is cut short", offset: offset)))
        return false
    }

    /// Adds ``FLVElement/tracks(_:)`` when a multitrack stream's tracks, their configurations or the choice changed.
    private mutating func reportTracksIfChanged(into elements: inout [FLVElement]) {
        guard isMultitrack else { return }
        let videos = videoTracks.sorted { $0.key < $1.key }.map { id, track in
            FLVTrack(
                kind: .video, id: id, codec: track.codec.rawValue, video: track.configuration, audio: nil,
                isActive: id == activeVideo)
        }
        let audios = audioTracks.sorted { $0.key < $1.key }.map { id, track in
            FLVTrack(
                kind: .audio, id: id, codec: track.codec.rawValue, video: nil, audio: track.configuration,
                isActive: id == activeAudio)
        }
        var tracks = videos + audios
        for index in tracks.indices {
            if let entry = trackDescriptions[tracks[index].kind]?[tracks[index].id] { tracks[index].describe(with: entry) }
        }
        guard tracks != reportedTracks else { return }
        reportedTracks = tracks
        elements.append(.tracks(tracks))
    }

    // MARK: - Audio (§E.4.2.1 and Enhanced RTMP v2)

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
            let unit = Unit(track: 0, fourCC: AudioCodec.aac, body: reader.readRest())
            if packetType == 0 {
                configureAudio(unit, offset: offset, into: &elements)
            } else {
                audioFrame(unit, timestamp: timestamp, offset: offset, into: &elements)
            }
        case .mp3, .mp3At8kHz:
            audioFrame(
                Unit(track: 0, fourCC: AudioCodec.mp3, body: reader.readRest()), timestamp: timestamp, offset: offset,
                into: &elements)
        case .extendedHeader:
            parseExtendedAudio(first & 0x0F, &reader, timestamp: timestamp, offset: offset, into: &elements)
        default:
            reportUnsupportedAudio("FLV sound format \(formatValue)", offset: offset, into: &elements)
        }
    }

    private mutating func parseExtendedAudio(
        _ firstPacketType: UInt8, _ reader: inout TagBodyReader, timestamp: MediaTimestamp, offset: Int64,
        into elements: inout [FLVElement]
    ) {
        var packetTypeValue = firstPacketType
        var dts = timestamp
        guard readModEx(&packetTypeValue, &reader, timestamp: &dts, offset: offset, into: &elements),
            let units = readUnits(
                &packetTypeValue, &reader, multitrackValue: FLVExtendedAudioPacketType.multitrack.rawValue,
                offset: offset, into: &elements)
        else { return }
        guard let packetType = FLVExtendedAudioPacketType(rawValue: packetTypeValue) else {
            elements.append(
                .warning(FLVError(.malformedTag, "unknown extended audio PacketType \(packetTypeValue)", offset: offset)))
            return
        }
        if activeAudio == nil { activeAudio = Self.firstChoice(units, requested: requestedAudio) }
        // Likewise audio: the asked-for track's packet replaces the old track's packet of the same instant.
        if let requested = requestedAudio, requested != activeAudio, packetType == .codedFrames,
            units.contains(where: { $0.track == requested }), let configuration = audioTracks[requested]?.configuration
        {
            activeAudio = requested
            elements.append(.audioConfiguration(configuration))
        }
        for rawUnit in units {
            guard let fourCC = FLVAudioFourCC(rawValue: rawUnit.fourCC) else {
                reportUnsupportedAudio("audio FourCC '\(fourCCString(rawUnit.fourCC))'", offset: offset, into: &elements)
                continue
            }
            let unit = Unit(track: rawUnit.track, fourCC: fourCC.codec, body: rawUnit.body)
            switch packetType {
            case .sequenceStart:
                configureAudio(unit, offset: offset, into: &elements)
            case .codedFrames:
                audioFrame(unit, timestamp: dts, offset: offset, into: &elements)
            case .sequenceEnd:
                if unit.track == activeAudio, !audioIsSilent {
                    audioIsSilent = true
                    elements.append(.endOfSequence(.audio))
                }
            case .multichannelConfig:
                do {
                    let multichannel = try FLVMultichannelConfig(parsing: unit.body)
                    var track = audioTracks[unit.track] ?? AudioTrack(codec: unit.fourCC)
                    track.multichannel = multichannel
                    audioTracks[unit.track] = track
                    if multichannel.isReordered {
                        elements.append(
                            .warning(
                                FLVError(
                                    .unsupportedCodec,
                                    "a custom channel order that is not the native one is not supported; the channels play in the codec's order",
                                    offset: offset)))
                    }
                    if track.header != nil || unit.fourCC == .opus {
                        configureAudio(
                            Unit(track: unit.track, fourCC: unit.fourCC, body: (track.header ?? [])[...]),
                            offset: offset, force: true, into: &elements)
                    }
                } catch {
                    elements.append(.warning(FLVError(error.code, error.message, offset: offset)))
                }
            case .multitrack, .modEx:
                elements.append(
                    .warning(FLVError(.malformedTag, "audio PacketType \(packetTypeValue) nested in a track", offset: offset)))
            }
        }
    }

    private mutating func configureAudio(
        _ unit: Unit<AudioCodec>, offset: Int64, force: Bool = false, into elements: inout [FLVElement]
    ) {
        var track = audioTracks[unit.track] ?? AudioTrack(codec: unit.fourCC)
        let header = Array(unit.body)
        guard force || header != track.header || unit.fourCC != track.codec || track.configuration == nil else { return }
        if unit.fourCC != track.codec { track = AudioTrack(codec: unit.fourCC) }
        track.header = header
        do {
            var configuration: AudioCodecConfiguration?
            switch unit.fourCC {
            case .aac: configuration = try AudioCodecConfiguration.aac(audioSpecificConfig: header)
            case .opus: configuration = try AudioCodecConfiguration.opus(header: header, multichannel: track.multichannel)
            case .flac: configuration = try AudioCodecConfiguration.flac(header: header)
            // MP3, AC-3 and E-AC-3 describe themselves in every frame.
            case .mp3, .ac3, .eac3: configuration = track.configuration
            }
            if let mask = track.multichannel?.channelMask, configuration?.channels == track.multichannel?.channelCount {
                configuration?.channelMask = mask
            }
            setAudioConfiguration(configuration, for: unit.track, track: &track, into: &elements)
        } catch {
            audioTracks[unit.track] = track
            elements.append(.warning(FLVError(error.code, error.message, offset: offset)))
        }
    }

    private mutating func setAudioConfiguration(
        _ configuration: AudioCodecConfiguration?, for id: UInt8, track: inout AudioTrack,
        into elements: inout [FLVElement]
    ) {
        let changed = configuration != track.configuration
        track.configuration = configuration
        if configuration != nil { track.reportedMissingConfiguration = false }
        audioTracks[id] = track
        if activeAudio == nil, requestedAudio == nil || requestedAudio == id { activeAudio = id }
        if changed, id == activeAudio, let configuration { elements.append(.audioConfiguration(configuration)) }
    }

    private mutating func audioFrame(
        _ unit: Unit<AudioCodec>, timestamp: MediaTimestamp, offset: Int64, into elements: inout [FLVElement]
    ) {
        guard !unit.body.isEmpty else { return }
        var track = audioTracks[unit.track] ?? AudioTrack(codec: unit.fourCC)
        if track.codec != unit.fourCC { track = AudioTrack(codec: unit.fourCC) }
        // Self-describing frames: the configuration follows the frame header.
        var described: AudioCodecConfiguration?
        switch unit.fourCC {
        case .mp3: described = MPEGAudioFrameHeader(parsing: unit.body).map(AudioCodecConfiguration.mp3(header:))
        case .ac3, .eac3: described = AudioCodecConfiguration.dolby(frame: unit.body)
        // An Opus stream without an ID header is stereo (or what MultichannelConfig says).
        case .opus where track.configuration == nil:
            described = try? AudioCodecConfiguration.opus(header: [], multichannel: track.multichannel)
        case .aac, .flac, .opus: break
        }
        if let described, described != track.configuration {
            setAudioConfiguration(described, for: unit.track, track: &track, into: &elements)
        } else {
            audioTracks[unit.track] = track
        }
        if activeAudio == nil, requestedAudio == nil || requestedAudio == unit.track || audioTracks[requestedAudio!] == nil {
            activeAudio = unit.track
        }
        if unit.track != activeAudio {
            // Audio tracks share the timeline: the asked-for one takes over at its next packet, without a gap.
            if unit.track == requestedAudio, let configuration = track.configuration {
                activeAudio = unit.track
                elements.append(.audioConfiguration(configuration))
            } else {
                if allTracks { elements.append(.packet(audioPacket(unit, timestamp))) }
                return
            }
        }
        if track.configuration == nil, !track.reportedMissingConfiguration {
            audioTracks[unit.track]?.reportedMissingConfiguration = true
            let what = unit.fourCC == .aac ? "AAC frames before AudioSpecificConfig" : "\(unit.fourCC.rawValue) frames before their sequence header"
            elements.append(.warning(FLVError(.missingConfiguration, what, offset: offset)))
        }
        audioIsSilent = false
        elements.append(.packet(audioPacket(unit, timestamp)))
    }

    private func audioPacket(_ unit: Unit<AudioCodec>, _ timestamp: MediaTimestamp) -> EncodedPacket {
        var packet = EncodedPacket(kind: .audio, dts: timestamp, pts: timestamp, isKeyframe: true, payload: Array(unit.body))
        packet.track = unit.track
        return packet
    }

    private mutating func reportUnsupportedAudio(_ what: String, offset: Int64, into elements: inout [FLVElement]) {
        guard reportedUnsupportedAudio != what else { return }
        reportedUnsupportedAudio = what
        elements.append(.warning(FLVError(.unsupportedCodec, "\(what) is not supported", offset: offset)))
    }

    // MARK: - Script data (§E.4.4)

    private mutating func parseScript(
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
                for (kind, key) in [(MediaKind.video, "videoTrackIdInfoMap"), (.audio, "audioTrackIdInfoMap")] {
                    for entry in values.first?[key]?.properties ?? [] {
                        guard let id = UInt8(entry.key) else { continue }
                        trackDescriptions[kind, default: [:]][id] = entry.value
                    }
                }
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

    mutating func readUInt16() -> UInt16? {
        read(2).map { UInt16(bigEndian($0, 2)) }
    }

    mutating func readUInt24() -> UInt32? {
        read(3).map { bigEndian($0, 3) }
    }

    /// The next `count` bytes as a slice of the body; nil when fewer remain.
    mutating func readBytes(_ count: Int) -> ArraySlice<UInt8>? {
        read(count).map { body[$0..<$0 + count] }
    }

    var isAtEnd: Bool { position == body.endIndex }

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
