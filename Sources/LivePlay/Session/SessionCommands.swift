import LivePlayCore
import LivePlayTransport

/// The turn's first step: each command sent to ``control`` since the last turn goes, in the order sent, to the one
/// stage that acts on it. Nothing is merged, except seeks in a row: they become one, and a relative seek moves the
/// target of the seek before it (mpv's queued seek), so ← ← goes twice as far back, whether the two come in one turn
/// or the second while the first is still reading again (``LiveSession/seekTarget``).
extension LiveSession {
    /// A seek asked for and not yet carried out.
    enum PendingSeek {
        /// To a position from the start of the media (or of the time-shift window).
        case to(Duration)
        /// By an offset from where playback is, or from the target of a seek still under way.
        case by(Duration)

        /// This seek, then one by `delta`.
        func moved(by delta: Duration) -> PendingSeek {
            switch self {
            case .to(let position): .to(max(.zero, position + delta))
            case .by(let offset): .by(offset + delta)
            }
        }
    }

    /// Routes `commands`; returns how to read on when one of them needs the source read again (a seek, a resume or the
    /// live edge in a time-shift ring): the last such one's.
    func route(_ commands: [PlaybackCommand], to handoff: TransportHandoff<SupervisorEvent>) -> LoopExit? {
        var exit: LoopExit?
        var seek: PendingSeek?
        for command in commands {
            switch command {
            case .player(.seek(to: let position)):
                seek = .to(max(.zero, position))
                continue
            case .player(.seekBy(let delta)):
                seek = seek?.moved(by: delta) ?? .by(delta)
                continue
            default:
                break
            }
            // What comes after a seek applies where the seek goes: the seek first.
            if let pending = seek.take() { exit = carryOut(pending) ?? exit }
            switch command {
            case .player(let command): exit = carryOut(command, handoff) ?? exit
            case .videoSink(let held): playOut.presenter.videoSink = held.sink
            case .audioSink(let held): playOut.presenter.audioSink = held.sink
            case .settings(let settings): playOut.settings = settings
            case .standbyBudget(let budget):
                playOut.standby.follow(budget, dropped: playOut.engine.buffer.droppedVideoFrames)
            case .standbyStart(let keyframe): playOut.standby.start = keyframe
            case .switched(let request): playOut.switched(request)
            }
        }
        if let pending = seek { exit = carryOut(pending) ?? exit }
        return exit
    }

    /// A front end's command, to the stage that acts on it: pause, the live edge and latency to the play-out stage,
    /// volume, mute and layout to its settings (the presenter follows them), recordings to the taps, a track choice to
    /// the transport's supervisor. Seeks are merged and carried out by ``route(_:to:)``.
    private func carryOut(_ command: PlayerCommand, _ handoff: TransportHandoff<SupervisorEvent>) -> LoopExit? {
        switch command {
        case .seek, .seekBy: break
        case .pause: playOut.pause(true)
        case .resume: return resume()
        case .togglePause:
            guard playOut.engine.isPaused else {
                playOut.pause(true)
                break
            }
            return resume()
        case .goToLiveEdge:
            if timeShift != nil, playOut.onDemand { return goLiveInTimeShift() }
            playOut.goToLiveEdge()
        case .latency(let parameters): playOut.retune(parameters)
        case .selectTrack(let kind, let track): relay(TrackSelection(kind: kind, track: track), to: handoff)
        case .startRecording(let options):
            taps.record(options, video: intake.videoConfiguration, audio: intake.audioConfiguration)
        case .stopRecording: taps.record(nil, video: nil, audio: nil)
        case .volume(let volume): playOut.settings.volume = min(100, max(0, volume))
        case .changeVolume(let delta): playOut.settings.volume = min(100, max(0, playOut.settings.volume + delta))
        case .mute(let muted): playOut.settings.muted = muted
        case .toggleMute: playOut.settings.muted.toggle()
        case .volumeEvaluation(let interval):
            playOut.settings.volumeEvaluation = interval.map { max($0, .milliseconds(100)) }
        case .renderMode(let mode): playOut.settings.renderMode = mode
        case .rotation(let rotation): playOut.settings.rotation = rotation
        case .rotateClockwise: playOut.settings.rotation = playOut.settings.rotation.turnedClockwise
        case .hardwareDecoding(let hardware): playOut.decoding.decode(on: hardware)
        }
        return nil
    }

    /// Resumes: in a time-shift ring by reading it again where playback paused, elsewhere in the play-out stage.
    private func resume() -> LoopExit? {
        if let resumed = resumeInTimeShift() { return resumed }
        playOut.pause(false)
        return nil
    }

    /// A track choice, to the transport's supervisor; kept for a read again.
    private func relay(_ selection: TrackSelection, to handoff: TransportHandoff<SupervisorEvent>) {
        handoff.request(selection)
        switch selection.kind {
        case .video: tracks.video = selection.track
        case .audio: tracks.audio = selection.track
        }
    }
}

extension Optional {
    /// The value, leaving nil behind.
    fileprivate mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}
