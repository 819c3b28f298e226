import LivePlay
import LivePlayDecode
import LivePlayTesting
import Testing

@Suite struct DecodeErrorTests {
    /// Video packets of a GOP-25, B-frame-free file, and the clean decode's hashes.
    static func material() throws -> (VideoCodecConfiguration, [EncodedPacket], [String]) {
        let path = try Fixture.h264AAC.path()
        let reader = try MediaReader(path: path)
        var configuration: VideoCodecConfiguration?
        var packets: [EncodedPacket] = []
        while let event = try reader.next() {
            if case .element(.videoConfiguration(let c)) = event { configuration = c }
            if case .element(.packet(let p)) = event, p.kind == .video { packets.append(p) }
        }
        let clean = try Oracle.frameHashes(path, video: true).map(\.md5)
        return (try #require(configuration), packets, clean)
    }

    @Test func aPictureSizeBeyondTheLimitIsRefusedBeforeAnythingIsAllocated() throws {
        let (configuration, packets, _) = try Self.material()
        var huge = configuration
        (huge.width, huge.height) = (16384, 16384)
        #expect(throws: DecodeError.self) { try VideoDecoder(configuration: huge) }
        let limited = DecoderOptions(maximumPixels: 320 * 240 - 1)
        #expect(throws: DecodeError.self) { try VideoDecoder(configuration: configuration, options: limited) }
        // Parameter sets that lie about the size get past that check; libavcodec's own limit then turns
        // every oversized picture into an error instead of an allocation.
        var lying = configuration
        (lying.width, lying.height) = (64, 48)
        let decoder = try VideoDecoder(configuration: lying, options: DecoderOptions(maximumPixels: 64 * 48))
        var frames = 0
        var errors = 0
        for packet in packets.prefix(10) {
            let output = decoder.decode(packet)
            frames += output.frames.count
            errors += output.errors.count
        }
        #expect(frames == 0 && errors > 0, "\(frames) frames, \(errors) errors")
        // The default limit plays the fixture.
        #expect(try VideoDecoder(configuration: configuration).decode(packets[0]).errors.isEmpty)
    }

    @Test func aCorruptPacketIsReportedAndDecodingResumesAtTheNextKeyframe() throws {
        let (configuration, packets, clean) = try Self.material()
        let keyframes = packets.indices.filter { packets[$0].isKeyframe }
        #expect(keyframes == [0, 25, 50])
        var damaged = packets
        // Garbage over a P-frame's slice data, keeping its NAL length prefix and header byte.
        for index in damaged[10].payload.indices.dropFirst(5) {
            damaged[10].payload[index] = UInt8(truncatingIfNeeded: index &* 131 &+ 7)
        }
        let decoder = try VideoDecoder(configuration: configuration)
        var hashes: [String] = []
        var errors: [DecodeError] = []
        var skipped = 0
        for packet in damaged {
            let output = decoder.decode(packet)
            hashes += output.frames.map { $0.md5() }
            errors += output.errors
            if output.skipped { skipped += 1 }
        }
        let tail = decoder.flush()
        hashes += tail.frames.map { $0.md5() }
        #expect(!errors.isEmpty, "the corrupt packet must be reported")
        #expect(errors.allSatisfy { $0.code == .invalidData || $0.code == .corruptFrame })
        #expect(skipped > 0 && skipped < 25)
        // Frames before the damage, and everything from the next keyframe on, are exactly ffmpeg's.
        #expect(Array(hashes.prefix(10)) == Array(clean.prefix(10)))
        #expect(Array(hashes.suffix(50)) == Array(clean.suffix(50)))
        #expect(hashes.count == 10 + 50)
    }

    @Test func aDecoderStartedMidGOPWaitsForAKeyframe() throws {
        let (configuration, packets, clean) = try Self.material()
        let decoder = try VideoDecoder(configuration: configuration)
        #expect(decoder.isAwaitingKeyframe)
        var hashes: [String] = []
        for packet in packets.dropFirst(5) {
            hashes += decoder.decode(packet).frames.map { $0.md5() }
        }
        hashes += decoder.flush().frames.map { $0.md5() }
        #expect(decoder.skippedPacketCount == 20)
        #expect(hashes == Array(clean.dropFirst(25)))
    }

    @Test func garbageAudioIsReportedAndTheNextPacketDecodes() throws {
        let path = try Fixture.audioOnly.path()
        let reader = try MediaReader(path: path)
        var configuration: AudioCodecConfiguration?
        var packets: [EncodedPacket] = []
        while let event = try reader.next() {
            if case .element(.audioConfiguration(let c)) = event { configuration = c }
            if case .element(.packet(let p)) = event { packets.append(p) }
        }
        let decoder = try AudioDecoder(configuration: try #require(configuration))
        var damaged = packets
        damaged[20].payload = Array(repeating: 0xFF, count: 200)
        var errors: [DecodeError] = []
        var frames = 0
        for packet in damaged {
            let output = decoder.decode(packet)
            errors += output.errors
            frames += output.frames.count
        }
        #expect(!errors.isEmpty)
        #expect(frames >= packets.count - 3)
    }

    @Test func anUnopenableConfigurationIsAClearError() {
        // VVC is recognised in Enhanced RTMP, but Debian's libavcodec has no decoder for it.
        let vvc = VideoCodecConfiguration(
            codec: .vvc, extradata: [], width: 1, height: 1, profile: 0, level: 0, nalLengthSize: 4)
        #expect(throws: DecodeError(.decoderNotFound, "this libavcodec has no vvc decoder")) {
            try VideoDecoder(configuration: vvc)
        }
    }
}
