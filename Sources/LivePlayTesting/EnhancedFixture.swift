import Foundation
public import LivePlayCore
import LivePlayFLV

/// Enhanced RTMP v2 test streams, one per FourCC codec, written by ``FLVWriter`` from a real encode, since
/// Debian's ffmpeg 5.1 cannot mux any of them into FLV.
///
/// Recipe: the ffmpeg CLI encodes `testsrc2` or `sine` into the codec's own elementary container (IVF, Ogg,
/// FLAC, raw AC-3 / E-AC-3, MP3; MP4 for AAC and H.264, whose configuration records live there); ffprobe lists
/// its packets with their bytes (``ElementaryStream``); the writer puts them into SequenceStart and
/// CodedFrames messages. ffmpeg decoding the elementary source is the oracle the decoded stream is held to.
public struct EnhancedFixture: Sendable {
    public enum Codec: String, Sendable, CaseIterable {
        case av1, vp9, vp8, h264, hevc, opus, flac, ac3, eac3, aac, mp3

        public var kind: MediaKind {
            switch self {
            case .av1, .vp9, .vp8, .h264, .hevc: .video
            case .opus, .flac, .ac3, .eac3, .aac, .mp3: .audio
            }
        }

        /// The codec as the demuxer names it, for video.
        public var videoCodec: VideoCodec? {
            switch self {
            case .av1: .av1
            case .vp9: .vp9
            case .vp8: .vp8
            case .h264: .h264
            case .hevc: .hevc
            case .opus, .flac, .ac3, .eac3, .aac, .mp3: nil
            }
        }

        /// The FourCC the stream is written with.
        public var fourCC: UInt32 {
            switch self {
            case .av1: FLVVideoFourCC.av01.rawValue
            case .vp9: FLVVideoFourCC.vp09.rawValue
            case .vp8: FLVVideoFourCC.vp08.rawValue
            case .h264: FLVVideoFourCC.avc1.rawValue
            case .hevc: FLVVideoFourCC.hvc1.rawValue
            case .opus: FLVAudioFourCC.opus.rawValue
            case .flac: FLVAudioFourCC.flac.rawValue
            case .ac3: FLVAudioFourCC.ac3.rawValue
            case .eac3: FLVAudioFourCC.eac3.rawValue
            case .aac: FLVAudioFourCC.mp4a.rawValue
            case .mp3: FLVAudioFourCC.mp3.rawValue
            }
        }

        /// The encoder and container of the elementary source; video has a keyframe every `gop` frames.
        fileprivate func encoding(gop: Int) -> (arguments: [String], container: String) {
            let g = ["-g", String(gop)]
            return switch self {
            case .av1: (["-c:v", "libaom-av1", "-cpu-used", "8"] + g + ["-pix_fmt", "yuv420p"], "ivf")
            case .vp9: (["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"] + g, "ivf")
            case .vp8: (["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8"] + g, "ivf")
            case .h264: (["-c:v", "libx264", "-preset", "veryfast", "-bf", "2"] + g + ["-video_track_timescale", "1000"], "mp4")
            // The hvcC comes from the MP4, as an encoder's muxer writes it.
            case .hevc:
                (["-c:v", "libx265", "-preset", "fast", "-x265-params", "log-level=error:bframes=3:keyint=\(gop)",
                    "-tag:v", "hvc1", "-video_track_timescale", "1000"], "mp4")
            case .opus: (["-c:a", "libopus", "-b:a", "96k"], "ogg")
            case .flac: (["-c:a", "flac"], "flac")
            case .ac3: (["-c:a", "ac3", "-b:a", "192k"], "ac3")
            case .eac3: (["-c:a", "eac3", "-b:a", "192k"], "eac3")
            case .aac: (["-c:a", "aac", "-b:a", "128k"], "mp4")
            case .mp3: (["-c:a", "libmp3lame", "-b:a", "128k"], "mp3")
            }
        }
    }

    /// The FLV file.
    public var path: String
    /// The elementary source, for ffmpeg's `framemd5`.
    public var sourcePath: String
    public var source: ElementaryStream

    /// `channels` and `layout` apply to audio (`5.1` for the down-mix checks); `tone` tells tracks apart; video
    /// is `size` at `fps` with a keyframe a second.
    public static func make(
        _ codec: Codec, seconds: Int = 2, channels: Int = 2, layout: String? = nil, tone: Int = 440,
        size: String = "320x240", fps: Int = 25
    ) throws -> EnhancedFixture {
        let (sourcePath, source) = try elementary(
            codec, seconds: seconds, channels: channels, layout: layout, tone: tone, size: size, fps: fps)
        var writer = FLVWriter(hasAudio: codec.kind == .audio, hasVideo: codec.kind == .video)
        write(source, codec, track: nil, into: &writer)
        let path = try Fixtures.write(writer.bytes, name: "ertmp-\(codec.rawValue)")
        return EnhancedFixture(path: path, sourcePath: sourcePath, source: source)
    }

    /// The elementary source of `codec`: its path and packets.
    public static func elementary(
        _ codec: Codec, seconds: Int = 2, channels: Int = 2, layout: String? = nil, tone: Int = 440,
        size: String = "320x240", fps: Int = 25
    ) throws -> (String, ElementaryStream) {
        let input =
            codec.kind == .video
            ? ["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=\(fps)"]
            : ["-f", "lavfi", "-i", "sine=frequency=\(tone):sample_rate=48000"]
                + ["-af", "aformat=channel_layouts=\(layout ?? (channels == 1 ? "mono" : "stereo"))"]
        let (arguments, container) = codec.encoding(gop: fps)
        let sourcePath = try Fixtures.make(
            name: "ertmp-\(codec.rawValue)-source", extension: container,
            input + ["-t", String(seconds)] + arguments + ["-f", container])
        // libaom's IVF has temporal delimiters and no av1C; the same packets remuxed into MP4 have the av1C and
        // lose the delimiters, as AV1's ISOBMFF binding (and so Enhanced RTMP) wants them.
        let packetsPath =
            codec == .av1
            ? try Fixtures.make(name: "ertmp-av1-remux", extension: "mp4", ["-i", sourcePath, "-c", "copy", "-f", "mp4"])
            : sourcePath
        return (sourcePath, try ElementaryStream.read(packetsPath))
    }

    /// Writes `source`'s sequence start and coded frames as `codec` into `writer`; `track` makes each message a
    /// OneTrack multitrack message of that id.
    public static func write(_ source: ElementaryStream, _ codec: Codec, track: UInt8?, into writer: inout FLVWriter) {
        let multitrack: FLVMultitrackType? = track == nil ? nil : .oneTrack
        let id = track ?? 0
        if let start = sequenceStart(source, codec) {
            let tracks = [FLVWriter.Track(fourCC: codec.fourCC, id: id, payload: start)]
            if codec.kind == .video {
                writer.writeEnhancedVideo(
                    packetType: FLVExtendedVideoPacketType.sequenceStart.rawValue, timestamp: 0,
                    multitrack: multitrack, tracks: tracks)
            } else {
                writer.writeEnhancedAudio(packetType: .sequenceStart, timestamp: 0, multitrack: multitrack, tracks: tracks)
            }
        }
        let shift = -(source.packets.map(\.dts).min() ?? 0)
        for packet in source.packets {
            let timestamp = UInt32(packet.dts + shift)
            if codec.kind == .video {
                let payload = FLVWriter.codedFrames(
                    codec.videoCodec!, compositionTime: Int32(packet.pts - packet.dts), packet.data)
                writer.writeEnhancedVideo(
                    packetType: FLVExtendedVideoPacketType.codedFrames.rawValue, frameType: packet.isKeyframe ? 1 : 2,
                    timestamp: timestamp, multitrack: multitrack,
                    tracks: [FLVWriter.Track(fourCC: codec.fourCC, id: id, payload: payload)])
            } else {
                writer.writeEnhancedAudio(
                    packetType: .codedFrames, timestamp: timestamp, multitrack: multitrack,
                    tracks: [FLVWriter.Track(fourCC: codec.fourCC, id: id, payload: packet.data)])
            }
        }
    }

    /// A multitrack FLV of `tracks` (codec, elementary source, track id): the sequence starts, then the coded
    /// frames in time order. Video frames of the same instant and keyframe flag go into one
    /// ManyTracksManyCodecs message, audio frames of the same instant and codec into one ManyTracks message;
    /// the rest into OneTrack messages.
    public static func multitrack(_ tracks: [(codec: Codec, source: ElementaryStream, id: UInt8)], name: String) throws
        -> String
    {
        var writer = FLVWriter()
        for track in tracks {
            guard let start = sequenceStart(track.source, track.codec) else { continue }
            let part = [FLVWriter.Track(fourCC: track.codec.fourCC, id: track.id, payload: start)]
            if track.codec.kind == .video {
                writer.writeEnhancedVideo(packetType: 0, timestamp: 0, multitrack: .oneTrack, tracks: part)
            } else {
                writer.writeEnhancedAudio(packetType: .sequenceStart, timestamp: 0, multitrack: .oneTrack, tracks: part)
            }
        }
        struct Frame {
            var codec: Codec
            var id: UInt8
            var packet: ElementaryStream.Packet

            var order: (Int64, Int, UInt8) { (packet.dts, codec.kind == .video ? 0 : 1, id) }

            /// Whether `other` can share this frame's message.
            func groups(with other: Frame) -> Bool {
                guard other.packet.dts == packet.dts, other.codec.kind == codec.kind else { return false }
                if codec.kind == .video { return other.packet.isKeyframe == packet.isKeyframe }
                return other.codec == codec
            }
        }
        var frames: [Frame] = []
        for track in tracks {
            let shift = -(track.source.packets.map(\.dts).min() ?? 0)
            for packet in track.source.packets {
                var shifted = packet
                shifted.dts += shift
                shifted.pts += shift
                frames.append(Frame(codec: track.codec, id: track.id, packet: shifted))
            }
        }
        frames.sort { $0.order < $1.order }
        var index = 0
        while index < frames.count {
            let first = frames[index]
            var group = [first]
            while index + group.count < frames.count, first.groups(with: frames[index + group.count]) {
                group.append(frames[index + group.count])
            }
            index += group.count
            let timestamp = UInt32(first.packet.dts)
            if first.codec.kind == .video {
                let parts = group.map { frame in
                    FLVWriter.Track(
                        fourCC: frame.codec.fourCC, id: frame.id,
                        payload: FLVWriter.codedFrames(
                            frame.codec.videoCodec!, compositionTime: Int32(frame.packet.pts - frame.packet.dts),
                            frame.packet.data))
                }
                writer.writeEnhancedVideo(
                    packetType: 1, frameType: first.packet.isKeyframe ? 1 : 2, timestamp: timestamp,
                    multitrack: group.count > 1 ? .manyTracksManyCodecs : .oneTrack, tracks: parts)
            } else {
                let parts = group.map { FLVWriter.Track(fourCC: $0.codec.fourCC, id: $0.id, payload: $0.packet.data) }
                writer.writeEnhancedAudio(
                    packetType: .codedFrames, timestamp: timestamp, multitrack: group.count > 1 ? .manyTracks : .oneTrack,
                    tracks: parts)
            }
        }
        return try Fixtures.write(writer.bytes, name: name)
    }

    /// The multitrack stream the tests share: AV1 320x240 (track 0) and VP9 256x144 (track 1) renditions of the
    /// same picture, and two Opus tracks at 440 Hz (0) and 880 Hz (1), `seconds` long, keyframes once a second.
    public struct Renditions: Sendable {
        public var path: String
        /// The elementary sources of video tracks 0 and 1, and of audio tracks 0 and 1.
        public var videoSources: [String]
        public var audioSources: [String]
        /// Indexes of the keyframes (the same in both renditions).
        public var keyframes: [Int]
    }

    public static func renditions(seconds: Int = 4) throws -> Renditions {
        let (av1Path, av1) = try elementary(.av1, seconds: seconds)
        let (vp9Path, vp9) = try elementary(.vp9, seconds: seconds, size: "256x144")
        let (lowPath, low) = try elementary(.opus, seconds: seconds, tone: 440)
        let (highPath, high) = try elementary(.opus, seconds: seconds, tone: 880)
        let path = try multitrack(
            [(.av1, av1, 0), (.vp9, vp9, 1), (.opus, low, 0), (.opus, high, 1)], name: "ertmp-multitrack")
        return Renditions(
            path: path, videoSources: [av1Path, vp9Path], audioSources: [lowPath, highPath],
            keyframes: vp9.packets.enumerated().filter(\.element.isKeyframe).map(\.offset))
    }

    /// What the SequenceStart carries, as the specification defines it per FourCC; nil for codecs without one.
    public static func sequenceStart(_ source: ElementaryStream, _ codec: Codec) -> [UInt8]? {
        switch codec {
        case .av1, .h264, .hevc, .opus, .aac: source.extradata
        // VP9: a VPCodecConfigurationRecord in the form FFmpeg's muxer writes (the vpcC box's version and
        // flags first): profile 0, level 2.1, 8-bit 4:2:0 (colocated), BT.709, no initialization data.
        case .vp9: [1, 0, 0, 0, 0, 21, 0x82, 1, 1, 1, 0, 0]
        // FLAC: the signature, a last-block header for STREAMINFO, then STREAMINFO.
        case .flac: Array("fLaC".utf8) + [0x80, 0, 0, 34] + source.extradata
        case .vp8, .ac3, .eac3, .mp3: nil
        }
    }
}
