import LivePlayCore
import LivePlayFLV
import LivePlayTesting
import Testing

/// The demuxer's packet list equals ffprobe's, exactly, for every file ffmpeg can read; and the
/// output does not depend on how the bytes were chunked.
@Suite struct FLVDemuxerOracleTests {
    static func probePackets(_ elements: [FLVElement]) -> [ProbePacket] {
        elements.packets.map {
            ProbePacket(
                stream: $0.kind.rawValue, dts: $0.dts.milliseconds, pts: $0.pts.milliseconds,
                isKeyframe: $0.isKeyframe, size: $0.size)
        }
    }

    @Test(arguments: Fixture.allCases)
    func packetsEqualFFprobe(_ fixture: Fixture) throws {
        let path = try fixture.path()
        let elements = try demuxAll(try Fixtures.bytes(path), chunkSizes: [64 << 10])
        let expected = try Oracle.packets(path)
        #expect(!expected.isEmpty)
        let ours = Self.probePackets(elements)
        #expect(ours.count == expected.count)
        for (index, (mine, theirs)) in zip(ours, expected).enumerated() where mine != theirs {
            Issue.record("packet \(index): ours \(mine), ffprobe \(theirs)")
            break
        }
        #expect(elements.warnings.isEmpty, "unexpected warnings: \(elements.warnings)")
    }

    @Test(arguments: HEVCFixture.Dialect.allCases)
    func hevcPacketsEqualWhatWasWritten(_ dialect: HEVCFixture.Dialect) throws {
        let fixture = try HEVCFixture.make(dialect)
        let elements = try demuxAll(try Fixtures.bytes(fixture.path), chunkSizes: [4093])
        #expect(Self.probePackets(elements) == fixture.expectedPackets)
        #expect(fixture.expectedPackets.contains { $0.pts != $0.dts }, "fixture must exercise composition time")
        let configurations = elements.compactMap { if case .videoConfiguration(let c) = $0 { c } else { nil } }
        let configuration = try #require(configurations.first)
        #expect(configurations.count == 1)
        #expect(configuration.codec == .hevc)
        #expect(configuration.width == 318 && configuration.height == 238)
        #expect(configuration.nalLengthSize == 4)
        #expect(elements.warnings.isEmpty, "unexpected warnings: \(elements.warnings)")
    }

    @Test(arguments: [Fixture.h264BFramesAAC, .h264MP3])
    func chunkingDoesNotChangeOutput(_ fixture: Fixture) throws {
        let bytes = try Fixtures.bytes(try fixture.path())
        let whole = try demuxAll(bytes)
        #expect(whole.packets.count > 50)
        for chunking in [[1], [2, 3, 5, 7], [13], [101, 4093], [65_537]] {
            #expect(try demuxAll(bytes, chunkSizes: chunking) == whole, "chunk sizes \(chunking)")
        }
    }

    @Test func streamDescriptionComesFromHeadersAndSequenceHeaders() throws {
        let elements = try demuxAll(try Fixtures.bytes(try Fixture.videoOnly.path()))
        guard case .header(let header) = elements.first else {
            Issue.record("first element is not the header")
            return
        }
        #expect(header.hasVideo && !header.hasAudio)
        let video = try #require(elements.compactMap { if case .videoConfiguration(let c) = $0 { c } else { nil } }.first)
        // 318x238 is coded as 320x240 with a cropping window.
        #expect(video.codec == .h264 && video.width == 318 && video.height == 238)
        let metadata = try #require(elements.compactMap { if case .metadata(let m) = $0 { m } else { nil } }.first)
        #expect(metadata.width == 318 && metadata.frameRate == 30 && metadata.videoCodec == .h264)

        let audioOnly = try demuxAll(try Fixtures.bytes(try Fixture.audioOnly.path()))
        let audio = try #require(audioOnly.compactMap { if case .audioConfiguration(let c) = $0 { c } else { nil } }.first)
        #expect(audio.codec == .aac && audio.sampleRate == 48000 && audio.channels == 1 && audio.objectType == 2)

        let mp3 = try demuxAll(try Fixtures.bytes(try Fixture.h264MP3.path()))
        let mp3Audio = try #require(mp3.compactMap { if case .audioConfiguration(let c) = $0 { c } else { nil } }.first)
        #expect(mp3Audio.codec == .mp3 && mp3Audio.sampleRate == 44100)
    }
}
