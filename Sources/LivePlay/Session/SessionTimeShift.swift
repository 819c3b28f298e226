import LivePlayCore
import LivePlayTransport

/// Time-shift of a live stream (``LivePlayConfiguration/timeShift``): the stream is recorded into a
/// ``TimeShiftRing`` while the play loop reads the ring, at its live edge or back in it.
///
/// The recorder is one more child task of the session (it reads the live source as the supervisor would, on the
/// session's thread); the play loop's supervisor reads the ring through ``TimeShiftSource``. A seek inside the
/// window reads the ring again from the keyframe at or before the target and plays it at 1.0× (like media on
/// demand); going live reads it again from its newest keyframe under the latency mode.
extension LiveSession {
    func playTimeShifted(_ live: any ByteSource, _ options: TimeShiftRing.Options) async -> PlaybackOutcome {
        let ring: TimeShiftRing
        do {
            ring = try TimeShiftRing(options: options)
        } catch {
            return reporter.fail(.fileNotFound, "time-shift: \(error.message)")
        }
        defer { ring.close() }
        let source = TimeShiftSource(
            live: live, ring: ring, retryInterval: configuration.connectRetryInterval, sleep: sleep)
        timeShift = source
        playOut.readsFromRing = true
        playOut.published.timeShiftRing = ring
        defer {
            timeShift = nil
            playOut.readsFromRing = false
            playOut.published.timeShiftRing = nil
        }
        return await withTaskGroup(of: Void.self) { group in
            group.addTask { await source.record() }
            let outcome = await play([source])
            group.cancelAll()
            return outcome
        }
    }

    /// The window the viewer can seek in, on the session's timeline (milliseconds), when time-shift is on.
    var timeShiftWindow: ClosedRange<Int64>? {
        guard let span = timeShift?.ring.span else { return nil }
        return (Int64(span.lowerBound) + intake.timelineOffset)...(Int64(span.upperBound) + intake.timelineOffset)
    }

    /// A seek in the time-shift window: `target` from the window's start, clamped to the window. Read again from
    /// the keyframe at or before it, played at 1.0×; at (or past) the live edge it is a go-live.
    /// `tellsResume`: a seek while paused ends the pause, told as 9008 (a resume that reads again tells its own).
    func seekInTimeShift(to target: Duration, tellsResume: Bool = true) -> LoopExit? {
        guard let window = timeShiftWindow else { return nil }
        let time = min(window.upperBound, window.lowerBound + target.milliseconds)
        if window.upperBound - time < playOut.engine.parameters.cacheTime.milliseconds, playOut.onDemand {
            return goLiveInTimeShift()
        }
        let wasPaused = playOut.engine.isPaused && tellsResume
        playOut.restart()
        playOut.playBehindLive()
        reporter.restartProgress()
        reporter.report(Reports.seekStarted(to: .milliseconds(time - window.lowerBound)))
        if wasPaused { reporter.report(Reports.resumedBySeek(to: .milliseconds(time - window.lowerBound))) }
        let ringTime = time - intake.timelineOffset
        let exit = readAgain(from: max(1, ringTime))
        // After reading again the session's timeline is the ring's own.
        _ = intake.admission.seek(to: MediaTimestamp(milliseconds: ringTime))
        return exit
    }

    /// A resume at the live edge of a time-shifted stream goes on where it paused (what came meanwhile is in the
    /// ring), not at the newest media as a live resume does: the ring is read again from there, at 1.0×.
    func resumeInTimeShift() -> LoopExit? {
        guard timeShift != nil, !playOut.onDemand, playOut.engine.isPaused else { return nil }
        let position = progressPosition
        reporter.report(Reports.resumedWherePaused(at: playOut.engine.position))
        return seekInTimeShift(to: .milliseconds(Int64((position * 1000).rounded())), tellsResume: false)
    }

    /// Back to the live edge from behind it: the ring is read again from its newest keyframe, under the latency
    /// mode. Told as a skip (9003, 2107) of how far behind playback was.
    func goLiveInTimeShift() -> LoopExit? {
        guard playOut.onDemand, let window = timeShiftWindow else { return nil }
        let behind = window.upperBound - (playOut.engine.position?.milliseconds ?? window.upperBound)
        let dropped = playOut.engine.buffer.content.videoPackets
        playOut.restart()
        playOut.playLive()
        reporter.restartProgress()
        Reports.skipped(removed: .milliseconds(max(0, behind)), dropped: dropped).forEach(reporter.report)
        return readAgain(from: nil)
    }

    /// Where playback is in the window and how long the window is, seconds, for progress events.
    var timeShiftProgress: (position: Double, length: Double, behind: Double)? {
        guard let window = timeShiftWindow else { return nil }
        let position = playOut.engine.position?.milliseconds ?? window.upperBound
        return (
            Double(max(0, position - window.lowerBound)) / 1000, Double(window.upperBound - window.lowerBound) / 1000,
            Double(max(0, window.upperBound - position)) / 1000
        )
    }
}
