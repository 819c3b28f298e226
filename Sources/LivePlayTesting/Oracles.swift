import Foundation

/// A packet as ffprobe lists it (`ffprobe -show_packets -of json`).
public struct ProbePacket: Hashable, Sendable, CustomStringConvertible {
    public var stream: String
    public var dts: Int64
    public var pts: Int64
    public var isKeyframe: Bool
    public var size: Int

    public init(stream: String, dts: Int64, pts: Int64, isKeyframe: Bool, size: Int) {
        self.stream = stream
        self.dts = dts
        self.pts = pts
        self.isKeyframe = isKeyframe
        self.size = size
    }

    public var description: String { "\(stream) dts \(dts) pts \(pts) key \(isKeyframe) size \(size)" }
}

/// One line of `ffmpeg -f framemd5`.
public struct FrameHash: Hashable, Sendable {
    public var size: Int
    public var md5: String

    public init(size: Int, md5: String) {
        self.size = size
        self.md5 = md5
    }
}

/// Answers from tools nobody here wrote: ffprobe's packet list and ffmpeg's frame hashes.
public enum Oracle {
    /// ffprobe's packet list, in file order, with timestamps in the FLV time base (ms).
    public static func packets(_ path: String) throws -> [ProbePacket] {
        let output = try ExternalTool.check(
            "ffprobe",
            ["-v", "error", "-show_packets", "-show_entries", "packet=codec_type,pts,dts,flags,size", "-of", "json",
                path])
        struct Document: Decodable {
            struct Packet: Decodable {
                var codec_type: String
                var pts: Int64?
                var dts: Int64?
                var flags: String
                var size: String
            }
            var packets: [Packet]
        }
        let document = try JSONDecoder().decode(Document.self, from: output.standardOutput)
        return document.packets.map {
            ProbePacket(
                stream: $0.codec_type, dts: $0.dts ?? 0, pts: $0.pts ?? $0.dts ?? 0,
                isKeyframe: $0.flags.hasPrefix("K"), size: Int($0.size) ?? -1)
        }
    }

    /// `ffmpeg -f framemd5` for one stream kind of `path`, in output order.
    /// - Parameter audioCodec: the PCM codec audio is hashed in (`pcm_s16le` is ffmpeg's default).
    public static func frameHashes(
        _ path: String, video: Bool, audioCodec: String = "pcm_s16le", inputArguments: [String] = []
    ) throws -> [FrameHash] {
        let streamArguments = video ? ["-an", "-fps_mode", "passthrough"] : ["-vn", "-c:a", audioCodec]
        let output = try ExternalTool.check(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-threads", "1"] + inputArguments + ["-i", path]
                + streamArguments + ["-f", "framemd5", "-"])
        return output.text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count >= 6, let size = Int(fields[4]) else { return nil }
            return FrameHash(size: size, md5: fields[5])
        }
    }
}
