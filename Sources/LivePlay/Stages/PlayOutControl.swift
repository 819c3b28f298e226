import LivePlayBuffering
import LivePlayCore

/// The play-out stage's side of the session's control (``PlaybackControl``): the commands taken at the start of each
/// turn, carried out (pause and resume, latency, volume and presentation, a preloaded stream's switch), and what the
/// turn made known published at its end.
extension PlayOut {
    /// Tells the control's owner what this turn made known; the last step of every turn, and once at the end.
    func publish(ended: Bool = false) {
        control.publish(published, ended: ended)
    }

    /// Takes what was sent to `control` since the last turn; the first step of every turn.
    func takeCommands() {
        requests.fold(control.takeCommands())
    }

    /// What `control` asked for: pause, resume, a latency change, sinks and presentation; applied and reported.
    func applyControl() {
        let settings = requests.settings
        presenter.volume = settings.gain
        volume.interval = settings.volumeEvaluation
        presenter.measuresLevel = volume.interval != nil
        presenter.renderMode = settings.renderMode
        presenter.rotation = settings.rotation
        if let change = requests.take(\.videoSink) { presenter.videoSink = change.sink }
        if let change = requests.take(\.audioSink) { presenter.audioSink = change.sink }
        published.liveEdge = engine.buffer.liveEdge
        if let request = standby.follow(&requests, dropped: engine.buffer.droppedVideoFrames) {
            // The sound before it was another stream's: this one fades in rather than cutting in. A rendition
            // goes on where the other left off, the same sound: no fade.
            if !request.rendition { presenter.fadesIn() }
        }
        switch requests.take(\.pause) {
        case true? where !engine.isPaused:
            engine.pause()
            reporter.report(Reports.paused(at: engine.position))
        case false? where engine.isPaused && onDemand:
            _ = engine.resume(jumpsToNewest: false)
            reporter.report(Reports.resumedWherePaused(at: engine.position))
        case false? where engine.isPaused:
            for action in engine.resume() {
                if case .skipped(let removed, let dropped) = action {
                    reporter.report(Reports.skippedToNewest(removed: removed, dropped: dropped))
                }
            }
            reporter.report(Reports.resumedAtLiveEdge(latency: engine.bufferLatency))
        default:
            break
        }
        if requests.liveEdge, !onDemand {
            for case .skipped(let removed, let dropped) in engine.jumpToLiveEdge() {
                reporter.count { $0.caughtUp() }
                Reports.skipped(removed: removed, dropped: dropped).forEach(reporter.report)
            }
        }
        // Media on demand plays at 1.0× from its start: the live latency modes do not apply.
        requests.liveEdge = false
        guard let latency = requests.take(\.latency), latency != engine.parameters, !onDemand else { return }
        let previous = engine.parameters
        engine.parameters = latency
        reporter.report(
            Reports.latencyChanged(from: previous, to: latency, target: engine.target, current: engine.bufferLatency))
    }
}
