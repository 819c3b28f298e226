import LivePlayCore
/// Media time received, summed from message timestamps: what goodput is measured in.
///
/// Each track advances by the difference between consecutive timestamps; a step back or a jump of more
/// than ``maximumStep`` (a publisher restart, a server's timestamp discontinuity) counts as nothing, so
/// the sum only grows by plausible amounts. Progress is the furthest of the tracks, so audio-only and
/// video-only streams count too.
struct MediaProgress: Sendable, Hashable {
    static let maximumStep: UInt32 = 5_000

    private var lastTimestamp: [UInt8: UInt32] = [:]
    private var advanced: [UInt8: UInt64] = [:]

    /// Milliseconds of media received on the furthest track.
    var milliseconds: UInt64 { advanced.values.max() ?? 0 }

    mutating func record(type: UInt8, timestamp: UInt32) {
        if let last = lastTimestamp[type] {
            let step = timestamp &- last
            if step <= Self.maximumStep { advanced[type, default: 0] += UInt64(step) }
        } else {
            advanced[type] = advanced[type] ?? 0
        }
        lastTimestamp[type] = timestamp
    }
}

/// Decides, from the connection's phase and progress, whether the watchdog must end the connection.
///
/// A value type that returns a verdict; the watchdog thread owns the clock and does the shutting down
/// (STYLE.md rules 2 and 3).
struct RTMPWatchdogPolicy: Sendable {
    enum Phase: Sendable, Hashable {
        /// Resolving and connecting, which bound their own waits.
        case connecting
        /// RTMP handshake, `connect`, `createStream` and `play`, until the server starts the stream.
        case handshaking(deadline: ContinuousClock.Instant)
        /// Media flows; goodput is watched.
        case streaming
        case finished
    }

    private(set) var phase: Phase = .connecting
    private let handshakeTimeout: Duration
    private let minimumGoodput: Double
    private var meter: GoodputMeter
    /// The meter measures time from here.
    private let origin: ContinuousClock.Instant
    private var progress = MediaProgress()
    /// While the consumer holds the stream back, goodput says nothing about the link.
    private var isHeldBack = false

    /// - Parameter origin: now, on the watchdog's clock: the policy reads no clock of its own.
    init(options: TransportOptions, origin: ContinuousClock.Instant) {
        self.origin = origin
        handshakeTimeout = options.handshakeTimeout
        minimumGoodput = options.minimumGoodput
        meter = GoodputMeter(window: options.goodputWindow)
    }

    mutating func startHandshake(at now: ContinuousClock.Instant) {
        phase = .handshaking(deadline: now + handshakeTimeout)
    }

    mutating func startStreaming() {
        phase = .streaming
        meter.reset()
    }

    mutating func finish() {
        phase = .finished
    }

    mutating func recordMedia(type: UInt8, timestamp: UInt32) {
        progress.record(type: type, timestamp: timestamp)
    }

    mutating func setHeldBack(_ heldBack: Bool) {
        if heldBack != isHeldBack { meter.reset() }
        isHeldBack = heldBack
    }

    /// The verdict at `now`: `nil` while all is well.
    mutating func check(at now: ContinuousClock.Instant) -> TransportError? {
        switch phase {
        case .connecting, .finished:
            return nil
        case .handshaking(let deadline):
            guard now >= deadline else { return nil }
            return TransportError(
                .handshakeFailed, "RTMP handshake, connect and play did not complete within \(handshakeTimeout)")
        case .streaming:
            guard !isHeldBack, minimumGoodput > 0 else { return nil }
            let elapsed = origin.duration(to: now)
            meter.record(media: MediaTimestamp(milliseconds: Int64(progress.milliseconds)), at: elapsed)
            guard let goodput = meter.goodput(at: elapsed), goodput < minimumGoodput else { return nil }
            let rounded = (goodput * 1000).rounded() / 1000
            return TransportError(
                .tooSlow,
                "received \(rounded) media seconds per second over \(meter.window) (minimum \(minimumGoodput))")
        }
    }

    /// When the watchdog should look again.
    func nextCheck(after now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        let tick = now + .milliseconds(200)
        if case .handshaking(let deadline) = phase { return min(deadline, tick) }
        return tick
    }
}
