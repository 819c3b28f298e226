public import LivePlayCore
import LivePlayTransport

/// What a turn of the play loop tells besides its events: the net status once a second, the progress of media on
/// demand or of a time-shift window, the end-to-end latency.
extension LiveSession {
    /// The net status (`onNetStatus`), when a second has passed since the last; returns whether it was due.
    func reportStatusIfDue(at now: Duration) -> Bool {
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

    /// What the playback is (``PlaybackState``), to the listener when it changed: its phase, paused, the settings, the
    /// tracks,
    /// and the timeline, which moves only on a turn that `movesTimeline` (one that told the net status: once a second,
    /// not every turn).
    func reportState(movesTimeline: Bool) {
        var state = reporter.playbackState
        state.phase = SessionReporter.phase(of: playOut, connecting: mediaLostAt != nil)
        state.paused = playOut.engine.isPaused
        state.present(playOut.settings)
        state.tracks = intake.tracks
        if reporter.startup.firstShown != nil { state.startup = reporter.startup }
        state.reconnects = reporter.reconnects
        if movesTimeline { state.timeline = timeline }
        reporter.tell(state)
    }

    /// Where playback is, for a seek bar.
    private var timeline: PlaybackState.Timeline {
        if let window = timeShiftProgress {
            return .timeShift(position: window.position, length: window.length, atLiveEdge: !playOut.onDemand)
        }
        guard playOut.onDemand else { return .live }
        return .onDemand(position: progressPosition, duration: intake.mediaDuration)
    }

    /// "Shown N ms after the server sent it", from the server's `onLivePlayClock` stamps
    /// (docs/wall-clock-tags.md).
    public func endToEndLatency(_ position: MediaTimestamp) -> Int64? {
        intake.endToEndLatency(at: position, wallClockMs: wallClock())
    }
}
