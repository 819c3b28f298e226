import LivePlay
import LivePlayFLV
import LivePlayTesting
import Testing

/// Enhanced RTMP's `colorInfo` metadata reaches the stream description, the listener (2028 with
/// `enableMetaData`) and each picture's timing, from where it stands in the stream until it is reset.
@Suite struct ColorInfoTests {
    static func colorInfo(_ value: AMF0Value) -> [UInt8] {
        var encoder = AMF0Encoder()
        encoder.encode(.string("colorInfo"))
        encoder.encode(value)
        return encoder.bytes
    }

    @Test func colorInfoTravelsWithThePicturesItDescribes() async throws {
        let elements = try demuxAll(try Fixtures.bytes(try Fixture.h264AAC.path()))
        let video = try #require(elements.compactMap { if case .videoConfiguration(let c) = $0 { c } else { nil } }.first)
        let packets = elements.packets.filter { $0.kind == .video }
        var writer = FLVWriter(hasAudio: false)
        writer.writeVideo(codecID: 7, packetType: .sequenceHeader, keyframe: true, timestamp: 0, payload: video.extradata)
        let pq = AMF0Value.object([
            AMF0Property("colorConfig", .object([
                AMF0Property("bitDepth", .number(10)), AMF0Property("colorPrimaries", .number(9)),
                AMF0Property("transferCharacteristics", .number(16)), AMF0Property("matrixCoefficients", .number(9)),
            ])),
            AMF0Property("hdrCll", .object([AMF0Property("maxCLL", .number(1000)), AMF0Property("maxFall", .number(400))])),
            AMF0Property("hdrMdcv", .object([AMF0Property("maxLuminance", .number(1000)), AMF0Property("minLuminance", .number(0.005))])),
        ])
        let avc1 = FLVVideoFourCC.avc1.rawValue
        writer.writeEnhancedVideo(packetType: 4, timestamp: 0, tracks: [FLVWriter.Track(fourCC: avc1, payload: Self.colorInfo(pq))])
        let resetAt = try #require(packets.first { $0.dts.milliseconds >= 1000 }).dts.milliseconds
        for packet in packets {
            if packet.dts.milliseconds == resetAt {
                // The reset the specification recommends: Undefined.
                writer.writeEnhancedVideo(
                    packetType: 4, timestamp: UInt32(resetAt), tracks: [FLVWriter.Track(fourCC: avc1, payload: Self.colorInfo(.undefined))])
            }
            writer.write(packet)
        }
        let path = try Fixtures.write(writer.bytes, name: "colorinfo")
        let sink = RecordingSink()
        var configuration = LivePlayConfiguration()
        configuration.enableMetaData = true
        let recording = await SessionRecording.record(path, configuration: configuration, limit: .seconds(20), sink: sink)
        let reports = recording.events.filter { $0.code == .getMetadata }
        #expect(reports.map(\.message) == ["colorInfo", "colorInfo reset"])
        #expect(reports.first?.parameters["transferCharacteristics"] == .int(16))
        #expect(reports.first?.parameters["hdr"] == .bool(true))
        #expect(reports.first?.parameters["maxLuminance"] == .double(1000))
        let pictures = sink.pictures
        #expect(pictures.count == packets.count)
        let before = pictures.filter { $0.timing.pts.milliseconds < resetAt }
        let after = pictures.filter { $0.timing.pts.milliseconds >= resetAt }
        #expect(!before.isEmpty && !after.isEmpty)
        #expect(before.allSatisfy { $0.timing.colorInfo?.transferCharacteristics == 16 && $0.timing.colorInfo?.maxContentLightLevel == 1000 })
        #expect(after.allSatisfy { $0.timing.colorInfo == nil })
    }
}
