import Foundation
import LivePlayFLV
public import NIOCore

/// An FLV file prepared for looping live: the stream header, metadata and sequence headers that every
/// new client gets first, and the media tags that are paced out in real time.
///
/// Parsing is done once; bodies stay slices of the file's single buffer, so nothing is copied per client.
public struct LiveFLVProgram: Sendable {
    /// One media tag of the file (audio, video or a script data message after the metadata).
    public struct MediaTag: Sendable {
        public var type: UInt8
        /// The tag's timestamp in the file, in milliseconds.
        public var timestamp: UInt32
        public var body: ByteBuffer
        /// A video keyframe carrying coded frames: where a GOP, and a client joining from the cache, starts.
        public var isVideoKeyframe: Bool
    }

    /// The FLV header with DataOffset 9 and PreviousTagSize0: 13 bytes.
    public var streamHeader: ByteBuffer
    /// The body of the `onMetaData` script tag with `duration` and `filesize` removed (a live stream has
    /// neither), if the file has one.
    public var metadata: ByteBuffer?
    /// The video sequence headers before the first media (AVCDecoderConfigurationRecord, HEVC or Enhanced RTMP
    /// SequenceStart): one, or one per track of a multitrack stream. Every new viewer gets them all.
    public var videoSequenceHeaders: [ByteBuffer]
    /// The audio sequence headers before the first media (AAC AudioSpecificConfig, Enhanced RTMP SequenceStart).
    public var audioSequenceHeaders: [ByteBuffer]
    /// Media tags in file order. End-of-sequence tags are dropped: looping must not end the decoder's
    /// sequence (ffmpeg's FLV muxer writes one at the end of H.264 files).
    public var tags: [MediaTag]
    /// The whole file as read, for the finished-file (`Content-Length`) mode.
    public var fileBytes: ByteBuffer
    /// Lowest media timestamp in the file.
    public var firstTimestamp: UInt32
    /// Highest media timestamp in the file.
    public var lastTimestamp: UInt32
    /// The typical distance between video frames (audio frames for audio-only files), in milliseconds.
    public var frameInterval: UInt32

    public var hasVideo: Bool { !videoSequenceHeaders.isEmpty || tags.contains { $0.type == 9 } }

    /// How far timestamps advance per loop: the file's duration plus one frame interval, so the first tag
    /// of the next loop follows the last tag of this one as the next frame would.
    public var loopPeriod: UInt32 { lastTimestamp - firstTimestamp + frameInterval }

    public init(contentsOfFile path: String) throws(DemoError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DemoError(.readFailed, "cannot read '\(path)'")
        }
        try self.init(bytes: ByteBuffer(bytes: data))
    }

    public init(bytes: [UInt8]) throws(DemoError) {
        try self.init(bytes: ByteBuffer(bytes: bytes))
    }

    public init(bytes: ByteBuffer) throws(DemoError) {
        var splitter = FLVTagSplitter()
        splitter.append(bytes)
        var metadata: ByteBuffer?
        var videoSequenceHeaders: [ByteBuffer] = []
        var audioSequenceHeaders: [ByteBuffer] = []
        var tags: [MediaTag] = []
        while let tag = try splitter.nextTag() {
            guard let body = tag.body else { continue }
            switch Self.classify(type: tag.type, body: body) {
            case .metadata where metadata == nil:
                metadata = Self.liveMetadata(body)
            // Sequence headers before any media are the stream's; a later one is a change, sent where it is.
            case .videoSequenceHeader where tags.isEmpty:
                if !videoSequenceHeaders.contains(body) { videoSequenceHeaders.append(body) }
            case .audioSequenceHeader where tags.isEmpty:
                if !audioSequenceHeaders.contains(body) { audioSequenceHeaders.append(body) }
            case .endOfSequence:
                continue
            case let role:
                tags.append(
                    MediaTag(type: tag.type, timestamp: tag.timestamp, body: body, isVideoKeyframe: role == .keyframe))
            }
        }
        guard let header = splitter.fileHeader, !tags.isEmpty else {
            throw DemoError(.invalidFLV, "no media tags")
        }
        var streamHeader = ByteBuffer()
        streamHeader.writeBytes(Array("FLV".utf8))
        streamHeader.writeInteger(UInt8(1))
        streamHeader.writeInteger(header.getInteger(at: header.readerIndex + 4, as: UInt8.self)! & 0x05)
        streamHeader.writeInteger(UInt32(FLVTagSplitter.fileHeaderSize))
        streamHeader.writeInteger(UInt32(0))
        self.streamHeader = streamHeader
        self.metadata = metadata
        self.videoSequenceHeaders = videoSequenceHeaders
        self.audioSequenceHeaders = audioSequenceHeaders
        self.tags = tags
        self.fileBytes = bytes
        self.firstTimestamp = tags.map(\.timestamp).min()!
        self.lastTimestamp = tags.map(\.timestamp).max()!
        self.frameInterval = Self.typicalInterval(tags)
    }

    enum Role: Equatable {
        case metadata, videoSequenceHeader, audioSequenceHeader, endOfSequence, keyframe, media
    }

    /// An Enhanced RTMP v2 packet type with its ModEx wrappers (7) and multitrack header (`multitrack`: 6 for
    /// video, 5 for audio) unwrapped; nil when the header is cut short.
    static func exPacketType(_ first: UInt8, _ body: ByteBuffer, multitrack: UInt8) -> UInt8? {
        var packetType = first
        var index = body.readerIndex + 1
        while packetType == 7 {
            guard var size = body.getInteger(at: index, as: UInt8.self).map({ Int($0) + 1 }) else { return nil }
            index += 1
            if size == 256 {
                guard let wide = body.getInteger(at: index, as: UInt16.self) else { return nil }
                size = Int(wide) + 1
                index += 2
            }
            index += size
            guard let next = body.getInteger(at: index, as: UInt8.self) else { return nil }
            packetType = next & 0x0F
            index += 1
        }
        if packetType == multitrack {
            return body.getInteger(at: index, as: UInt8.self).map { $0 & 0x0F }
        }
        return packetType
    }

    /// What a tag is, from its first body bytes (§E.4.2.1, §E.4.3.1, Enhanced RTMP v1/v2).
    static func classify(type: UInt8, body: ByteBuffer) -> Role {
        let first = body.getInteger(at: body.readerIndex, as: UInt8.self) ?? 0
        let second = body.getInteger(at: body.readerIndex + 1, as: UInt8.self)
        switch type {
        case 18:
            var name = body
            guard name.readInteger(as: UInt8.self) == 2, let length = name.readInteger(as: UInt16.self),
                name.readString(length: Int(length)) == "onMetaData"
            else { return .media }
            return .metadata
        case 9:
            if first & 0x80 != 0 {
                // Enhanced RTMP: FrameType in bits 4-6, PacketType in bits 0-3 (behind ModEx and multitrack).
                switch exPacketType(first & 0x0F, body, multitrack: 6) {
                case 0: return .videoSequenceHeader
                case 2: return .endOfSequence
                case 1, 3: return (first >> 4) & 0x07 == 1 ? .keyframe : .media
                default: return .media
                }
            }
            let codecID = first & 0x0F
            if codecID == 7 || codecID == 12 {
                switch second {
                case 0: return .videoSequenceHeader
                case 2: return .endOfSequence
                default: break
                }
            }
            return first >> 4 == 1 ? .keyframe : .media
        case 8:
            let format = first >> 4
            if format == 10, second == 0 { return .audioSequenceHeader }
            if format == 9, exPacketType(first & 0x0F, body, multitrack: 5) == 0 { return .audioSequenceHeader }
            return .media
        default:
            return .media
        }
    }

    /// The metadata body without `duration` and `filesize`; the original if it does not decode.
    static func liveMetadata(_ body: ByteBuffer) -> ByteBuffer {
        var decoder = AMF0Decoder(Array(body.readableBytesView))
        guard let values = try? decoder.decodeAll(), values.count >= 2 else { return body }
        let dropped: Set<String> = ["duration", "filesize"]
        var encoder = AMF0Encoder()
        encoder.encode(values[0])
        switch values[1] {
        case .ecmaArray(let properties):
            encoder.encode(.ecmaArray(properties.filter { !dropped.contains($0.key) }))
        case .object(let properties):
            encoder.encode(.object(properties.filter { !dropped.contains($0.key) }))
        default:
            return body
        }
        for value in values.dropFirst(2) { encoder.encode(value) }
        return ByteBuffer(bytes: encoder.bytes)
    }

    /// The median positive distance between consecutive video timestamps (audio if there is no video).
    static func typicalInterval(_ tags: [MediaTag]) -> UInt32 {
        let video = tags.filter { $0.type == 9 }.map(\.timestamp)
        let track = video.count >= 2 ? video : tags.filter { $0.type == 8 }.map(\.timestamp)
        let deltas = zip(track, track.dropFirst()).compactMap { $1 > $0 ? $1 - $0 : nil }.sorted()
        guard !deltas.isEmpty else { return 40 }
        return min(max(deltas[deltas.count / 2], 1), 1000)
    }
}
