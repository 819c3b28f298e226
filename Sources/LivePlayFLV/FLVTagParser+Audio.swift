import LivePlayCore

/// Audio tags: AAC and MP3 in the legacy layout, and Enhanced RTMP v2's FourCC messages (SoundFormat 9).
extension FLVTagParser {
    // MARK: - Audio (§E.4.2.1 and Enhanced RTMP v2)

    mutating func parseAudio(
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

    mutating func parseExtendedAudio(
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
        // Likewise audio: the asked-for track's packet replaces the old track's packet of the same instant. When
        // that one already went out (FFmpeg's muxer sends each track in a OneTrack message of its own), the new
        // track takes over from its next packet, so no instant is heard twice.
        var heard: UInt8?
        if let requested = requestedAudio, requested != activeAudio, packetType == .codedFrames,
            units.contains(where: { $0.track == requested }), let configuration = audioTracks[requested]?.configuration
        {
            activeAudio = requested
            elements.append(.audioConfiguration(configuration))
            if let last = lastAudioTimestamp, dts <= last { heard = requested }
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
                if unit.track != heard { audioFrame(unit, timestamp: dts, offset: offset, into: &elements) }
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

    mutating func configureAudio(
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

    mutating func setAudioConfiguration(
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

    mutating func audioFrame(
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
            // Audio tracks share the timeline: the asked-for one takes over at its next packet, without a gap
            // (or from the one after, as above, when the old track's packet of this instant was heard).
            if unit.track == requestedAudio, let configuration = track.configuration {
                activeAudio = unit.track
                elements.append(.audioConfiguration(configuration))
                if let last = lastAudioTimestamp, timestamp <= last { return }
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
        lastAudioTimestamp = timestamp
        elements.append(.packet(audioPacket(unit, timestamp)))
    }

    func audioPacket(_ unit: Unit<AudioCodec>, _ timestamp: MediaTimestamp) -> EncodedPacket {
        var packet = EncodedPacket(
            kind: .audio, dts: timestamp, pts: timestamp, isKeyframe: true, payload: payload(unit.body))
        packet.track = unit.track
        return packet
    }

    mutating func reportUnsupportedAudio(_ what: String, offset: Int64, into elements: inout [FLVElement]) {
        guard reportedUnsupportedAudio != what else { return }
        reportedUnsupportedAudio = what
        elements.append(.warning(FLVError(.unsupportedCodec, "\(what) is not supported", offset: offset)))
    }

}
