import Logging

/// A clock a ``LiveSession`` runs on, and what it says about waiting on it. A play loop waits between its turns,
/// dozens of times a second; on the real clock its ``PlaybackThread`` times those waits itself (no libdispatch timer, no hop through the
/// cooperative pool), and any other clock (a test's virtual one) is slept on. The clock says which it is, by its
/// instants: the session never asks what type its clock is.
public protocol SessionClock: Clock where Duration == Swift.Duration {
    /// `instant` on the real clock, when this clock runs in real time; nil for a clock with a time of its own.
    func realInstant(_ instant: Instant) -> ContinuousClock.Instant?

    /// The play loop's wait for its next turn on a clock with a time of its own: until `deadline`, or sooner, when
    /// the clock knows that input falls due first (a virtual source's next read), as an arrival ends the wait in
    /// real time. By default a plain sleep.
    func sleepForTurn(until deadline: Instant) async throws
}

extension SessionClock {
    public func realInstant(_ instant: Instant) -> ContinuousClock.Instant? { nil }

    public func sleepForTurn(until deadline: Instant) async throws {
        try await sleep(until: deadline, tolerance: nil)
    }
}

/// A session clock's time, for code that holds its clock as `any SessionClock` (a player's switches): read as
/// durations since the stopwatch was made, and waited on.
struct Stopwatch: Sendable {
    /// Time since the stopwatch was made.
    let elapsed: @Sendable () -> Duration
    /// Waits until `elapsed` reads `deadline`.
    let sleep: @Sendable (_ until: Duration) async throws -> Void
}

extension SessionClock {
    /// A stopwatch on this clock, started now.
    func stopwatch() -> Stopwatch {
        let start = now
        return Stopwatch(
            elapsed: { start.duration(to: self.now) },
            sleep: { try await self.sleep(until: start.advanced(by: $0), tolerance: nil) })
    }
}

extension ContinuousClock: SessionClock {
    public func realInstant(_ instant: Instant) -> ContinuousClock.Instant? { instant }
}

/// Runs a session of `url` to its end on `clock`, for a caller that holds its clock as `any SessionClock` (a
/// player's or a pool's injected clock): a session is generic over its clock, and the clock is opened here.
func runSession(
    on clock: some SessionClock, url: String, configuration: LivePlayConfiguration, logger: Logger,
    videoSink: (any VideoSink)? = nil, audioSink: (any AudioSink)? = nil, control: PlaybackControl,
    arrivalTap: (any ArrivalTap)? = nil, onEvent: @escaping (PlayEvent) -> Void, onStatus: @escaping (NetStatus) -> Void,
    onState: @escaping (PlaybackState) -> Void
) async -> PlaybackOutcome {
    let session = LiveSession(
        url: url, configuration: configuration, clock: clock, logger: logger, videoSink: videoSink,
        audioSink: audioSink, control: control, arrivalTap: arrivalTap)
    return await session.run(onEvent: onEvent, onStatus: onStatus, onState: onState)
}
