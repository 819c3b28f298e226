import LivePlayCore

/// Media on demand: seeking, the position from the start of the media, and a seek past its end.
extension LiveSession {
    /// The position in seconds: from the start of the media on demand, on the session's timeline live.
    var progressPosition: Double {
        if let timeShift = timeShiftProgress { return timeShift.position }
        guard playOut.onDemand else { return Double(playOut.engine.position?.milliseconds ?? 0) / 1000 }
        return intake.mediaSeconds(at: playOut.engine.position)
    }

    /// The length of the media on demand, or of the time-shift window, in seconds.
    var mediaLength: Double { timeShiftProgress?.length ?? intake.mediaDuration ?? 0 }

    /// Carries out a seek asked for through ``control``; returns how to read on when the source must be
    /// read again: from its start (the target is before what has arrived), or from the keyframe a file's
    /// index points to (far ahead or back).
    func carryOut(_ seek: PendingSeek) -> LoopExit? {
        let target: Duration
        switch seek {
        case .to(let position): target = position
        case .by(let delta):
            // A seek under way until the packets reach its target: a relative seek goes on from that target.
            let underWay = intake.admission.unreachedSeek == nil ? nil : seekTarget
            target = max(.zero, (underWay ?? .milliseconds(Int64((progressPosition * 1000).rounded()))) + delta)
        }
        if timeShift != nil, everConnected {
            seekTarget = target
            return seekInTimeShift(to: target)
        }
        guard playOut.onDemand || !everConnected else {
            logger.debug("seek ignored: live stream")
            return nil
        }
        seekTarget = target
        let wasPaused = playOut.engine.isPaused
        playOut.restart()
        reporter.restartProgress()
        reporter.report(Reports.seekStarted(to: target))
        if wasPaused { reporter.report(Reports.resumedBySeek(to: target)) }
        switch intake.admission.seek(to: MediaTimestamp(milliseconds: target.milliseconds + intake.timelineOffset)) {
        case .offset(let position)?: return readAgain(from: position)
        case .start?: return readAgain(from: nil)
        case nil: return nil
        }
    }

    /// Forgets where reading had got to, for a new read from `offset` (`nil`: the start).
    func readAgain(from offset: Int64?) -> LoopExit {
        playOut.readAgain()
        intake.readAgain()
        taps.readAgain()
        return .readFrom(offset)
    }

    /// How the loop ends on `ending`: on demand, a seek past the end played nothing.
    func finished(_ ending: PlayOut.Ending) -> LoopExit {
        if case .ended = ending, playOut.onDemand, let target = intake.admission.unreachedSeek {
            // Read to the end without reaching the seek's target (`--start` past the end): nothing was played.
            let length = intake.mediaDuration ?? intake.mediaSeconds(at: intake.admission.newestReceived)
            reporter.report(Reports.seekPastTheEnd(target: intake.mediaSeconds(at: target), length: length))
            return .finished(.ended)
        }
        if case .ended = ending, playOut.onDemand, let (received, promised) = intake.truncation {
            reporter.report(Reports.truncated(received: received, promised: promised, cutInsideTag: intake.cutInsideTag))
        }
        return .finished(reporter.ended(ending, onDemandPosition: playOut.onDemand ? progressPosition : nil))
    }
}
