import LivePlayCore
import LivePlayFLV
import LivePlayTesting
import Testing

/// The Enhanced RTMP v2 wrappers around real H.264 + AAC material: ModEx, multitrack, command frames, silence,
/// metadata, and headers cut short.
@Suite struct EnhancedRTMPTests {
    private static let avc1 = FLVVideoFourCC.avc1.rawValue
    private static let mp4a = FLVAudioFourCC.mp4a.rawValue

    /// Track 1 carries the same pictures with one byte more, so which track a packet came from shows.
    private static func rendition(_ packet: EncodedPacket, track: UInt8) -> [UInt8] {
        packet.payload + Array(repeating: 0xEE, count: Int(track))
    }

    private func multitrackStream(
        _ material: Material, videoTracks: [UInt8], audioTracks: [UInt8], split: Int? = nil,
        metadata: [AMF0Property]? = nil
    ) -> (bytes: [UInt8], splitOffset: Int) {
        var writer = FLVWriter()
        if let metadata { writer.writeMetadata(metadata) }
        let videoStarts = videoTracks.map { FLVWriter.Track(fourCC: Self.avc1, id: $0, payload: material.video.extradata) }
        writer.writeEnhancedVideo(packetType: 0, timestamp: 0, multitrack: .manyTracks, tracks: videoStarts)
        let audioStarts = audioTracks.map { FLVWriter.Track(fourCC: Self.mp4a, id: $0, payload: material.audio!.extradata) }
        writer.writeEnhancedAudio(packetType: .sequenceStart, timestamp: 0, multitrack: .manyTracks, tracks: audioStarts)
        var splitOffset = writer.bytes.count
        for (index, packet) in material.packets.enumerated() {
            if index == split { splitOffset = writer.bytes.count }
            let timestamp = UInt32(packet.dts.milliseconds)
            switch packet.kind {
            case .video:
                let tracks = videoTracks.map { track in
                    FLVWriter.Track(
                        fourCC: Self.avc1, id: track,
                        payload: FLVWriter.codedFrames(
                            .h264, compositionTime: Int32(packet.pts.milliseconds - packet.dts.milliseconds),
                            Self.rendition(packet, track: track)))
                }
                writer.writeEnhancedVideo(
                    packetType: 1, frameType: packet.isKeyframe ? 1 : 2, timestamp: timestamp,
                    multitrack: .manyTracksManyCodecs, tracks: tracks)
            case .audio:
                let tracks = audioTracks.map {
                    FLVWriter.Track(fourCC: Self.mp4a, id: $0, payload: Self.rendition(packet, track: $0))
                }
                writer.writeEnhancedAudio(packetType: .codedFrames, timestamp: timestamp, multitrack: .manyTracks, tracks: tracks)
            }
        }
        return (writer.bytes, splitOffset)
    }

    @Test func theLowestTrackPlaysAndEveryTrackIsListed() throws {
        let material = try Material.load()
        // onMetaData describes the additional tracks (trackId 0 is the top-level fields' track).
        let described = AMF0Value.object([
            AMF0Property("2", .object([
                AMF0Property("name", .string("Commentary")), AMF0Property("language", .string("fr")),
                AMF0Property("audiodatarate", .number(96)),
            ]))
        ])
        let (bytes, _) = multitrackStream(
            material, videoTracks: [1, 0], audioTracks: [2, 1], metadata: [AMF0Property("audioTrackIdInfoMap", described)])
        let elements = try demuxAll(bytes, chunkSizes: [777])
        #expect(elements.warnings.isEmpty, "\(elements.warnings)")
        #expect(elements.packets.map(\.payload) == material.packets.map { Self.rendition($0, track: $0.kind == .video ? 0 : 1) })
        let lists = elements.compactMap { if case .tracks(let tracks) = $0 { tracks } else { nil } }
        let last = try #require(lists.last)
        #expect(last.map(\.summary) == [
            "video 0 h264 320x240 (playing)", "video 1 h264 320x240", "audio 1 aac 1ch 44100Hz (playing)",
            "audio 2 aac 1ch 44100Hz \"Commentary\" [fr] 96 kbit/s",
        ])
        // One configuration per kind comes out: the playing track's.
        #expect(elements.filter { if case .videoConfiguration = $0 { true } else { false } }.count == 1)
        #expect(elements.filter { if case .audioConfiguration = $0 { true } else { false } }.count == 1)
    }

    @Test func theAskedForTracksPlayFromTheStart() throws {
        let material = try Material.load()
        let (bytes, _) = multitrackStream(material, videoTracks: [0, 1], audioTracks: [0, 1])
        let elements = try demuxAll(bytes, configuration: FLVDemuxer.Configuration(videoTrack: 1, audioTrack: 1))
        #expect(elements.packets.map(\.payload) == material.packets.map { Self.rendition($0, track: 1) })
    }

    @Test func aSwitchTakesVideoAtTheNextKeyframeAndAudioAtOnce() throws {
        let material = try Material.load()
        let split = material.packets.count / 3
        let (bytes, splitOffset) = multitrackStream(material, videoTracks: [0, 1], audioTracks: [0, 1], split: split)
        var demuxer = FLVDemuxer()
        var elements: [FLVElement] = []
        demuxer.append(bytes[..<splitOffset])
        while let element = try demuxer.nextElement() { elements.append(element) }
        demuxer.select(.video, track: 1)
        demuxer.select(.audio, track: 1)
        demuxer.append(bytes[splitOffset...])
        demuxer.finish()
        while let element = try demuxer.nextElement() { elements.append(element) }

        let nextKeyframe = try #require(material.packets[split...].firstIndex { $0.kind == .video && $0.isKeyframe })
        let expected = material.packets.enumerated().map { index, packet in
            let switched = packet.kind == .audio ? index >= split : index >= nextKeyframe
            return Self.rendition(packet, track: switched ? 1 : 0)
        }
        #expect(elements.packets.map(\.payload) == expected)
        // No packet is lost or doubled at the switch: the timeline goes on.
        #expect(elements.packets.map(\.dts) == material.packets.map(\.dts))
        let lists = elements.compactMap { if case .tracks(let tracks) = $0 { tracks } else { nil } }
        #expect(lists.last?.filter(\.isActive).map(\.id) == [1, 1])
    }

    @Test func modExMovesTheTimestampByItsNanosecondsAndUnknownTypesAreSkipped() throws {
        let material = try Material.load()
        let keyframe = try #require(material.packets.first { $0.kind == .video })
        var writer = FLVWriter(hasAudio: false)
        let start = [FLVWriter.Track(fourCC: Self.avc1, payload: material.video.extradata)]
        // ModEx on the sequence start too: every packet type may carry it.
        writer.writeEnhancedVideo(packetType: 0, timestamp: 0, modEx: [.nanoseconds(1)], tracks: start)
        let frame = [FLVWriter.Track(fourCC: Self.avc1, payload: FLVWriter.codedFrames(.h264, keyframe.payload))]
        writer.writeEnhancedVideo(packetType: 1, timestamp: 40, modEx: [.nanoseconds(600_000)], tracks: frame)
        writer.writeEnhancedVideo(packetType: 1, timestamp: 80, modEx: [.nanoseconds(400_000)], tracks: frame)
        // An unknown ModEx type with a 300-byte body (the UI16 size form), twice: one warning.
        let unknown = FLVWriter.ModEx(type: 9, data: Array(repeating: 7, count: 300))
        writer.writeEnhancedVideo(packetType: 1, timestamp: 120, modEx: [unknown], tracks: frame)
        writer.writeEnhancedVideo(packetType: 1, timestamp: 160, modEx: [unknown, .nanoseconds(999_999)], tracks: frame)
        let elements = try demuxAll(writer.bytes)
        #expect(elements.packets.map(\.dts.milliseconds) == [41, 80, 120, 161])
        #expect(elements.packets.allSatisfy { $0.payload == keyframe.payload })
        #expect(elements.warnings.map(\.message) == ["unknown ModEx type 9 skipped"])
    }

    @Test func commandFramesSilenceAndColourMetadata() throws {
        let material = try Material.load()
        var writer = FLVWriter()
        writer.writeEnhancedVideo(
            packetType: 0, timestamp: 0, tracks: [FLVWriter.Track(fourCC: Self.avc1, payload: material.video.extradata)])
        // A command frame (StartSeek): a signal, no picture.
        writer.writeEnhancedVideo(
            packetType: 1, frameType: 5, timestamp: 0, tracks: [FLVWriter.Track(fourCC: Self.avc1, payload: [0])])
        var colour = AMF0Encoder()
        colour.encode(.string("colorInfo"))
        colour.encode(.object([AMF0Property("colorConfig", .object([AMF0Property("transferCharacteristics", .number(16))]))]))
        writer.writeEnhancedVideo(
            packetType: 4, timestamp: 0, tracks: [FLVWriter.Track(fourCC: Self.avc1, payload: colour.bytes)])
        writer.writeEnhancedAudio(
            packetType: .sequenceStart, timestamp: 0, tracks: [FLVWriter.Track(fourCC: Self.mp4a, payload: material.audio!.extradata)])
        let audio = material.packets.filter { $0.kind == .audio }.prefix(6)
        for (index, packet) in audio.enumerated() {
            // Silence twice in a row (one event), then again after sound came back, then SequenceEnd.
            if index == 2 || index == 4 {
                writer.writeTag(type: 8, timestamp: UInt32(packet.dts.milliseconds), body: [])
                writer.writeTag(type: 8, timestamp: UInt32(packet.dts.milliseconds), body: [])
            }
            writer.writeEnhancedAudio(
                packetType: .codedFrames, timestamp: UInt32(packet.dts.milliseconds),
                tracks: [FLVWriter.Track(fourCC: Self.mp4a, payload: packet.payload)])
        }
        writer.writeEnhancedAudio(packetType: .sequenceEnd, timestamp: 500, tracks: [FLVWriter.Track(fourCC: Self.mp4a, payload: [])])
        let elements = try demuxAll(writer.bytes)
        #expect(elements.warnings.isEmpty, "\(elements.warnings)")
        #expect(elements.packets.filter { $0.kind == .video }.isEmpty)
        let colours = elements.compactMap { if case .colorInfo(let info, _) = $0 { info } else { nil } }
        #expect(colours == [VideoColorInfo(transferCharacteristics: 16)])
        let silences = elements.enumerated().filter { $0.element == .endOfSequence(.audio) }.map(\.offset)
        #expect(silences.count == 3)
        let audioPackets = elements.enumerated().filter { if case .packet = $0.element { true } else { false } }.map(\.offset)
        #expect(audioPackets.count == 6)
        // Each silence sits between the packets it interrupts.
        #expect(silences[0] > audioPackets[1] && silences[0] < audioPackets[2])
        #expect(silences[1] > audioPackets[3] && silences[1] < audioPackets[4])
        #expect(silences[2] > audioPackets[5])
    }

    @Test func malformedV2HeadersAreWarningsNeverCrashes() throws {
        let bodies: [[UInt8]] = [
            [0x97],  // ModEx with no size
            [0x97, 0x05, 1, 2],  // ModEx data cut short
            [0x97, 0xFF],  // the wide size cut short
            [0x96],  // multitrack with no type byte
            [0x96, 0x31] + Array("avc1".utf8),  // AvMultitrackType 3 is reserved
            [0x96, 0x11] + Array("avc1".utf8) + [0, 0xFF, 0xFF, 0xFF, 1],  // a track larger than the message
            [0x96, 0x21, 0x61],  // ManyTracksManyCodecs with its FourCC cut short
            [0x9A] + Array("avc1".utf8),  // VideoPacketType 10 is reserved
            [0x90] + Array("av01".utf8) + [0x81, 0, 0],  // av1C cut short
            [0x90] + Array("av01".utf8) + [0x81, 0, 0x0C, 0, 0x0A, 0x7F, 1],  // a sequence header OBU claiming too much
        ]
        var writer = FLVWriter()
        for (index, body) in bodies.enumerated() { writer.writeTag(type: 9, timestamp: UInt32(index), body: body) }
        for body: [UInt8] in [[0x97], [0x95], [0x95, 0x31], [0x93] + Array("Opus".utf8), [0x90] + Array("fLaC".utf8) + [1, 2]] {
            writer.writeTag(type: 8, timestamp: 20, body: body)
        }
        let elements = try demuxAll(writer.bytes)
        #expect(elements.packets.isEmpty)
        #expect(elements.warnings.count >= bodies.count)
        #expect(elements.warnings.allSatisfy { [.malformedTag, .malformedConfiguration].contains($0.code) })
    }
}
