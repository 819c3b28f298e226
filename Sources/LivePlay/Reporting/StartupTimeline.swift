/// How long from `startPlay` to each startup milestone: `PLAY_EVT_PLAY_BEGIN`'s `startup_*_ms` parameters, and
/// ``PlaybackState/startup``.
public struct StartupTimeline: Sendable, Hashable {
    public var resolved: Duration?
    public var connected: Duration?
    public var handshakeDone: Duration?
    public var streamBegan: Duration?
    public var firstByte: Duration?
    public var firstAudio: Duration?
    public var firstKeyframe: Duration?
    public var firstDecoded: Duration?
    /// The first picture shown (or, for a stream without video, the first sound heard).
    public var firstShown: Duration?

    public init() {}

    /// Records a milestone the first time it happens.
    mutating func record(_ milestone: WritableKeyPath<StartupTimeline, Duration?>, _ at: Duration) {
        if self[keyPath: milestone] == nil { self[keyPath: milestone] = at }
    }

    var parameters: [String: PlayEventValue] {
        let milestones: [(String, Duration?)] = [
            ("startup_resolved_ms", resolved), ("startup_connected_ms", connected),
            ("startup_handshake_ms", handshakeDone), ("startup_stream_begin_ms", streamBegan),
            ("startup_first_byte_ms", firstByte), ("startup_first_audio_ms", firstAudio),
            ("startup_first_keyframe_ms", firstKeyframe), ("startup_first_decoded_ms", firstDecoded),
            ("startup_first_shown_ms", firstShown),
        ]
        var parameters: [String: PlayEventValue] = [:]
        for (key, value) in milestones {
            if let value { parameters[key] = .int(value.milliseconds) }
        }
        return parameters
    }
}
