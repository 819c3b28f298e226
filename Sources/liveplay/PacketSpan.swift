import LivePlay

/// How long a file really plays, measured from its packets, as ffprobe measures a stream that has no duration
/// in its header: from the earliest presentation time to the end of the latest packet (its time plus its
/// stream's frame interval). A file cut short keeps its onMetaData's full duration; this is what it holds.
struct PacketSpan {
    private struct Track {
        var count = 0
        var firstDTS: Int64 = 0
        var lastDTS: Int64 = 0
        var earliestPTS = Int64.max
        var latestPTS = Int64.min

        /// The typical distance between packets: their span over their count.
        var interval: Double { count > 1 ? Double(lastDTS - firstDTS) / Double(count - 1) : 0 }
    }

    private var tracks: [MediaKind: Track] = [:]

    mutating func add(_ packet: EncodedPacket) {
        let dts = packet.dts.milliseconds
        let pts = packet.pts.milliseconds
        var track = tracks[packet.kind] ?? Track()
        if track.count == 0 { track.firstDTS = dts }
        track.count += 1
        track.lastDTS = dts
        track.earliestPTS = min(track.earliestPTS, pts)
        track.latestPTS = max(track.latestPTS, pts)
        tracks[packet.kind] = track
    }

    /// Seconds, or `nil` without packets.
    var seconds: Double? {
        let held = tracks.values.filter { $0.count > 0 }
        guard let start = held.map(\.earliestPTS).min(),
            let end = held.map({ Double($0.latestPTS) + $0.interval }).max()
        else { return nil }
        return (end - Double(start)) / 1000
    }
}
