/// When the level of the sound played is reported (`enableAudioVolumeEvaluation`, `LIVEPLAY_EVT_AUDIO_VOLUME`):
/// once an interval from when it was asked for, on the session clock.
struct VolumeEvaluation {
    /// How often; `nil`: not reported.
    var interval: Duration? {
        didSet { if interval == nil { reportedAt = nil } }
    }
    private var reportedAt: Duration?
    /// The loudest sample heard since the last report.
    private var peak: Float = 0

    /// What the presenter handed over: its loudest sample counts towards the next report.
    mutating func heard(_ presentation: Presentation) {
        peak = max(peak, presentation.audioPeak)
    }

    /// The level to report `now`, when it is due (the loudest sample since the last, 0…1); the next one counts from
    /// `now`.
    mutating func level(at now: Duration) -> Float? {
        guard isDue(at: now) else { return nil }
        defer { peak = 0 }
        return peak
    }

    /// Whether the level is due `now`; if so, the next one counts from `now`.
    private mutating func isDue(at now: Duration) -> Bool {
        guard let interval else { return false }
        let since = reportedAt ?? now
        reportedAt = since
        guard now - since >= interval else { return false }
        reportedAt = now
        return true
    }

    /// How long from `now` until the next report, for the play loop's wait; `nil` when none is coming.
    func timeToNext(at now: Duration) -> Duration? {
        guard let interval, let reportedAt else { return nil }
        return max(.zero, reportedAt + interval - now)
    }
}
