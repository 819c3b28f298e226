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
    /// The CEA-608 captions ffmpeg finds in `path`'s video (`-f lavfi movie=F[out+subcc]`, its `cc_dec`), as
    /// SRT: start and end in ms and the text, tags removed.
    public static func captions(_ path: String) throws -> [(start: Int64, end: Int64, text: String)] {
        let escaped = path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ":", with: "\\:")
        let output = try ExternalTool.check(
            "ffmpeg", ["-v", "error", "-nostdin", "-f", "lavfi", "-i", "movie=\(escaped)[out+subcc]", "-map", "0:1", "-f", "srt", "-"])
        let text = String(decoding: output.standardOutput, as: UTF8.self)
        func milliseconds(_ stamp: Substring) -> Int64 {
            let parts = stamp.split { $0 == ":" || $0 == "," }.compactMap { Int64($0) }
            guard parts.count == 4 else { return -1 }
            return ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000 + parts[3]
        }
        return text.components(separatedBy: "\n\n").compactMap { block in
            let lines = block.split(separator: "\n")
            guard lines.count >= 3, let arrow = lines[1].range(of: " --> ") else { return nil }
            let body = lines[2...].joined(separator: "\n")
                .replacingOccurrences(of: #"<[^>]*>|\{[^}]*\}"#, with: "", options: .regularExpression)
            return (milliseconds(lines[1][..<arrow.lowerBound]), milliseconds(lines[1][arrow.upperBound...]), body)
        }
    }

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

/// One stream of a file as ffprobe reads it, packet bytes included: the elementary source an Enhanced RTMP
/// fixture is written from (IVF, Ogg, FLAC, raw AC-3, MP4 for the AV1 configuration record).
public struct ElementaryStream: Sendable {
    public struct Packet: Sendable {
        /// Milliseconds.
        public var pts: Int64
        public var dts: Int64
        public var isKeyframe: Bool
        public var data: [UInt8]
    }

    public var codecName: String
    /// The demuxer's codec configuration (av1C, the Opus ID header, FLAC's STREAMINFO); empty when none.
    public var extradata: [UInt8]
    public var sampleRate: Int
    public var channels: Int
    public var packets: [Packet]

    /// Reads the first stream of `path` with `ffprobe -show_data`.
    public static func read(_ path: String) throws -> ElementaryStream {
        let output = try ExternalTool.check(
            "ffprobe",
            ["-v", "error", "-select_streams", "0", "-show_streams", "-show_packets", "-show_data", "-show_entries",
                "stream=codec_name,extradata,time_base,sample_rate,channels:packet=pts,dts,flags,data", "-of", "json",
                path])
        struct Document: Decodable {
            struct Stream: Decodable {
                var codec_name: String
                var extradata: String?
                var time_base: String
                var sample_rate: String?
                var channels: Int?
            }
            struct Packet: Decodable {
                var pts: Int64?
                var dts: Int64?
                var flags: String
                var data: String
            }
            var streams: [Stream]
            var packets: [Packet]
        }
        let document = try JSONDecoder().decode(Document.self, from: output.standardOutput)
        guard let stream = document.streams.first else {
            throw ExternalTool.Failure(command: ["ffprobe", path], status: 0, standardError: "no stream")
        }
        let base = stream.time_base.split(separator: "/").compactMap { Int64($0) }
        // Floor, not truncation: Opus starts at minus its pre-skip, and the steps must stay even across zero.
        let milliseconds = { (value: Int64) -> Int64 in
            guard base.count == 2 else { return value }
            let scaled = value * 1000 * base[0]
            return scaled >= 0 ? scaled / base[1] : -((-scaled + base[1] - 1) / base[1])
        }
        return ElementaryStream(
            codecName: stream.codec_name, extradata: hexDump(stream.extradata ?? ""),
            sampleRate: Int(stream.sample_rate ?? "") ?? 0, channels: stream.channels ?? 0,
            packets: document.packets.map {
                let dts = $0.dts ?? $0.pts ?? 0
                return Packet(
                    pts: milliseconds($0.pts ?? dts), dts: milliseconds(dts), isKeyframe: $0.flags.hasPrefix("K"),
                    data: hexDump($0.data))
            })
    }

    /// The bytes of ffprobe's hex dump (`00000000: 0a0b 0000 …  ascii`).
    private static func hexDump(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let hex = line[line.index(after: colon)...].prefix(41)
            for group in hex.split(separator: " ") {
                var index = group.startIndex
                while let next = group.index(index, offsetBy: 2, limitedBy: group.endIndex), index < group.endIndex {
                    if let byte = UInt8(group[index..<next], radix: 16) { bytes.append(byte) }
                    index = next
                }
            }
        }
        return bytes
    }
}

/// PyAV's FFmpeg 8 reading an FLV file (`Tests/tools/pyav-flv`): the independent reader that keeps the
/// Enhanced RTMP fixtures honest, since the FFmpeg here (5.1) reads none of Enhanced RTMP v2.
public enum IndependentReader {
    public struct Stream: Decodable, Sendable, Hashable {
        public var type: String
        public var codec: String
        public var id: Int
        public var frames: Int
        public var errors: Int
        public var width: Int?
        public var height: Int?
        public var channels: Int?
    }

    private struct Report: Decodable {
        var streams: [Stream]
    }

    /// The streams PyAV finds in `path`, with their decoded frame counts. Throws when PyAV is missing.
    public static func streams(_ path: String) throws -> [Stream] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tests/tools/pyav-flv").path
        let output = try ExternalTool.check("python3", [script, path])
        return try JSONDecoder().decode(Report.self, from: output.standardOutput).streams
    }
}
