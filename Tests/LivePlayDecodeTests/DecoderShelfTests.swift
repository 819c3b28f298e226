import LivePlay
import LivePlayDecode
import LivePlayTesting
import Testing

/// Video decoders of ended playbacks are kept for the next one with the same configuration, and decode as new ones do.
@Suite(.serialized) struct DecoderShelfTests {
    @Test func aShelvedDecoderIsTakenForTheSameConfigurationOnly() throws {
        let reader = try MediaReader(path: try Fixture.h264AAC.path(), options: MediaReader.Options(decodes: false))
        while reader.description.video == nil, try reader.next() != nil {}
        let configuration = try #require(reader.description.video)
        let options = DecoderOptions()
        let decoder = try DecoderShelf.video(configuration, options: options)
        DecoderShelf.shelve(decoder)
        #expect(try DecoderShelf.video(configuration, options: options) === decoder, "the same decoder again")
        DecoderShelf.shelve(decoder)
        let otherOptions = DecoderOptions(threadCount: 2)
        #expect(try DecoderShelf.video(configuration, options: otherOptions) !== decoder, "other options: a new one")
        _ = try DecoderShelf.video(configuration, options: options)
    }

    @Test func aFileDecodedAgainWithShelvedDecodersHashesAsFFmpegDoes() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let first = try Decoded(path)
        #expect(DecoderShelf.count >= 1, "the first reading's video decoder waits")
        let second = try Decoded(path)
        let expected = try Oracle.frameHashes(path, video: true)
        #expect(second.errors.isEmpty)
        #expect(second.video.map { FrameHash(size: $0.packedSize, md5: $0.md5()) } == expected)
        #expect(second.audio.map { $0.md5(as: .s16le) } == first.audio.map { $0.md5(as: .s16le) })
    }
}
