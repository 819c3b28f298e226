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
    /// The arrival speed is measured over the packets of this last stretch of wall time: long enough to span
    /// a large keyframe still on its way at link speed, short enough to see a burst begin.
    static let speedWindow = Duration.milliseconds(300)
    /// Media that arrived within this is still arriving.
    static let flowing = Duration.milliseconds(100)

    /// Transits of the window, increasing (a monotonic queue: each is the minimum of what follows it).
    private var minima: [(at: Duration, transit: Duration)] = []
    private var minimaHead = 0
    /// The latest arrivals, oldest first, for the arrival speed.
    private var recent: [(at: Duration, media: Duration)] = []

    mutating func record(media: MediaTimestamp, at now: Duration) {
        let time = Duration.milliseconds(media.milliseconds)
        let transit = now - time
        while minima.count > minimaHead, minima[minima.count - 1].transit >= transit { minima.removeLast() }
        minima.append((now, transit))
        // Expire only while newer samples remain: through an outage the last known on-time transit holds.
        while minima.count - minimaHead > 1, now - minima[minimaHead].at > Self.window { minimaHead += 1 }
        if minimaHead > 64, minimaHead * 2 > minima.count {
            minima.removeFirst(minimaHead)
            minimaHead = 0
        }
        recent.append((now, time))
        let expired = recent.prefix { now - $0.at > Self.speedWindow }.count
        if expired > 0 || recent.count > 1024 { recent.removeFirst(max(expired, recent.count - 1024)) }
    }

    /// The smallest transit of the window: arrival when the network keeps up.
    var onTimeTransit: Duration? { minima.count > minimaHead ? minima[minimaHead].transit : nil }

    /// Media the source has made by `now` that has not arrived: the newest media's lateness beyond on time.
    func pending(edge: MediaTimestamp?, at now: Duration) -> Duration {
        guard let edge, let onTimeTransit else { return .zero }
        return max(.zero, now - .milliseconds(edge.milliseconds) - onTimeTransit)
    }

    /// Media arrived within ``flowing`` of `now`.
    func isFlowing(at now: Duration) -> Bool {
        recent.last.map { now - $0.at <= Self.flowing } ?? false
    }

    /// Media is flowing faster than real time: the packets of the last ``speedWindow`` span more than
    /// ``burstSpeed`` times the wall time they took to arrive (a whole burst in one read took none).
    func isBursting(at now: Duration) -> Bool {
        guard isFlowing(at: now), let first = recent.first(where: { now - $0.at <= Self.speedWindow }),
            let last = recent.last, recent.count >= 4
        else { return false }
        return (last.media - first.media).seconds > Self.burstSpeed * (last.at - first.at).seconds
    }
}
