import LivePlayCore

// What the arrivals say about the network, for the latency controller: how much they jitter, and whether a
// backlog is still landing.

/// Interarrival jitter as RTP receivers estimate it (RFC 3550 §6.4.1): a running mean of how much each
/// packet's transit time differs from the previous one's. Bursts of old data (a GOP cache) barely move
/// it; a late burst after an outage raises it once, and it decays as the network calms.
struct ArrivalJitter: Sendable {
    private var lastTransit: Duration?
    private(set) var estimate: Duration = .zero

    mutating func record(media: MediaTimestamp, at now: Duration) {
        let transit = now - .milliseconds(media.milliseconds)
        defer { lastTransit = transit }
        guard let lastTransit else { return }
        let difference = transit - lastTransit
        let magnitude = difference < .zero ? .zero - difference : difference
        estimate += (magnitude - estimate) / 16
    }

    var spread: Duration { estimate }
}

/// Where the newest media stands against on-time arrival, so the controller can count a backlog that is
/// still landing as latency that is coming.
///
/// A packet's transit is its arrival time minus its media time (an offset that is constant while the network
/// keeps up). The smallest transit of the last ten seconds is the on-time transit; the newest media's
/// transit beyond it is ``pending``: media the source has made that has not arrived yet. After an outage
/// TCP delivers the held backlog at link speed, so for a while media arrives faster than real time
/// (``isBursting``); a decision taken then would see only part of what is about to be buffered.
struct ArrivalBacklog: Sendable {
    /// The window the on-time transit is the minimum of.
    static let window = Duration.seconds(10)
    /// Arrival faster than this many times real time is a burst.
    static let burstSpeed = 1.5

    /// Transits of the window, increasing (a monotonic queue: each is the minimum of what follows it).
    private var minima: [(at: Duration, transit: Duration)] = []
    private var minimaHead = 0
    /// The live edge at recent turns, ~50 ms apart, for the arrival speed.
    private var edges: [(at: Duration, edge: Duration)] = []

    mutating func record(media: MediaTimestamp, at now: Duration) {
        let transit = now - .milliseconds(media.milliseconds)
        while minima.count > minimaHead, minima[minima.count - 1].transit >= transit { minima.removeLast() }
        minima.append((now, transit))
        // Expire only while newer samples remain: through an outage the last known on-time transit holds.
        while minima.count - minimaHead > 1, now - minima[minimaHead].at > Self.window { minimaHead += 1 }
        if minimaHead > 64, minimaHead * 2 > minima.count {
            minima.removeFirst(minimaHead)
            minimaHead = 0
        }
    }

    /// Notes where the live edge is at a turn of the play loop.
    mutating func observe(edge: MediaTimestamp?, at now: Duration) {
        guard let edge else { return }
        if let last = edges.last, now - last.at < .milliseconds(50) { return }
        edges.append((now, .milliseconds(edge.milliseconds)))
        if edges.count > 10 { edges.removeFirst(edges.count - 10) }
    }

    /// The smallest transit of the window: arrival when the network keeps up.
    var onTimeTransit: Duration? { minima.count > minimaHead ? minima[minimaHead].transit : nil }

    /// Media the source has made by `now` that has not arrived: the newest media's lateness beyond on time.
    func pending(edge: MediaTimestamp?, at now: Duration) -> Duration {
        guard let edge, let onTimeTransit else { return .zero }
        return max(.zero, now - .milliseconds(edge.milliseconds) - onTimeTransit)
    }

    /// Media is arriving faster than real time: over the last 100–500 ms the live edge moved more than
    /// ``burstSpeed`` times the wall time.
    func isBursting(edge: MediaTimestamp?, at now: Duration) -> Bool {
        guard let edge, let reference = edges.last(where: { now - $0.at >= .milliseconds(100) }),
            now - reference.at <= .milliseconds(500)
        else { return false }
        let moved = Duration.milliseconds(edge.milliseconds) - reference.edge
        return moved.seconds > Self.burstSpeed * (now - reference.at).seconds
    }
}
