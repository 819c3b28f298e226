import LivePlayCore

/// Turns one complete tag body into elements; remembers what it needs across tags (timestamps, each track's
/// codec configuration, which tracks play, what it has already warned about).
///
/// Every stream is tracks: a legacy tag or a single-track Enhanced RTMP message is track 0 of its media type,
/// a multitrack message (Enhanced RTMP v2) names its tracks. One video and one audio track are *active*: only
/// their configurations and packets come out, so everything downstream sees one stream of each. The others are
/// followed (their configurations kept) and listed in ``FLVElement/tracks(_:)``, so a switch needs no
/// reconnect: a video switch waits for the new track's next keyframe, an audio switch takes its next packet.
struct FLVTagParser: Sendable {
    let maximumAMFDepth: Int
    var timestamps = MediaTimestamp.Unwrapper()
    var videoTracks: [UInt8: VideoTrack] = [:]
    var audioTracks: [UInt8: AudioTrack] = [:]
    var activeVideo: UInt8?
    var activeAudio: UInt8?
    /// The tracks the user asked for; the lowest id plays until the asked-for one is there.
    var requestedVideo: UInt8?
    var requestedAudio: UInt8?
    /// Set by the first multitrack message: from then on the track list is reported when it changes.
    var isMultitrack = false
    var reportedTracks: [FLVTrack] = []
    var reportedFingerprint: Int?
    /// `onMetaData`'s per-track descriptions (`videoTrackIdInfoMap`, `audioTrackIdInfoMap`), by kind and id.
    var trackDescriptions: [MediaKind: [UInt8: AMF0Value]] = [:]
    var reportedUnsupportedVideo: String?
    var reportedUnsupportedAudio: String?
    var reportedModExTypes: Set<UInt8> = []
    var sawVideoPacket = false
    var audioIsSilent = false
    /// The timestamp of the last audio packet that went out: a switch does not repeat an instant already heard.
    var lastAudioTimestamp: MediaTimestamp?
    /// Every track's packets go out, not only the playing ones'.
    let allTracks: Bool

    struct VideoTrack {
        var codec: VideoCodec
        /// The sequence start as received (its absence matters to VP8 / VP9, which can do without).
        var record: [UInt8]?
        var configuration: VideoCodecConfiguration?
        var reportedMissingConfiguration = false
    }

    struct AudioTrack {
        var codec: AudioCodec
        var header: [UInt8]?
        var configuration: AudioCodecConfiguration?
        var multichannel: FLVMultichannelConfig?
        var reportedMissingConfiguration = false
    }

    /// One track's part of a message: its codec, packet type and body.
    struct Unit<FourCC> {
        var track: UInt8
        var fourCC: FourCC
        var body: ArraySlice<UInt8>
    }

    /// Where packets' payloads come from: arrays given back after decoding, when the demuxer's owner has a pool.
    var payloads: PayloadPool?

    init(maximumAMFDepth: Int, videoTrack: UInt8? = nil, audioTrack: UInt8? = nil, allTracks: Bool = false) {
        self.maximumAMFDepth = maximumAMFDepth
        self.allTracks = allTracks
        requestedVideo = videoTrack
        requestedAudio = audioTrack
    }

    /// Asks for a track (nil: the default, the lowest id). Video moves at the track's next keyframe, audio at its
    /// next packet; until then the current track plays on.
    mutating func select(_ kind: MediaKind, track: UInt8?) {
        switch kind {
        case .video: requestedVideo = track
        case .audio: requestedAudio = track
        }
    }

    /// A packet's payload: `body` copied, into an array given back if there is one.
    func payload(_ body: ArraySlice<UInt8>) -> [UInt8] {
        payloads?.payload(body) ?? Array(body)
    }

    mutating func parse(
        type: FLVTagType, wireTimestamp: UInt32, body: ArraySlice<UInt8>, offset: Int64,
        into elements: inout [FLVElement]
    ) {
        let timestamp = timestamps.unwrap(wireTimestamp)
        guard !body.isEmpty else {
            // Zero-length tags carry nothing (some servers send them as keep-alives), except that an empty
            // audio message is Enhanced RTMP's "silence": play out what is buffered, then run on the wall clock.
            if type == .audio, !audioIsSilent {
                audioIsSilent = true
                elements.append(.endOfSequence(.audio))
            }
            return
        }
        var reader = TagBodyReader(body)
        switch type {
        case .video: parseVideo(&reader, timestamp: timestamp, offset: offset, into: &elements)
        case .audio: parseAudio(&reader, timestamp: timestamp, offset: offset, into: &elements)
        case .script: parseScript(Array(body), timestamp: timestamp, offset: offset, into: &elements)
        }
        reportTracksIfChanged(into: &elements)
    }

    // MARK: - Script data (§E.4.4)

    private mutating func parseScript(
        _ body: [UInt8], timestamp: MediaTimestamp, offset: Int64, into elements: inout [FLVElement]
    ) {
        var decoder = AMF0Decoder(body, maximumDepth: maximumAMFDepth, baseOffset: offset + 11)
        do {
            var values = try decoder.decodeAll()
            guard case .string(var name) = values.first else {
                elements.append(.warning(FLVError(.malformedTag, "script tag without a handler name", offset: offset)))
                return
            }
            values.removeFirst()
            // RTMP publishers wrap metadata as @setDataFrame("onMetaData", {...}).
            if name == "@setDataFrame", case .string(let inner) = values.first {
                name = inner
                values.removeFirst()
            }
            if name == "onMetaData", let properties = values.first?.properties {
                elements.append(.metadata(FLVMetadata(values: properties)))
                for (kind, key) in [(MediaKind.video, "videoTrackIdInfoMap"), (.audio, "audioTrackIdInfoMap")] {
                    for entry in values.first?[key]?.properties ?? [] {
                        guard let id = UInt8(entry.key) else { continue }
                        trackDescriptions[kind, default: [:]][id] = entry.value
                    }
                }
            } else {
                elements.append(.dataMessage(FLVDataMessage(name: name, arguments: values, timestamp: timestamp)))
            }
        } catch {
            elements.append(.warning(error))
        }
    }

    func decodeDataMessage(_ body: [UInt8], timestamp: MediaTimestamp, offset: Int64) -> FLVDataMessage? {
        var decoder = AMF0Decoder(body, maximumDepth: maximumAMFDepth, baseOffset: offset)
        guard let values = try? decoder.decodeAll(), case .string(let name) = values.first else { return nil }
        return FLVDataMessage(name: name, arguments: Array(values.dropFirst()), timestamp: timestamp)
    }
}

/// Reads a tag body in place: codec header fields straight from the demuxer's buffer, the payload as a slice of
/// it, so each packet's bytes are copied once, into the packet, and reading a tag allocates nothing else.
struct TagBodyReader {
    private let body: ArraySlice<UInt8>
    /// Index of the next unread byte, in `body`'s indices.
    private var position: Int

    init(_ body: ArraySlice<UInt8>) {
        self.body = body
        position = body.startIndex
    }

    mutating func readUInt8() -> UInt8? {
        read(1).map { body[$0] }
    }

    mutating func readUInt32() -> UInt32? {
        read(4).map { bigEndian($0, 4) }
    }

    mutating func readUInt16() -> UInt16? {
        read(2).map { UInt16(bigEndian($0, 2)) }
    }

    mutating func readUInt24() -> UInt32? {
        read(3).map { bigEndian($0, 3) }
    }

    /// The next `count` bytes as a slice of the body; nil when fewer remain.
    mutating func readBytes(_ count: Int) -> ArraySlice<UInt8>? {
        read(count).map { body[$0..<$0 + count] }
    }

    var isAtEnd: Bool { position == body.endIndex }

    mutating func readInt24() -> Int32? {
        read(3).map { Int32(bitPattern: bigEndian($0, 3) << 8) >> 8 }
    }

    /// Everything after the fields read so far.
    mutating func readRest() -> ArraySlice<UInt8> {
        defer { position = body.endIndex }
        return body[position...]
    }

    /// The `count` bytes at `index`, big-endian.
    private func bigEndian(_ index: Int, _ count: Int) -> UInt32 {
        var value: UInt32 = 0
        var next = index
        while next < index + count {
            value = value << 8 | UInt32(body[next])
            next += 1
        }
        return value
    }

    /// The index of the next `count` bytes, consumed; nil when the body is shorter.
    private mutating func read(_ count: Int) -> Int? {
        guard body.endIndex - position >= count else { return nil }
        defer { position += count }
        return position
    }
}
