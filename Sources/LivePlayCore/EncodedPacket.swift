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
    public var payload: [UInt8] {
        didSet { size = payload.count }
    }
    /// The payload's size in bytes, kept by ``droppingPayload()``.
    public private(set) var size: Int
    /// The track of a multitrack stream (Enhanced RTMP v2) it belongs to; 0 in a stream of one track per kind.
    public var track: UInt8 = 0

    public init(kind: MediaKind, dts: MediaTimestamp, pts: MediaTimestamp, isKeyframe: Bool, payload: [UInt8]) {
        self.kind = kind
        self.dts = dts
        self.pts = pts
        self.isKeyframe = isKeyframe
        self.payload = payload
        size = payload.count
    }

    /// The packet without its payload, its ``size`` kept: what a probe (no decoding) buffers and paces, a few
    /// bytes instead of the frame.
    public func droppingPayload() -> EncodedPacket {
        var packet = EncodedPacket(kind: kind, dts: dts, pts: pts, isKeyframe: isKeyframe, payload: [])
        packet.size = size
        packet.track = track
        return packet
    }
}
