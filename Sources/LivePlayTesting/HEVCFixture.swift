import Foundation
import LivePlayFLV

/// HEVC-in-FLV test streams in both dialects found in the wild, built by ``FLVWriter`` from an x265
/// stream, since Debian's ffmpeg 5.1 cannot mux HEVC into FLV.
///
/// Recipe: ffmpeg encodes `testsrc2` with libx265 (B-frames on, so composition times are real) into an
/// MP4 (`-tag:v hvc1`, ms time scale); ffprobe lists its samples (timestamps, flags, byte positions);
/// the samples are already length-prefixed NAL units, exactly FLV's payload. The hvcC is rebuilt
/// from the in-band VPS/SPS/PPS (`repeat-headers=1`) with the project's own record writer.
public struct HEVCFixture: Sendable {
    public enum Dialect: String, Sendable, CaseIterable {
        /// Codec id 12 with the AVC tag layout (SRS, ksvc, Chinese CDNs).
        case legacyCodecID12 = "hevc-id12"
        /// Enhanced RTMP v1: IsExHeader, FourCC `hvc1`, CodedFrames / CodedFramesX.
        case enhancedRTMP = "hevc-ertmp"
    }

    /// The FLV file.
    public var path: String
    /// The MP4 it was made from, for ffmpeg's `framemd5`.
    public var sourcePath: String
    /// The packets the FLV carries, as a correct demuxer must list them.
    public var expectedPackets: [ProbePacket]

    public static func make(_ dialect: Dialect) throws -> HEVCFixture {
        let source = try Fixtures.make(
            name: "hevc-source", extension: "mp4",
            ["-f", "lavfi", "-i", "testsrc2=size=318x238:rate=25", "-t", "2", "-c:v", "libx265", "-preset", "fast",
                "-x265-params", "log-level=error:repeat-headers=1:keyint=25:min-keyint=25:bframes=3",
                "-tag:v", "hvc1", "-video_track_timescale", "1000", "-f", "mp4"])
        let samples = try Oracle.samples(source)
        let file = try Fixtures.bytes(source)
        let shift = -(samples.map(\.dts).min() ?? 0)
        var writer = FLVWriter(hasAudio: false, hasVideo: true)
        writer.writeMetadata([
            AMF0Property("width", .number(318)), AMF0Property("height", .number(238)),
            AMF0Property("framerate", .number(25)),
            AMF0Property("videocodecid", .number(dialect == .enhancedRTMP ? 1_752_589_105 : 12)),
        ])
        var expected: [ProbePacket] = []
        var configured = false
        for sample in samples {
            let payload = Array(file[Int(sample.position)..<Int(sample.position) + sample.size])
            let dts = UInt32(sample.dts + shift)
            let compositionTime = Int32(sample.pts - sample.dts)
            if !configured {
                let record = try hevcRecord(fromKeyframe: payload)
                switch dialect {
                case .legacyCodecID12:
                    writer.writeVideo(codecID: 12, packetType: .sequenceHeader, keyframe: true, timestamp: 0, payload: record)
                case .enhancedRTMP:
                    writer.writeExtendedVideo(
                        fourCC: .hvc1, packetType: .sequenceStart, keyframe: true, timestamp: 0, payload: record)
                }
                configured = true
            }
            switch dialect {
            case .legacyCodecID12:
                writer.writeVideo(
                    codecID: 12, packetType: .nalu, keyframe: sample.isKeyframe, timestamp: dts,
                    compositionTime: compositionTime, payload: payload)
            case .enhancedRTMP:
                // Both coded-frame packet types occur in the wild; CodedFramesX when the offset is zero.
                writer.writeExtendedVideo(
                    fourCC: .hvc1, packetType: compositionTime == 0 ? .codedFramesX : .codedFrames,
                    keyframe: sample.isKeyframe, timestamp: dts, compositionTime: compositionTime, payload: payload)
            }
            expected.append(
                ProbePacket(
                    stream: "video", dts: Int64(dts), pts: Int64(dts) + Int64(compositionTime),
                    isKeyframe: sample.isKeyframe, size: payload.count))
        }
        let path = "\(Fixtures.directory)/\(dialect.rawValue)-\(UUID().uuidString).flv"
        try Data(writer.bytes).write(to: URL(fileURLWithPath: path))
        return HEVCFixture(path: path, sourcePath: source, expectedPackets: expected)
    }

    /// Builds the hvcC from the parameter sets carried in a keyframe's 4-byte-length-prefixed NAL units.
    static func hevcRecord(fromKeyframe payload: [UInt8]) throws -> [UInt8] {
        var sets: [Int: [[UInt8]]] = [:]
        var offset = 0
        while offset + 4 <= payload.count {
            let length = payload[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            guard length > 0, offset + length <= payload.count else { break }
            let unit = Array(payload[offset..<offset + length])
            sets[Int(unit[0] >> 1) & 0x3F, default: []].append(unit)
            offset += length
        }
        let record = try HEVCDecoderConfigurationRecord(
            videoParameterSets: sets[32] ?? [], sequenceParameterSets: sets[33] ?? [],
            pictureParameterSets: sets[34] ?? [], nalLengthSize: 4)
        return record.serialized()
    }
}

/// A sample of an MP4 track as ffprobe lists it, with its byte position in the file.
struct MP4Sample {
    var dts: Int64
    var pts: Int64
    var isKeyframe: Bool
    var size: Int
    var position: Int64
}

extension Oracle {
    static func samples(_ path: String) throws -> [MP4Sample] {
        let output = try ExternalTool.check(
            "ffprobe",
            ["-v", "error", "-select_streams", "v:0", "-show_packets", "-show_entries", "packet=pts,dts,flags,size,pos",
                "-of", "json", path])
        struct Document: Decodable {
            struct Packet: Decodable {
                var pts: Int64
                var dts: Int64
                var flags: String
                var size: String
                var pos: String
            }
            var packets: [Packet]
        }
        return try JSONDecoder().decode(Document.self, from: output.standardOutput).packets.map {
            MP4Sample(
                dts: $0.dts, pts: $0.pts, isKeyframe: $0.flags.hasPrefix("K"), size: Int($0.size) ?? 0,
                position: Int64($0.pos) ?? 0)
        }
    }
}
