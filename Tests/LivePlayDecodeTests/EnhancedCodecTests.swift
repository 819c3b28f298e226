import LivePlay
import LivePlayDecode
import LivePlayTesting
import Testing

/// Every Enhanced RTMP v2 FourCC codec, from a real encode written by the project's FLV writer: decoded as ffmpeg
/// decodes the elementary source, and read to the same streams and frame counts by an independent reader.
@Suite struct EnhancedCodecTests {
    @Test(arguments: [EnhancedFixture.Codec.av1, .vp9, .vp8, .h264])
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
        // ffmpeg trims what the source container says is encoder delay and padding (Opus pre-skip, the MP3
        // LAME tag, MP4's edit list) from the first and last frames; FLV carries no such field. Every frame in
        // between is sample-exact, and nothing is missing at the start.
        let interior = Array(expected.dropFirst().dropLast())
        let start = try #require(ours.firstIndex(of: interior[0]), "\(codec): no decoded frame equals ffmpeg's second")
        #expect(start <= 2)
        #expect(Array(ours[start..<min(ours.count, start + interior.count)]) == interior)
        if [.flac, .ac3, .eac3].contains(codec) { #expect(ours == expected) }
        #expect(decoded.audio.first?.channels == 2)
        let streams = try IndependentReader.streams(fixture.path)
        #expect(streams.map(\.codec) == [fixture.source.codecName])
        #expect(streams.first?.frames == decoded.audio.count)
        #expect(streams.first?.errors == 0)
    }
}
