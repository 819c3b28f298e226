public import LivePlayCore
import LivePlayTransport

/// What a turn of the play loop tells besides its events: the net status once a second, the progress of media on
/// demand or of a time-shift window, the end-to-end latency.
extension LiveSession {
    /// The net status (`onNetStatus`), when a second has passed since the last.
    func reportStatusIfDue(at now: Duration) {
        reporter.statusIfDue(
            at: now, connecting: mediaLostAt != nil, playOut: playOut, intake: intake,
            decodes: configuration.decodes, endToEndLatency: playOut.engine.position.flatMap(endToEndLatency),
            onDemand: playOut.onDemand ? (progressPosition, mediaLength) : nil)
    }

    /// `PLAY_EVT_PLAY_PROGRESS`, when it is due.
    func reportProgressIfDue(at now: Duration) {
        reporter.progressIfDue(
            at: now, playOut: playOut, position: progressPosition,
            endToEndLatency: playOut.engine.position.flatMap(endToEndLatency),
            mediaDuration: playOut.onDemand || timeShift != nil ? mediaLength : nil,
            timeShift: timeShiftProgress.map { ($0.behind, !playOut.onDemand) })
    }

    /// "Shown N ms after the server sent it", from the server's `onLivePlayClock` stamps
    /// (docs/wall-clock-tags.md).
    public func endToEndLatency(_ position: MediaTimestamp) -> Int64? {
        intake.endToEndLatency(at: position, wallClockMs: wallClock())
    }
}
