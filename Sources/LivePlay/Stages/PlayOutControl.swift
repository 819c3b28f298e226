import LivePlayBuffering
import LivePlayCore

/// The play-out stage's side of the session's control (``PlaybackControl``): the commands the loop routes here, each
/// carried out when it is routed (pause and resume, the live edge, latency, presentation, a preloaded stream's
/// switch), and what the turn made known published at its end.
extension PlayOut {
    /// Tells the control's owner what this turn made known; the last step of every turn, and once at the end.
    func publish(ended: Bool = false) {
        published.liveEdge = engine.buffer.liveEdge
        published.recentKeyframes = engine.buffer.recentKeyframes
        published.stalled = hasBegun && engine.state == .loading
        published.buffered = engine.bufferLatency
        control.publish(published, ended: ended)
    }

    /// Holds playback, or resumes it: media on demand where it paused, a live stream at its newest media.
    func pause(_ paused: Bool) {
        switch paused {
        case true where !engine.isPaused:
            engine.pause()
            reporter.report(Reports.paused(at: engine.position))
        case false where engine.isPaused && onDemand:
            _ = engine.resume(jumpsToNewest: false)
            reporter.report(Reports.resumedWherePaused(at: engine.position))
        case false where engine.isPaused:
            for action in engine.resume() {
                if case .skipped(let removed, let dropped) = action {
                    reporter.report(Reports.skippedToNewest(removed: removed, dropped: dropped))
                }
            }
            reporter.report(Reports.resumedAtLiveEdge(latency: engine.bufferLatency))
        default:
            break
        }
    }

    /// Drops the buffer to its newest keyframe: a live stream's jump to its live edge.
    func goToLiveEdge() {
        guard !onDemand else { return }
        for case .skipped(let removed, let dropped) in engine.jumpToLiveEdge() {
            reporter.count { $0.caughtUp() }
            Reports.skipped(removed: removed, dropped: dropped).forEach(reporter.report)
        }
    }

    /// New latency parameters, reported; media on demand plays at 1.0× from its start: the live latency modes do not
    /// apply.
    func retune(_ latency: LatencyParameters) {
        guard latency != engine.parameters, !onDemand else { return }
        let previous = engine.parameters
        engine.parameters = latency
        reporter.report(
            Reports.latencyChanged(from: previous, to: latency, target: engine.target, current: engine.bufferLatency))
    }

    /// The presenter follows the settings: volume, the level's measure, how pictures are laid out.
    func present(_ settings: PlaybackSettings) {
        presenter.volume = settings.gain
        volume.interval = settings.volumeEvaluation
        presenter.measuresLevel = volume.interval != nil
        presenter.renderMode = settings.renderMode
        presenter.rotation = settings.rotation
    }

    /// A player switched to this preloaded session: it plays from here on. The sound before it was another stream's:
    /// this one fades in rather than cutting in. A rendition goes on where the other left off, the same sound: no
    /// fade, and no filling of the buffer's target first (what it preloaded from the cut plays at once; the target
    /// is reached by the rate, as after any dip).
    func switched(_ request: SwitchRequest) {
        standby.switched(request, dropped: engine.buffer.droppedVideoFrames)
        if request.rendition {
            engine.startLevel = .zero
        } else {
            presenter.fadesIn()
        }
    }
}
