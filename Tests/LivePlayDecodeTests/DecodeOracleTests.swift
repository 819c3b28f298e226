import LivePlay
import LivePlayDecode
import LivePlayTesting
import Testing

/// Everything a file decodes to, in output order.
struct Decoded {
    var video: [VideoFrame] = []
    var audio: [AudioFrame] = []
    var errors: [(MediaKind, DecodeError)] = []

    init(_ path: String, threads: Int = 1, demuxer: FLVDemuxer.Configuration = .init()) throws {
        let reader = try MediaReader(
            path: path,
            options: MediaReader.Options(decodes: true, decoder: DecoderOptions(threadCount: threads), demuxer: demuxer))
        while let event = try reader.next() {
            switch event {
            case .videoFrame(let frame): video.append(frame)
            case .audioFrame(let frame): audio.append(frame)
            case .decodeError(let kind, let error): errors.append((kind, error))
            case .hardware(let notice, _): Issue.record("no device was asked for: \(notice)")
            case .element: break
            }
        }
    }
}

/// Decoded frames hash exactly as ffmpeg's `framemd5` hashes them, in order.
@Suite struct DecodeOracleTests {
    @Test(arguments: [Fixture.h264AAC, .h264BFramesAAC, .videoOnly, .h264MP3])
    func videoFramesEqualFramemd5(_ fixture: Fixture) throws {
        let path = try fixture.path()
        let decoded = try Decoded(path)
        let expected = try Oracle.frameHashes(path, video: true)
        #expect(decoded.errors.isEmpty)
        #expect(!expected.isEmpty)
        #expect(decoded.video.map { FrameHash(size: $0.packedSize, md5: $0.md5()) } == expected)
    }

    @Test(arguments: [Fixture.h264AAC, .audioOnly, .h264MP3])
    func audioFramesEqualFramemd5(_ fixture: Fixture) throws {
        let path = try fixture.path()
        let decoded = try Decoded(path)
        #expect(decoded.errors.isEmpty)
        let s16 = try Oracle.frameHashes(path, video: false)
        #expect(!s16.isEmpty)
        #expect(decoded.audio.map { $0.md5(as: .s16le) } == s16.map(\.md5))
        let f32 = try Oracle.frameHashes(path, video: false, audioCodec: "pcm_f32le")
        #expect(decoded.audio.map { $0.md5(as: .f32le) } == f32.map(\.md5))
    }

    @Test(arguments: HEVCFixture.Dialect.allCases)
    func hevcFramesEqualFramemd5OfTheSource(_ dialect: HEVCFixture.Dialect) throws {
        let fixture = try HEVCFixture.make(dialect)
        let decoded = try Decoded(fixture.path)
        #expect(decoded.errors.isEmpty)
        let expected = try Oracle.frameHashes(fixture.sourcePath, video: true)
        #expect(expected.count == fixture.expectedPackets.count)
        #expect(decoded.video.map { FrameHash(size: $0.packedSize, md5: $0.md5()) } == expected)
        #expect(decoded.video.first?.width == 318 && decoded.video.first?.pixelFormat == "yuv420p")
    }

    @Test func threadedDecodingGivesTheSameFrames() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let single = try Decoded(path, threads: 1).video.map { $0.md5() }
        let threaded = try Decoded(path, threads: 2).video.map { $0.md5() }
        #expect(single.count == 75)
        #expect(threaded == single)
    }

    @Test func framesCarryTheirPresentationTimes() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let decoded = try Decoded(path)
        let times = decoded.video.map(\.pts.milliseconds)
        // Output is in presentation order: strictly increasing, one frame every 40 ms.
        #expect(times == times.sorted())
        #expect(Set(zip(times, times.dropFirst()).map { $1 - $0 }) == [40])
        #expect(decoded.audio.allSatisfy { $0.sampleRate == 44100 && $0.channels == 1 && $0.sampleCount == 1024 })
    }
}
