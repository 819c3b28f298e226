public import LivePlayCore
public import LivePlayFLV

/// What is known about a stream so far: built from the header, metadata and sequence headers as they
/// arrive (no probing phase), plus what the packets themselves show.
public struct StreamDescription: Sendable {
    public var header: FLVFileHeader?
    public var video: VideoCodecConfiguration?
    public var audio: AudioCodecConfiguration?
    public var metadata: FLVMetadata?
    /// A multitrack stream's tracks (Enhanced RTMP v2); empty for a stream of one track per kind.
    public var tracks: [FLVTrack] = []
    /// The latest Enhanced RTMP `colorInfo` (colour description, HDR levels); nil when none or reset.
    public var colorInfo: VideoColorInfo?
    public var videoPacketCount = 0
    public var audioPacketCount = 0
    public var keyframeCount = 0
    public var firstVideoTimestamp: MediaTimestamp?
    public var lastVideoTimestamp: MediaTimestamp?
    public var lastTimestamp: MediaTimestamp?
    public var warningCount = 0

    public init() {}

    /// Frames per second measured from decode timestamps (distinct frames over their span).
    public var measuredFrameRate: Double? {
        guard let first = firstVideoTimestamp, let last = lastVideoTimestamp, videoPacketCount > 1,
            last > first
        else { return nil }
        return Double(videoPacketCount - 1) * 1000 / Double(last.milliseconds - first.milliseconds)
    }

    /// The frame rate the metadata declares, else the measured one.
    public var frameRate: Double? { metadata?.frameRate ?? measuredFrameRate }

    public mutating func record(_ element: FLVElement) {
        switch element {
        case .header(let header): self.header = header
        case .videoConfiguration(let configuration): video = configuration
        case .audioConfiguration(let configuration): audio = configuration
        case .metadata(let metadata): self.metadata = metadata
        case .tracks(let tracks): self.tracks = tracks
        case .colorInfo(let info, _): colorInfo = info
        case .warning: warningCount += 1
        case .packet(let packet):
            lastTimestamp = max(lastTimestamp ?? packet.dts, packet.dts)
            switch packet.kind {
            case .video:
                videoPacketCount += 1
                if packet.isKeyframe { keyframeCount += 1 }
                if firstVideoTimestamp == nil { firstVideoTimestamp = packet.dts }
                lastVideoTimestamp = packet.dts
            case .audio:
                audioPacketCount += 1
            }
        case .dataMessage, .endOfSequence: break
        }
    }
}

extension FLVTrack {
    /// `video 1 av1 1280x720 (playing)`, `audio 0 opus 2ch 48000Hz`.
    public var summary: String {
        var words = ["\(kind.rawValue) \(id) \(codec)"]
        if let video { words.append("\(video.width)x\(video.height)") }
        if let audio { words.append("\(audio.channels)ch \(audio.sampleRate)Hz") }
        if let name { words.append("\"\(name)\"") }
        if let language { words.append("[\(language)]") }
        if let bitrateKbps { words.append("\(Int(bitrateKbps.rounded())) kbit/s") }
        if isActive { words.append("(playing)") }
        return words.joined(separator: " ")
    }
}
