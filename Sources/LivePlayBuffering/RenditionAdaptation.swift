/// Which rendition of a LAS manifest to play, decided once per second from what the player measures: the buffer, its
/// trend, and the rate bytes arrive at. A value type with time passed in (STYLE.md rules 2 and 3): the caller feeds
/// it a sample a second and carries out its decisions through the switch path.
///
/// Live streams arrive at their own bitrate once the buffer is full, so the rate received says nothing about spare
/// capacity at the live edge. Two things do (after LAS's reference client, `abr-algorithm-simple.ts`, which probes
/// up once the buffer has been stable and goes down by what the buffer's drain says):
/// - **A burst**: a second in which bytes arrived faster than the stream's bitrate (a new connection's GOP cache, the
///   buffer refilling after a dip). The link carries at least that: a *floor*.
/// - **A drain**: the buffer falling while less than the bitrate arrives. The link carries about what arrived: a
///   *ceiling*, kept ``Parameters/ceilingLifetime``.
///
/// Decisions, with hysteresis so that a steady link sees at most two switches a minute:
/// - **Down** (at once) when the buffer is below ``Parameters/lowBuffer`` of the target, or has fallen by more than
///   ``Parameters/drainThreshold`` over ``Parameters/drainWindow`` while less than the bitrate arrived: to the best
///   rendition within ``Parameters/utilisation`` of what arrives, at least one lower. A down soon after an up
///   (within ``Parameters/probeWindow``) undoes a failed probe: that rendition is not tried again for
///   ``Parameters/holdOff``, doubling with each failure.
/// - **Up** once ``Parameters/upAfter`` has passed since the last switch with the buffer near its target and not
///   draining: to the best rendition the floor carries, or one step (a probe); never above what a standing ceiling
///   carries, nor to a rendition held off.
public struct RenditionAdaptation: Sendable {
    public struct Parameters: Sendable, Equatable {
        /// A buffer under this share of the target means going down now.
        public var lowBuffer = 0.5
        /// How far the buffer may fall over ``drainWindow``, with less than the bitrate arriving, before going down.
        public var drainThreshold = Duration.milliseconds(400)
        public var drainWindow = Duration.seconds(2)
        /// The share of the measured rate a rendition's bitrate may take.
        public var utilisation = 0.8
        /// Time since the last switch, with the buffer at its target, before going up.
        public var upAfter = Duration.seconds(10)
        /// How long a ceiling (what arrived while the buffer drained) and a floor (a burst) stand.
        public var ceilingLifetime = Duration.seconds(30)
        public var floorLifetime = Duration.seconds(30)
        /// A down this soon after an up undoes a failed probe.
        public var probeWindow = Duration.seconds(20)
        /// How long a rendition whose probe failed is not tried again; doubled with each failure, up to 8 times.
        public var holdOff = Duration.seconds(60)

        public init() {}
    }

    public enum Reason: String, Sendable {
        /// The buffer ran low or drained: the link carries less than the rendition.
        case drain
        /// A burst showed the link carries the rendition.
        case capacity
        /// The buffer held at its target long enough to try one step up.
        case probe
    }

    public struct Decision: Sendable, Equatable {
        /// The index (in ``bitrates``) to switch to.
        public var to: Int
        public var reason: Reason

        public init(to: Int, reason: Reason) {
            self.to = to
            self.reason = reason
        }
    }

    /// The renditions adaptation may pick, kbit/s, lowest first.
    public let bitrates: [Int]
    public let parameters: Parameters
    /// The index playing.
    public private(set) var current: Int
    private var lastSwitch: Duration?
    private var lastSwitchWasUp = false
    private var buffers: [(at: Duration, buffered: Duration)] = []
    private var floor: (kbps: Int, at: Duration)?
    private var ceiling: (kbps: Int, at: Duration)?
    private var heldOff: [Int: (until: Duration, failures: Int)] = [:]

    public init(bitrates: [Int], current: Int, parameters: Parameters = Parameters()) {
        precondition(!bitrates.isEmpty && bitrates.indices.contains(current), "a rendition to play")
        self.bitrates = bitrates
        self.current = current
        self.parameters = parameters
    }

    /// What the link carries at least and at most, as measured and still standing at `now`, kbit/s.
    public func capacity(at now: Duration) -> (floor: Int?, ceiling: Int?) {
        (floor.flatMap { now - $0.at <= parameters.floorLifetime ? $0.kbps : nil },
         ceiling.flatMap { now - $0.at <= parameters.ceilingLifetime ? $0.kbps : nil })
    }

    /// One second's measurements: the buffer (media waiting to play), the mode's target, the rate received over the
    /// last second. Returns a switch to make, or nil.
    public mutating func observe(at now: Duration, buffered: Duration, target: Duration, receivedKbps: Int) -> Decision? {
        let bitrate = bitrates[current]
        if Double(receivedKbps) > 1.1 * Double(bitrate), receivedKbps > capacity(at: now).floor ?? 0 {
            floor = (receivedKbps, now)
            if let standing = capacity(at: now).ceiling, receivedKbps > standing { ceiling = nil }
        }
        buffers.append((now, buffered))
        buffers.removeAll { now - $0.at > parameters.drainWindow }
        let fell = (buffers.map(\.buffered).max() ?? buffered) - buffered
        let draining = fell > parameters.drainThreshold && Double(receivedKbps) < Double(bitrate)
        if current > 0, draining || buffered < target * parameters.lowBuffer {
            return switchDown(at: now, receivedKbps: receivedKbps)
        }
        guard current < bitrates.count - 1, !draining, buffered >= target * 0.8,
            now - (lastSwitch ?? .zero) >= parameters.upAfter
        else { return nil }
        let (carried, limit) = capacity(at: now)
        var next = max(current + 1, carried.map(fits) ?? 0)
        if let limit { next = min(next, fits(limit)) }
        while next > current, let hold = heldOff[next], now < hold.until { next -= 1 }
        guard next > current else { return nil }
        let shown = carried.map { fits($0) >= next } ?? false
        return switched(to: next, at: now, reason: shown ? .capacity : .probe)
    }

    /// A switch made by someone else (the viewer's choice while adaptation is off) or one that landed elsewhere.
    public mutating func played(_ index: Int, at now: Duration) {
        guard bitrates.indices.contains(index) else { return }
        current = index
        lastSwitch = now
        lastSwitchWasUp = false
        buffers.removeAll()
    }

    /// A switch to `index` did not happen (the rendition did not connect, or is not stamped alike): playback stays
    /// on `playing`, and `index` is held off as after a failed probe.
    public mutating func switchFailed(to index: Int, playing: Int, at now: Duration) {
        holdOff(index, at: now)
        played(playing, at: now)
    }

    private mutating func holdOff(_ index: Int, at now: Duration) {
        let failures = (heldOff[index]?.failures ?? 0) + 1
        heldOff[index] = (now + parameters.holdOff * (1 << min(failures - 1, 3)), failures)
    }

    private mutating func switchDown(at now: Duration, receivedKbps: Int) -> Decision? {
        if lastSwitchWasUp, let last = lastSwitch, now - last <= parameters.probeWindow { holdOff(current, at: now) }
        // What arrives while draining is what the link carries.
        ceiling = (receivedKbps, now)
        floor = nil
        return switched(to: min(current - 1, fits(receivedKbps)), at: now, reason: .drain)
    }

    private mutating func switched(to index: Int, at now: Duration, reason: Reason) -> Decision {
        lastSwitchWasUp = index > current
        current = index
        lastSwitch = now
        buffers.removeAll()
        return Decision(to: index, reason: reason)
    }

    /// The best rendition `kbps` carries within the utilisation; the lowest if none.
    private func fits(_ kbps: Int) -> Int {
        bitrates.lastIndex { Double($0) <= parameters.utilisation * Double(kbps) } ?? 0
    }
}
