public import LivePlayCore

/// Keeps media timestamps monotonic across reconnects, and measures the gap each one leaves.
///
/// After a reconnect a server may continue its timeline (nginx-rtmp, a CDN), restart it at zero
/// (a new HTTP-FLV session), or replay the cached GOP (timestamps behind what was already played).
/// The first packet of each connection anchors it: a continuation a little ahead is kept as it is;
/// anything else is shifted to follow the last timestamp by the wall-clock outage. Within a
/// connection timestamps pass through with the connection's offset.
public struct TimelineStitcher: Sendable {
    /// Longest forward jump still taken as the server's own continuation, beyond the outage itself.
    public var continuationTolerance: Duration
    private var offset: Int64 = 0
    private var last: Int64?
    private var anchorOutage: Duration?

    public init(continuationTolerance: Duration = .seconds(2)) {
        self.continuationTolerance = continuationTolerance
    }

    /// A new connection starts; `outage` is the wall time since the previous one lost media.
    public mutating func beginConnection(outage: Duration) {
        anchorOutage = outage
    }

    /// The newest timestamp handed out.
    public var lastTimestamp: MediaTimestamp? { last.map(MediaTimestamp.init(milliseconds:)) }

    /// Maps a packet's decode and presentation timestamps; `gap` is set on the first packet of a
    /// connection after the first one, when media is missing between the two connections.
    public mutating func map(
        dts: MediaTimestamp, pts: MediaTimestamp
    ) -> (dts: MediaTimestamp, pts: MediaTimestamp, gap: Duration?) {
        var gap: Duration?
        if let outage = anchorOutage {
            anchorOutage = nil
            if let last {
                let continued = dts.milliseconds + offset
                let limit = last + (outage + continuationTolerance).milliseconds
                if continued > last && continued <= limit {
                    gap = .milliseconds(continued - last)
                } else {
                    let target = last + max(1, outage.milliseconds)
                    offset = target - dts.milliseconds
                    gap = .milliseconds(target - last)
                }
            }
        }
        let mappedDTS = dts.milliseconds + offset
        last = max(last ?? mappedDTS, mappedDTS)
        return (MediaTimestamp(milliseconds: mappedDTS), MediaTimestamp(milliseconds: pts.milliseconds + offset), gap)
    }
}
