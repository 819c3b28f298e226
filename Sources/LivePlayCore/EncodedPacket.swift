/// One compressed access unit (a video frame or an audio frame), as the demuxer hands it on.
public struct EncodedPacket: Sendable, Hashable {
    public var kind: MediaKind
    /// Decode timestamp.
    public var dts: MediaTimestamp
    /// Presentation timestamp: `dts` plus the signed composition time offset.
    public var pts: MediaTimestamp
    public var isKeyframe: Bool
    /// The codec payload, exactly as ffprobe counts it: length-prefixed NAL units for H.264 / HEVC,
    /// a raw AAC frame, or an MP3 frame.
    public var payload: [UInt8]

    public init(kind: MediaKind, dts: MediaTimestamp, pts: MediaTimestamp, isKeyframe: Bool, payload: [UInt8]) {
        self.kind = kind
        self.dts = dts
        self.pts = pts
        self.isKeyframe = isKeyframe
        self.payload = payload
    }

    public var size: Int { payload.count }
}
