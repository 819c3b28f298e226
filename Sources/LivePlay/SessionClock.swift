/// A clock a ``LiveSession`` runs on, and what it says about waiting on it. A play loop waits a hundred times a
/// second; on the real clock its ``PlaybackThread`` times those waits itself (no libdispatch timer, no hop through the
/// cooperative pool), and any other clock (a test's virtual one) is slept on. The clock says which it is, by its
/// instants: the session never asks what type its clock is.
public protocol SessionClock: Clock where Duration == Swift.Duration {
    /// `instant` on the real clock, when this clock runs in real time; nil for a clock with a time of its own.
    func realInstant(_ instant: Instant) -> ContinuousClock.Instant?
}

extension SessionClock {
    public func realInstant(_ instant: Instant) -> ContinuousClock.Instant? { nil }
}

extension ContinuousClock: SessionClock {
    public func realInstant(_ instant: Instant) -> ContinuousClock.Instant? { instant }
}
