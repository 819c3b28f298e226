import LivePlayCore
import LivePlayFLV
import LivePlayTesting
import Testing

/// Real H.264 + AAC material taken from an ffmpeg-made file, to rebuild streams with faults in them.
struct Material {
    var video: VideoCodecConfiguration
    var audio: AudioCodecConfiguration?
    var packets: [EncodedPacket]

    static func load(_ fixture: Fixture = .h264AAC) throws -> Material {
        let elements = try demuxAll(try Fixtures.bytes(try fixture.path()))
        let video = try #require(elements.compactMap { if case .videoConfiguration(let c) = $0 { c } else { nil } }.first)
        let audio = elements.compactMap { if case .audioConfiguration(let c) = $0 { c } else { nil } }.first
        return Material(video: video, audio: audio, packets: elements.packets)
    }

    /// A stream of the material; `between(index, &writer)` may add faults before packet `index`.
    func stream(timestampOffset: UInt32 = 0, between: (Int, inout FLVWriter) -> Void = { _, _ in }) -> [UInt8] {
        var writer = FLVWriter()
        writer.writeVideo(codecID: 7, packetType: .sequenceHeader, keyframe: true, timestamp: 0, payload: video.extradata)
        if let audio { writer.writeAAC(sequenceHeader: true, timestamp: 0, payload: audio.extradata) }
        for (index, packet) in packets.enumerated() {
            between(index, &writer)
            writer.write(packet, timestampOffset: timestampOffset)
        }
        return writer.bytes
    }
}

@Suite struct FLVDemuxerMalformedTests {
    @Test func notFLVIsAClearError() {
        for bytes: [UInt8] in [[], [0x46, 0x4C], Array("<html>not a video</html>".utf8)] {
            #expect(throws: FLVError.self) { try demuxAll(bytes) }
        }
        #expect {
            try demuxAll(Array("GET / HTTP/1.1\r\n".utf8))
        } throws: { ($0 as? FLVError)?.code == .invalidHeader }
    }

    @Test func truncatedFileKeepsEverythingCompleteAndSaysItWasCut() throws {
        let material = try Material.load()
        let bytes = material.stream()
        let whole = try demuxAll(bytes).packets
        #expect(whole == material.packets)
        for cut in [bytes.count / 3, bytes.count / 2 + 5, bytes.count - 20] {
            let elements = try demuxAll(Array(bytes.prefix(cut)), chunkSizes: [997])
            let packets = elements.packets
            #expect(packets.count < whole.count)
            #expect(Array(whole.prefix(packets.count)) == packets)
            #expect(elements.warnings.last?.code == .truncated)
        }
    }

    @Test func lyingPreviousTagSizeIsReportedAndTheTagKept() throws {
        let material = try Material.load()
        let video = material.packets.filter { $0.kind == .video }
        var writer = FLVWriter()
        writer.writeVideo(codecID: 7, packetType: .sequenceHeader, keyframe: true, timestamp: 0, payload: material.video.extradata)
        for (index, packet) in video.enumerated() {
            guard index == 5 else {
                writer.write(packet)
                continue
            }
            // A correct tag whose trailing PreviousTagSize lies.
            let body: [UInt8] = [packet.isKeyframe ? 0x17 : 0x27, 1, 0, 0, 0] + packet.payload
            writer.writeTag(type: 9, timestamp: UInt32(packet.dts.milliseconds), body: body, previousTagSize: 12345)
        }
        for chunking in [[Int.max], [1]] {
            let elements = try demuxAll(writer.bytes, chunkSizes: chunking)
            #expect(elements.warnings.map(\.code) == [.previousTagSizeMismatch])
            #expect(elements.packets == video)
        }
    }

    @Test func lyingDataSizeResynchronisesOnTheNextTag() throws {
        let material = try Material.load()
        let bytes = material.stream { index, writer in
            if index == 10 {
                // Claims 3,000 bytes, carries 40: the demuxer reads into the next tags, sees a bad trailer.
                writer.writeTag(type: 9, timestamp: 400, body: [0x27, 1, 0, 0, 0] + Array(repeating: 0xAB, count: 35),
                    declaredSize: 3000)
            }
        }
        for chunking in [[Int.max], [1], [211]] {
            let elements = try demuxAll(bytes, chunkSizes: chunking)
            let codes = elements.warnings.map(\.code)
            #expect(codes.contains(.resynchronized), "\(codes)")
            // Everything after the damage that the lie did not swallow comes back.
            #expect(elements.packets.count >= material.packets.count - 3)
            #expect(elements.packets.last == material.packets.last)
        }
    }

    @Test func hugeDataSizeWithLittleDataDoesNotAllocateOrHang() throws {
        let material = try Material.load()
        let bytes = material.stream { index, writer in
            if index == 10 { writer.writeTag(type: 9, timestamp: 400, body: [0x17, 1, 0, 0, 0], declaredSize: 0xFF_FFFF) }
        }
        let elements = try demuxAll(bytes, chunkSizes: [4096])
        #expect(elements.warnings.map(\.code).first == .tagTooLarge)
        #expect(elements.packets == material.packets)

        // With the limit raised to the format's maximum, a claim at the end of the input is a truncation.
        var tail = FLVWriter()
        tail.writeTag(type: 9, timestamp: 0, body: [0x17, 1, 0, 0, 0], declaredSize: 0xFF_FFFF)
        var demuxer = FLVDemuxer(configuration: .init(maximumTagSize: 0xFF_FFFF))
        demuxer.append(tail.bytes)
        #expect(try demuxer.nextElement() != nil)  // the header
        #expect(try demuxer.nextElement() == nil)  // waiting for the body: nothing allocated for it
        #expect(demuxer.bufferedByteCount < 64)
        demuxer.finish()
        guard case .warning(let warning) = try demuxer.nextElement() else {
            Issue.record("expected a truncation warning")
            return
        }
        #expect(warning.code == .truncated)
    }

    @Test func garbageBetweenTagsIsSkipped() throws {
        let material = try Material.load()
        var seed: UInt32 = 12345
        let bytes = material.stream { index, writer in
            guard index == 7 || index == 40 else { return }
            writer.appendRaw((0..<777).map { _ in
                seed = seed &* 1_103_515_245 &+ 12345
                return UInt8(truncatingIfNeeded: seed >> 16)
            })
        }
        for chunking in [[Int.max], [1], [3, 500]] {
            let elements = try demuxAll(bytes, chunkSizes: chunking)
            #expect(elements.packets == material.packets, "chunks \(chunking)")
            #expect(elements.warnings.filter { $0.code == .resynchronized }.count == 2)
        }
    }

    @Test func zeroLengthTagsAreSkippedSilently() throws {
        let material = try Material.load()
        let bytes = material.stream { index, writer in
            if index % 10 == 3 { writer.writeTag(type: UInt8(8 + index % 2), timestamp: 0, body: []) }
        }
        let elements = try demuxAll(bytes)
        #expect(elements.packets == material.packets)
        #expect(elements.warnings.isEmpty)
    }

    @Test func corruptPayloadBytesDoNotDisturbTheFraming() throws {
        let material = try Material.load()
        var damaged = material
        for index in damaged.packets.indices where index % 9 == 4 {
            for byte in damaged.packets[index].payload.indices.dropFirst(6) where byte % 5 == 0 {
                damaged.packets[index].payload[byte] ^= 0xFF
            }
        }
        let elements = try demuxAll(damaged.stream())
        #expect(elements.packets == damaged.packets)
    }

    @Test func firstVideoTagNotAKeyframeIsReported() throws {
        let material = try Material.load()
        let packets = material.packets.filter { $0.kind == .video }
        var writer = FLVWriter()
        writer.writeVideo(codecID: 7, packetType: .sequenceHeader, keyframe: true, timestamp: 0, payload: material.video.extradata)
        for packet in packets.dropFirst(3) { writer.write(packet) }
        let elements = try demuxAll(writer.bytes)
        #expect(elements.warnings.map(\.code) == [.awaitingKeyframe])
        #expect(elements.packets.count == packets.count - 3)
    }

    @Test func timestampsStayMonotonicAcrossThe32BitWrap() throws {
        let material = try Material.load()
        let offset = UInt32.max - 1000  // wraps about one second in
        let elements = try demuxAll(material.stream(timestampOffset: offset), chunkSizes: [333])
        let packets = elements.packets
        #expect(packets.count == material.packets.count)
        for (ours, original) in zip(packets, material.packets) {
            #expect(ours.dts.milliseconds == original.dts.milliseconds + Int64(offset))
            #expect(ours.pts.milliseconds - ours.dts.milliseconds == original.pts.milliseconds - original.dts.milliseconds)
        }
        #expect(packets.last!.dts.milliseconds > Int64(UInt32.max))
    }

    @Test func unsupportedCodecsAreRecognisedAndReportedOnce() throws {
        var writer = FLVWriter()
        for timestamp in stride(from: UInt32(0), to: 200, by: 40) {
            // VVC (no decoder in this libavcodec) and an unknown FourCC must not be misread as anything else.
            writer.writeTag(type: 9, timestamp: timestamp, body: [0x91] + Array("vvc1".utf8) + [0, 0, 0, 1, 2, 3])
            writer.writeTag(type: 9, timestamp: timestamp, body: [0x91] + Array("wxyz".utf8) + [1, 2, 3])
            writer.writeTag(type: 8, timestamp: timestamp, body: [0x91] + Array("mp4x".utf8) + [1, 2, 3])
            writer.writeTag(type: 8, timestamp: timestamp, body: [0xB6, 1, 2, 3])  // Speex
            writer.writeTag(type: 9, timestamp: timestamp, body: [0x22, 1, 2, 3])  // Sorenson H.263
        }
        let elements = try demuxAll(writer.bytes)
        #expect(elements.packets.isEmpty)
        let messages = elements.warnings.filter { $0.code == .unsupportedCodec }.map(\.message)
        #expect(messages.contains { $0.contains("vvc1") && $0.contains("no VVC decoder") })
        #expect(messages.contains { $0.contains("wxyz") })
        #expect(messages.contains { $0.contains("audio FourCC 'mp4x'") })
        #expect(messages.contains { $0.contains("sound format 11") })
        #expect(messages.contains { $0.contains("codec id 2") })
        // Reported when the codec changes, not once per tag.
        #expect(messages.count <= 5 * 5)
        #expect(messages.count < elements.count)
    }

    @Test func aNewSequenceHeaderMidStreamIsAConfigurationChange() throws {
        let first = try Material.load(.h264AAC)
        let second = try Material.load(.videoOnly)
        var writer = FLVWriter()
        writer.writeVideo(codecID: 7, packetType: .sequenceHeader, keyframe: true, timestamp: 0, payload: first.video.extradata)
        // A GOP-cache server repeats the same header: not a change.
        writer.writeVideo(codecID: 7, packetType: .sequenceHeader, keyframe: true, timestamp: 0, payload: first.video.extradata)
        for packet in first.packets.prefix(10) where packet.kind == .video { writer.write(packet) }
        writer.writeVideo(codecID: 7, packetType: .sequenceHeader, keyframe: true, timestamp: 500, payload: second.video.extradata)
        for packet in second.packets.prefix(10) { writer.write(packet, timestampOffset: 500) }
        let elements = try demuxAll(writer.bytes)
        let sizes = elements.compactMap { if case .videoConfiguration(let c) = $0 { [c.width, c.height] } else { nil } }
        #expect(sizes == [[320, 240], [318, 238]])
        #expect(elements.warnings.isEmpty)
    }

    @Test func scriptTagsBecomeMetadataOrDataMessages() throws {
        var writer = FLVWriter()
        writer.writeScript(name: "@setDataFrame", [.string("onMetaData"), .ecmaArray([
            AMF0Property("width", .number(1920)), AMF0Property("videocodecid", .string("hvc1")),
            AMF0Property("encoder", .string("obs")), AMF0Property("stereo", .boolean(true)),
        ])])
        writer.writeScript(name: "onTextData", [.object([AMF0Property("text", .string("hello"))])], timestamp: 1200)
        writer.writeScript(name: "onCuePoint", [.object([AMF0Property("name", .string("ad"))])], timestamp: 1300)
        var bomb: [UInt8] = [0x02, 0, 1, 0x61]
        for _ in 0..<10_000 { bomb += [0x03, 0x00, 0x01, 0x61] }
        writer.writeTag(type: 18, timestamp: 1400, body: bomb)
        let elements = try demuxAll(writer.bytes, chunkSizes: [5])
        let metadata = try #require(elements.compactMap { if case .metadata(let m) = $0 { m } else { nil } }.first)
        #expect(metadata.width == 1920 && metadata.encoder == "obs" && metadata.stereo == true)
        #expect(metadata.videoCodec == .hevc && metadata.videoCodecID == 1_752_589_105)
        let messages = elements.compactMap { if case .dataMessage(let m) = $0 { m } else { nil } }
        #expect(messages.map(\.name) == ["onTextData", "onCuePoint"])
        #expect(messages.first?.arguments.first?["text"] == .string("hello"))
        #expect(messages.first?.timestamp == MediaTimestamp(milliseconds: 1200))
        #expect(elements.warnings.map(\.code) == [.amfNestingTooDeep])
    }
}
