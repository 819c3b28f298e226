public import LivePlayCore

/// Keeps media timestamps monotonic across reconnects and clock jumps, and measures the gap each leaves.
///
/// After a reconnect a server may continue its timeline (nginx-rtmp, a CDN), restart it at zero
/// (a new HTTP-FLV session), or replay the cached GOP (timestamps behind what was already played).
/// The first packet of each connection anchors it: a continuation a little ahead is kept as it is;
/// anything else is shifted to follow the last timestamp by the wall-clock outage. Within a
/// connection timestamps pass through with the connection's offset, unless they jump: an encoder or
/// server that restarts its clock mid-stream (backwards by more than ``backwardTolerance``, or forwards
/// by more than ``forwardTolerance``) is shifted to follow on one ``jumpStep`` after the last timestamp,
/// so playback neither waits out nor drops what the jump would have cost.
public struct TimelineStitcher: Sendable {
    /// Longest forward jump still taken as the server's own continuation, beyond the outage itself.
    public var continuationTolerance: Duration
    /// Within a connection: how far behind the newest timestamp a packet may be and still be taken as it
    /// is (tracks interleave a little out of order).
    public var backwardTolerance: Duration
    /// Within a connection: the longest forward step taken as it is (FFmpeg's `dts_delta_threshold`
    /// is 10 s too: a slideshow may advance seconds per frame).
    public var forwardTolerance: Duration
    /// Where a jumped timeline resumes after the newest timestamp: about a frame.
    public var jumpStep: Duration
    private var offset: Int64 = 0
    private var last: Int64?
    private var anchorOutage: Duration?

    public init(
        continuationTolerance: Duration = .seconds(2), backwardTolerance: Duration = .seconds(1),
        forwardTolerance: Duration = .seconds(10), jumpStep: Duration = .milliseconds(40)
    ) {
        self.continuationTolerance = continuationTolerance
        self.backwardTolerance = backwardTolerance
        self.forwardTolerance = forwardTolerance
        self.jumpStep = jumpStep
    }

    /// A new connection starts; `outage` is the wall time since the previous one lost media.
    public mutating func beginConnection(outage: Duration) {
        anchorOutage = outage
    }

    /// The newest timestamp handed out.
    public var lastTimestamp: MediaTimestamp? { last.map(MediaTimestamp.init(milliseconds:)) }

    /// Maps a packet's decode and presentation timestamps; `gap` is set on the first packet of a
    /// connection after the first one, when media is missing between the two connections; `jump` is the
    /// step (negative: backwards) by which the stream's own timestamps jumped within a connection, when
    /// they did and were moved to follow on.
    public mutating func map(
        dts: MediaTimestamp, pts: MediaTimestamp
    ) -> (dts: MediaTimestamp, pts: MediaTimestamp, gap: Duration?, jump: Duration?) {
        var gap: Duration?
        var jump: Duration?
        if anchorOutage == nil, let last {
            let step = dts.milliseconds + offset - last
            if step < -backwardTolerance.milliseconds || step > forwardTolerance.milliseconds {
                jump = .milliseconds(step)
                offset = last + jumpStep.milliseconds - dts.milliseconds
            }
        }
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
        return (
            MediaTimestamp(milliseconds: mappedDTS), MediaTimestamp(milliseconds: pts.milliseconds + offset), gap, jump
        )
    }
}
