import LivePlay
import LivePlayDecode
import LivePlayTesting
import Testing

/// Every Enhanced RTMP v2 FourCC codec, from a real encode written by the project's FLV writer: decoded as ffmpeg
/// decodes the elementary source, and read to the same streams and frame counts by an independent reader.
@Suite struct EnhancedCodecTests {
    @Test(arguments: [EnhancedFixture.Codec.av1, .vp9, .vp8, .h264, .hevc])
    func videoDecodesAsFFmpegDecodesTheSource(_ codec: EnhancedFixture.Codec) throws {
        let fixture = try EnhancedFixture.make(codec)
        let decoded = try Decoded(fixture.path)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        let expected = try Oracle.frameHashes(fixture.sourcePath, video: true)
        #expect(expected.count == fixture.source.packets.count)
        #expect(decoded.video.map { FrameHash(size: $0.packedSize, md5: $0.md5()) } == expected)
        #expect(decoded.video.first?.width == 320 && decoded.video.first?.height == 240)
        // FFmpeg 8 reads vp08 in FLV as nothing; every other FourCC as the same stream.
        guard codec != .vp8 else { return }
        let streams = try IndependentReader.streams(fixture.path)
        #expect(streams.map(\.codec) == [fixture.source.codecName])
        #expect(streams.first?.frames == decoded.video.count)
        #expect(streams.first?.errors == 0)
    }

    @Test(arguments: [EnhancedFixture.Codec.opus, .flac, .ac3, .eac3, .aac, .mp3])
    func soundDecodesAsFFmpegDecodesTheSource(_ codec: EnhancedFixture.Codec) throws {
        let fixture = try EnhancedFixture.make(codec)
        let decoded = try Decoded(fixture.path)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        let ours = decoded.audio.map { $0.md5(as: .s16le) }
        let expected = try Oracle.frameHashes(fixture.sourcePath, video: false).map(\.md5)
        #expect(expected.count > 15)
        try expectInterior(ours, equals: expected)
        if [.flac, .ac3, .eac3].contains(codec) { #expect(ours == expected) }
        #expect(decoded.audio.first?.channels == 2)
        let streams = try IndependentReader.streams(fixture.path)
        #expect(streams.map(\.codec) == [fixture.source.codecName])
        #expect(streams.first?.frames == decoded.audio.count)
        #expect(streams.first?.errors == 0)
    }
}

/// ffmpeg trims what the source container says is encoder delay and padding (Opus pre-skip, the MP3 LAME tag,
/// MP4's edit list) from the first and last frames; FLV carries no such field. Every frame in between is
/// sample-exact, and nothing is missing at the start.
func expectInterior(_ ours: [String], equals expected: [String]) throws {
    let interior = Array(expected.dropFirst().dropLast())
    let start = try #require(ours.firstIndex(of: interior[0]), "no decoded frame equals ffmpeg's second")
    #expect(start <= 2)
    #expect(Array(ours[start..<min(ours.count, start + interior.count)]) == interior)
}

/// A multitrack stream: AV1 and VP9 renditions of different sizes, two Opus tracks of different tones.
@Suite struct MultitrackDecodeTests {
    struct Material {
        var path: String
        var videoHashes: [[FrameHash]]
        var audioHashes: [[String]]
        var keyframes: [Int]
    }

    static func material() throws -> Material {
        let renditions = try EnhancedFixture.renditions()
        let av1Keyframes = try ElementaryStream.read(renditions.videoSources[0]).packets.enumerated()
        #expect(renditions.keyframes == av1Keyframes.filter(\.element.isKeyframe).map(\.offset))
        return Material(
            path: renditions.path,
            videoHashes: try renditions.videoSources.map { try Oracle.frameHashes($0, video: true) },
            audioHashes: try renditions.audioSources.map { try Oracle.frameHashes($0, video: false).map(\.md5) },
            keyframes: renditions.keyframes)
    }

    private func hashes(_ decoded: Decoded) -> [FrameHash] {
        decoded.video.map { FrameHash(size: $0.packedSize, md5: $0.md5()) }
    }

    @Test func theIndependentReaderSeesFourTracks() throws {
        let material = try Self.material()
        let streams = try IndependentReader.streams(material.path)
        #expect(streams.map(\.codec) == ["av1", "vp9", "opus", "opus"], "\(streams)")
        #expect(streams.prefix(2).map(\.frames) == material.videoHashes.map(\.count))
        #expect(streams.suffix(2).map(\.frames) == material.audioHashes.map(\.count))
        #expect(streams.allSatisfy { $0.errors == 0 })
        #expect(streams.prefix(2).map(\.width) == [320, 256])
    }

    @Test func theDefaultAndTheAskedForTracksDecodeAsTheirSources() throws {
        let material = try Self.material()
        let first = try Decoded(material.path)
        #expect(first.errors.isEmpty, "\(first.errors)")
        #expect(hashes(first) == material.videoHashes[0])
        let second = try Decoded(material.path, demuxer: FLVDemuxer.Configuration(videoTrack: 1, audioTrack: 1))
        #expect(second.errors.isEmpty, "\(second.errors)")
        #expect(hashes(second) == material.videoHashes[1])
        for (decoded, expected) in [(first, material.audioHashes[0]), (second, material.audioHashes[1])] {
            try expectInterior(decoded.audio.map { $0.md5(as: .s16le) }, equals: expected)
        }
    }

    @Test func aSwitchChangesThePictureAtTheNextKeyframeAndTheSoundWithoutAGap() throws {
        let material = try Self.material()
        let reader = try MediaReader(
            path: material.path,
            options: MediaReader.Options(decodes: true, decoder: DecoderOptions(threadCount: 1), chunkSize: 4096))
        var video: [FrameHash] = []
        var audio: [AudioFrame] = []
        var videoAtSwitch: Int?
        while let event = try reader.next() {
            switch event {
            case .videoFrame(let frame): video.append(FrameHash(size: frame.packedSize, md5: frame.md5()))
            case .audioFrame(let frame): audio.append(frame)
            case .decodeError(let kind, let error): Issue.record("\(kind): \(error)")
            case .hardware(let notice, _): Issue.record("no device was asked for: \(notice)")
            case .element: break
            }
            if videoAtSwitch == nil, video.count == 30 {
                videoAtSwitch = video.count
                reader.select(.video, track: 1)
                reader.select(.audio, track: 1)
            }
        }
        let cut = try #require(material.keyframes.first { $0 > 30 })
        #expect(video == Array(material.videoHashes[0][..<cut]) + material.videoHashes[1][cut...])
        // The sound goes on across the switch, each frame starting where the one before ended (the first is
        // shorter by the Opus pre-skip libavcodec trims), and is the higher tone after it.
        let gaps = zip(audio, audio.dropFirst()).map { before, after in
            after.pts.milliseconds - before.pts.milliseconds - Int64(before.sampleCount * 1000 / before.sampleRate)
        }
        #expect(gaps.allSatisfy { abs($0) <= 1 }, "\(gaps)")
        #expect(audio.count == material.audioHashes[0].count)
        // (ffmpeg trims the encoder's padding from the last frame, so that one is left out.)
        let tail = audio.suffix(20).dropLast().map { $0.md5(as: .s16le) }
        #expect(tail == Array(material.audioHashes[1].suffix(20).dropLast()))
    }
}
