import Foundation

/// Test media made at test time by the ffmpeg CLI from lavfi `testsrc2` and `sine`, cached per user
/// in the temporary directory (named by a hash of the command, so a changed recipe makes a new file).
public enum Fixture: String, CaseIterable, Sendable {
    /// H.264 (no B-frames) + AAC, 320x240 at 25 fps, 1 s GOP, 3 s.
    case h264AAC = "h264-aac"
    /// H.264 High with B-frames (negative and positive composition times) + AAC.
    case h264BFramesAAC = "h264-bframes-aac"
    /// Video only, odd size (cropped SPS), 30 fps.
    case videoOnly = "video-only"
    /// AAC only, mono 48 kHz.
    case audioOnly = "audio-only"
    /// AAC only, a 440 Hz tone at half scale (−6 dBFS), mono 44.1 kHz, 30 s: a radio stream's shape, for the window.
    case longAudioOnly = "audio-only-30s"
    /// H.264 + MP3.
    case h264MP3 = "h264-mp3"
    /// H.264 (no B-frames) + AAC 64 kbit/s mono, 320x240 at 25 fps, 2 s GOP, 10 s: long enough for seconds of
    /// steady playback.
    case longH264AAC = "h264-aac-10s"
    /// A/V sync: black 320x240 at 30 fps with a white picture for the first 0.1 s of every second, and a 1 kHz beep
    /// for the same 0.1 s (silence otherwise), AAC 44.1 kHz mono; 20 s, 1 s GOP.
    case flashBeep = "flash-beep"
    /// Two renditions of one source for `switchStream`, stamped alike: 320×240 at 600 kbit/s and 160×120 at
    /// 150 kbit/s, 30 fps, keyframes every 30 frames in both (no scene cuts), AAC; 10 s.
    case renditionHigh = "rendition-high"
    case renditionLow = "rendition-low"
    /// The low rendition with its timestamps 3 s later: not aligned with the high one.
    case renditionShifted = "rendition-shifted"
    /// A fast stream: 1920×1080 at 60 fps, 8 Mbit/s (CABAC, no B-frames), 1 s GOP, AAC; 6 s, 360 frames. Its
    /// pictures take about as long to decode here as they last.
    case fast1080p60 = "h264-1080p60-8m"

    /// The ffmpeg arguments that make it (output path appended).
    public var ffmpegArguments: [String] {
        let video = ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25"]
        let audio = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100"]
        let x264 = ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p"]
        switch self {
        case .h264AAC:
            return video + audio + ["-t", "3"] + x264 + ["-bf", "0", "-g", "25", "-c:a", "aac", "-b:a", "64k"]
        case .h264BFramesAAC:
            return video + audio + ["-t", "3"] + x264
                + ["-profile:v", "high", "-bf", "3", "-g", "25", "-c:a", "aac", "-b:a", "64k"]
        case .videoOnly:
            return ["-f", "lavfi", "-i", "testsrc2=size=318x238:rate=30", "-t", "2"] + x264 + ["-g", "30", "-an"]
        case .audioOnly:
            return ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000", "-t", "2", "-ac", "1",
                "-c:a", "aac", "-vn"]
        case .longAudioOnly:
            // lavfi's sine is at an eighth of full scale: four times that is half.
            return audio + ["-t", "30", "-af", "volume=4", "-ac", "1", "-c:a", "aac", "-b:a", "64k", "-vn"]
        case .longH264AAC:
            return video + audio + ["-t", "10"] + x264 + ["-bf", "0", "-g", "50", "-c:a", "aac", "-b:a", "64k"]
        case .flashBeep:
            return [
                "-f", "lavfi", "-i", "color=c=black:size=320x240:rate=30", "-f", "lavfi", "-i",
                "color=c=white:size=320x240:rate=30", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=44100",
                "-filter_complex",
                "[0][1]overlay=enable='lt(mod(t,1),0.1)'[v];[2]volume=volume=0:enable='gte(mod(t,1),0.1)'[a]",
                "-map", "[v]", "-map", "[a]", "-t", "20", "-ac", "1",
            ] + x264 + ["-bf", "0", "-g", "30", "-c:a", "aac", "-b:a", "96k"]
        case .renditionHigh, .renditionLow, .renditionShifted:
            let high = self == .renditionHigh
            return ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i",
                "sine=frequency=440:sample_rate=44100", "-t", "10"]
                + (high ? [] : ["-vf", "scale=160:120"]) + x264
                + ["-bf", "0", "-g", "30", "-keyint_min", "30", "-sc_threshold", "0", "-b:v", high ? "600k" : "150k",
                    "-c:a", "aac", "-b:a", "64k"]
                + (self == .renditionShifted ? ["-output_ts_offset", "3"] : [])
        case .fast1080p60:
            return ["-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=60"] + audio + ["-t", "6"] + x264
                + ["-bf", "0", "-g", "60", "-b:v", "8M", "-maxrate", "8M", "-bufsize", "8M", "-c:a", "aac", "-b:a", "64k"]
        case .h264MP3:
            return video + audio + ["-t", "2"] + x264 + ["-bf", "0", "-g", "25", "-c:a", "libmp3lame", "-b:a", "64k"]
        }
    }

    /// The fixture's path, generating it first if needed.
    public func path() throws -> String {
        try Fixtures.make(name: rawValue, extension: "flv", ffmpegArguments + ["-f", "flv"])
    }
}

public enum Fixtures {
    /// Where generated media is cached.
    public static let directory: String = {
        let base = ProcessInfo.processInfo.environment["LIVEPLAY_FIXTURES"]
            ?? (NSTemporaryDirectory() + "liveplay-fixtures-\(getuid())")
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        return base
    }()

    /// Runs `ffmpeg <arguments> <output>` once and returns the output path; concurrent callers are safe
    /// (each writes a private file and renames it into place).
    public static func make(name: String, extension fileExtension: String, _ arguments: [String]) throws -> String {
        let key = stableHash(arguments.joined(separator: "\u{1}"))
        let path = "\(directory)/\(name)-\(key).\(fileExtension)"
        if FileManager.default.fileExists(atPath: path) { return path }
        let temporary = "\(directory)/.\(name)-\(UUID().uuidString).\(fileExtension)"
        try ExternalTool.check(
            "ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", "-nostdin"] + arguments + [temporary])
        _ = rename(temporary, path)
        return path
    }

    /// FNV-1a, so cache names do not depend on Swift's per-process hash seed.
    static func stableHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    public static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Writes bytes to a new temporary file and returns its path.
    /// `bytes`, an FLV file, with every AVC / AAC sequence header left out: what a server that never sends them
    /// to a player joining late delivers.
    public static func withoutSequenceHeaders(_ bytes: [UInt8]) -> [UInt8] {
        var output = Array(bytes.prefix(13))
        var offset = 13
        while offset + 11 <= bytes.count {
            let size = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let end = offset + 11 + size + 4
            guard end <= bytes.count else { break }
            let (type, body) = (bytes[offset], offset + 11)
            let isVideoHeader = type == 9 && size > 1 && bytes[body] & 0x0F == 7 && bytes[body + 1] == 0
            let isAudioHeader = type == 8 && size > 1 && bytes[body] >> 4 == 10 && bytes[body + 1] == 0
            if !isVideoHeader && !isAudioHeader { output += bytes[offset..<end] }
            offset = end
        }
        return output
    }

    public static func write(_ bytes: [UInt8], name: String) throws -> String {
        let path = "\(directory)/\(name)-\(UUID().uuidString).flv"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}
