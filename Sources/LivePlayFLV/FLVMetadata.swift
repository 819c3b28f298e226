public import LivePlayCore

/// The `onMetaData` script tag (§E.5): the well-known fields typed, everything as sent in ``values``.
///
/// Encoders disagree on types (numbers as strings, codec ids as FourCCs), so a field that does not
/// have its documented type is left `nil` rather than guessed; the raw value is still in ``values``.
public struct FLVMetadata: Sendable, Hashable {
    public var duration: Double?
    public var width: Double?
    public var height: Double?
    public var frameRate: Double?
    /// kbit/s, as encoders write it.
    public var videoDataRate: Double?
    public var audioDataRate: Double?
    /// The legacy codec id (7, 12…) or, for Enhanced RTMP, the FourCC as a number (`hvc1` = 1752589105).
    public var videoCodecID: Double?
    public var audioCodecID: Double?
    public var audioSampleRate: Double?
    public var audioSampleSize: Double?
    public var stereo: Bool?
    public var encoder: String?
    public var fileSize: Double?
    /// The `keyframes` object some muxers write (ffmpeg's `-flvflags add_keyframe_index`, yamdi,
    /// flvtool2): where each keyframe's tag starts in the file, for seeking by byte range. Entries whose time
    /// or position is not a finite, non-negative number within range are left out; sorted by time.
    public var keyframeIndex: [KeyframePosition]
    /// Every property in wire order.
    public var values: [AMF0Property]

    public init(values: [AMF0Property]) {
        self.values = values
        func number(_ key: String) -> Double? {
            values.first { $0.key == key }?.value.numberValue
        }
        duration = number("duration")
        width = number("width")
        height = number("height")
        frameRate = number("framerate") ?? number("videoframerate")
        videoDataRate = number("videodatarate")
        audioDataRate = number("audiodatarate")
        audioSampleRate = number("audiosamplerate")
        audioSampleSize = number("audiosamplesize")
        fileSize = number("filesize")
        stereo = values.first { $0.key == "stereo" }?.value.booleanValue
        encoder = values.first { $0.key == "encoder" }?.value.stringValue
        videoCodecID = Self.codecID(values.first { $0.key == "videocodecid" }?.value)
        keyframeIndex = Self.keyframeIndex(values.first { $0.key == "keyframes" }?.value)
        audioCodecID = Self.codecID(values.first { $0.key == "audiocodecid" }?.value)
    }

    private static func keyframeIndex(_ value: AMF0Value?) -> [KeyframePosition] {
        guard case .strictArray(let times)? = value?["times"], case .strictArray(let positions)? = value?["filepositions"]
        else { return [] }
        let index = zip(times, positions).compactMap { time, position -> KeyframePosition? in
            // Bounded before converting: a position beyond Int64 would trap.
            guard let time = time.numberValue, let position = position.numberValue, time.isFinite, time >= 0,
                position >= 0, position < 9.0e18
            else { return nil }
            return KeyframePosition(time: time, position: Int64(position))
        }
        return index.sorted { $0.time < $1.time }
    }

    /// A codec id sent as a number, or as a FourCC string (`"hvc1"`), as a number.
    private static func codecID(_ value: AMF0Value?) -> Double? {
        if let number = value?.numberValue { return number }
        guard let string = value?.stringValue, string.utf8.count == 4 else { return nil }
        return Double(string.utf8.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// The video codec that `videocodecid` names, when it names one liveplay knows.
    public var videoCodec: VideoCodec? {
        guard let id = videoCodecID, id >= 0, id <= Double(UInt32.max) else { return nil }
        switch UInt32(id) {
        case UInt32(FLVVideoCodecID.avc.rawValue): return .h264
        case UInt32(FLVVideoCodecID.hevcLegacy.rawValue): return .hevc
        case let fourCC: return FLVVideoFourCC(rawValue: fourCC)?.codec
        }
    }
}

/// A script-data tag other than `onMetaData` (`onTextData`, `onCuePoint`, `onCaptionInfo`, …).
public struct FLVDataMessage: Sendable, Hashable {
    /// The handler name: the first AMF0 string of the tag.
    public var name: String
    /// The values that follow the name.
    public var arguments: [AMF0Value]
    public var timestamp: MediaTimestamp

    public init(name: String, arguments: [AMF0Value], timestamp: MediaTimestamp) {
        self.name = name
        self.arguments = arguments
        self.timestamp = timestamp
    }
}

/// What the FLV file header (§E.2) says.
public struct FLVFileHeader: Sendable, Hashable {
    public var version: UInt8
    public var hasAudio: Bool
    public var hasVideo: Bool
    public var dataOffset: UInt32
}

/// One thing the demuxer found, in stream order.
public enum FLVElement: Sendable, Hashable {
    case header(FLVFileHeader)
    /// A video sequence header; a second one mid-stream is a configuration change (new size, new codec).
    case videoConfiguration(VideoCodecConfiguration)
    case audioConfiguration(AudioCodecConfiguration)
    case packet(EncodedPacket)
    case metadata(FLVMetadata)
    case dataMessage(FLVDataMessage)
    /// The encoder signalled the end of a sequence. For audio this is also Enhanced RTMP's silence (an empty
    /// audio message): play out what is buffered, then let the picture run on the wall clock until sound returns.
    case endOfSequence(MediaKind)
    /// A multitrack stream's tracks (Enhanced RTMP v2), whenever one appears, its configuration changes or the
    /// playing one changes. Only the playing track of each kind has its configurations and packets handed out.
    case tracks([FLVTrack])
    /// Enhanced RTMP video metadata: `colorInfo` for the pictures from `timestamp` on; nil resets it (Undefined or
    /// an empty object).
    case colorInfo(VideoColorInfo?, at: MediaTimestamp)
    /// A recoverable problem; demuxing goes on.
    case warning(FLVError)
}

/// One track of a multitrack stream.
public struct FLVTrack: Sendable, Hashable {
    public var kind: MediaKind
    /// The track id of the stream (0 is the publisher's default by the specification's convention).
    public var id: UInt8
    /// The codec's name as ffmpeg spells it (`av1`, `opus`, …).
    public var codec: String
    /// The track's configuration, once its sequence start (or first keyframe) came.
    public var video: VideoCodecConfiguration?
    public var audio: AudioCodecConfiguration?
    /// Whether this is the track that plays.
    public var isActive: Bool
    /// What `onMetaData`'s `videoTrackIdInfoMap` / `audioTrackIdInfoMap` say of it, when they do: a name
    /// (`name` or `title`), a language (`language` or `lang`), its bitrate (`videodatarate` / `audiodatarate`, kbit/s).
    public var name: String?
    public var language: String?
    public var bitrateKbps: Double?

    /// The FourCC the track's codec has in Enhanced RTMP (`av01`, `Opus`).
    public var fourCC: String? {
        switch kind {
        case .video: VideoCodec(rawValue: codec).flatMap(FLVVideoFourCC.init(codec:))?.name
        case .audio: AudioCodec(rawValue: codec).flatMap(FLVAudioFourCC.init(codec:))?.name
        }
    }

    public init(
        kind: MediaKind, id: UInt8, codec: String, video: VideoCodecConfiguration?, audio: AudioCodecConfiguration?,
        isActive: Bool
    ) {
        self.kind = kind
        self.id = id
        self.codec = codec
        self.video = video
        self.audio = audio
        self.isActive = isActive
    }

    /// Takes what a track map entry says of this track.
    mutating func describe(with entry: AMF0Value) {
        name = entry["name"]?.stringValue ?? entry["title"]?.stringValue
        language = entry["language"]?.stringValue ?? entry["lang"]?.stringValue
        bitrateKbps = entry[kind == .video ? "videodatarate" : "audiodatarate"]?.numberValue
    }
}

/// One entry of a file's keyframe index: a keyframe's time (seconds) and the byte offset of its tag.
public struct KeyframePosition: Sendable, Hashable {
    public var time: Double
    public var position: Int64

    public init(time: Double, position: Int64) {
        self.time = time
        self.position = position
    }
}
