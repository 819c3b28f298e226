import LivePlayCore

/// The Enhanced RTMP v2 header parts audio and video share: ModEx wrappers, multitrack units, the track list.
extension FLVTagParser {
    // MARK: - Enhanced RTMP v2 headers shared by audio and video

    /// Reads the ModEx wrappers in front of the real packet type (each: a size, its data, a type nibble and the
    /// next packet type nibble). TimestampOffsetNano moves `timestamp` by its nanoseconds rounded to the
    /// millisecond timeline; unknown types are skipped with one warning each. False when the header is cut short.
    mutating func readModEx(
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
    mutating func readUnits(
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
    static func firstChoice(_ units: [Unit<UInt32>], requested: UInt8?) -> UInt8? {
        let playable = units.filter {
            FLVVideoFourCC(rawValue: $0.fourCC)?.codec.isSupported ?? (FLVAudioFourCC(rawValue: $0.fourCC) != nil)
        }.map(\.track)
        // The asked-for track may come in a later message: the first frames decide then.
        guard let requested else { return playable.min() }
        return playable.contains(requested) ? requested : nil
    }

    func truncatedHeader(_ offset: Int64, _ elements: inout [FLVElement]) -> Bool {
        elements.append(.warning(FLVError(.malformedTag, "extended tag header is cut short", offset: offset)))
        return false
    }

    /// Adds ``FLVElement/tracks(_:)`` when a multitrack stream's tracks, their configurations or the choice changed.
    mutating func reportTracksIfChanged(into elements: inout [FLVElement]) {
        guard isMultitrack else { return }
        // Per tag: a hash of what the list is made of, with no allocation; the list is built only when it changed.
        let fingerprint = tracksFingerprint()
        guard fingerprint != reportedFingerprint else { return }
        reportedFingerprint = fingerprint
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

    /// The tracks, their codecs and configurations, which ones play, and their descriptions, as one number;
    /// order-independent, since a dictionary's order is not the tracks'.
    private func tracksFingerprint() -> Int {
        // Each entry hashed alone and summed, so the dictionaries' order does not count; generic, so a tag that
        // checks the list allocates nothing.
        func hash(_ first: some Hashable, _ second: some Hashable, _ third: some Hashable) -> Int {
            var hasher = Hasher()
            hasher.combine(first)
            hasher.combine(second)
            hasher.combine(third)
            return hasher.finalize()
        }
        var sum = 0
        for (id, track) in videoTracks { sum &+= hash(id, track.codec, track.configuration) }
        for (id, track) in audioTracks { sum &+= hash(id, track.codec, track.configuration) }
        for (kind, entries) in trackDescriptions {
            for (id, entry) in entries { sum &+= hash(kind, id, entry) }
        }
        var hasher = Hasher()
        hasher.combine(activeVideo)
        hasher.combine(activeAudio)
        hasher.combine(sum)
        return hasher.finalize()
    }

}
