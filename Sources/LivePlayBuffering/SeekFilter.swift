public import LivePlayCore

/// Seeking by reading forward: packets are dropped as they arrive until the target is reached, and
/// playback starts at the video keyframe at or before the target (ExoPlayer's and ffplay's "previous sync
/// point"), with the sound from that keyframe on.
///
/// The GOP under way is held, not passed on, so when the first packet at or after the target arrives the
/// whole GOP from its keyframe can be released. An audio-only stream starts at the first packet at or
/// after the target.
public struct SeekFilter: Sendable {
    public let target: MediaTimestamp
    /// The GOP under way before the target, from its keyframe.
    private var held: [EncodedPacket] = []
    public private(set) var isDone = false

    public init(target: MediaTimestamp) {
        self.target = target
    }

    /// What to pass on now for `packet`: nothing while before the target, then the held GOP and the packet.
    public mutating func admit(_ packet: EncodedPacket) -> [EncodedPacket] {
        guard !isDone else { return [packet] }
        if packet.dts < target {
            if packet.kind == .video && packet.isKeyframe {
                held = [packet]
            } else if !held.isEmpty {
                held.append(packet)
            }
            return []
        }
        // At or past the target: a keyframe exactly here starts cleanly without the held GOP.
        isDone = true
        defer { held = [] }
        if packet.kind == .video && packet.isKeyframe && packet.dts == target { return [packet] }
        return held + [packet]
    }
}

/// Reports a recurring problem without flooding the log: the first of each kind at once, then at most one
/// line per kind every `interval`, carrying how many happened in all and how many were not reported.
public struct WarningThrottle: Sendable {
    public let interval: Duration
    private var kinds: [String: (count: Int, reported: Int, last: Duration)] = [:]

    public init(interval: Duration = .seconds(10)) {
        self.interval = interval
    }

    /// Counts one warning of `kind` at `now`; returns what to report, or `nil` to stay quiet.
    public mutating func record(_ kind: String, at now: Duration) -> (count: Int, suppressed: Int)? {
        var entry = kinds[kind] ?? (0, 0, now - interval)
        entry.count += 1
        defer { kinds[kind] = entry }
        guard entry.reported == 0 || now - entry.last >= interval else { return nil }
        let suppressed = entry.count - entry.reported - 1
        entry.reported = entry.count
        entry.last = now
        return (entry.count, suppressed)
    }
}
