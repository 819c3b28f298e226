import Foundation
import LivePlayCore
import LivePlayTransport

/// A player moving from one stream to another: to a preloaded or a cold stream (``LivePlayer/switch(to:from:)``),
/// or to another rendition of the same content at a keyframe both share (``LivePlayer/switchStream(to:)``).
extension LivePlayer {
    /// Switches to `url` (TUIPlayerShortVideo's swipe): the playback running stops showing at once, and when `pool`
    /// has `url` preloaded its poster reaches the sink on its session's next turn (the switch wakes it) and playback
    /// goes on from there; otherwise `url` starts cold. The first picture is reported as `LIVEPLAY_EVT_SWITCHED`
    /// (9012) with the time since this call. The stream taken leaves the pool.
    ///
    /// - Throws: ``LivePlayError`` for a URL that cannot be played.
    public func `switch`(to url: String, from pool: PreloadPool? = nil) throws(LivePlayError) {
        let requestedAt = time.elapsed()
        try Self.check(url)
        let preloaded = pool?.take(url)
        // Nothing of the old stream reaches the sinks after this, and what a sound device still holds of it fades
        // out rather than playing on under the new stream's first picture.
        let (gate, audioSink) = state.withLock { ($0.gate, $0.audioSink.sink) }
        gate?.close()
        audioSink?.fadeOutUnplayed()
        play(url, preloaded: preloaded, switchedAt: requestedAt, rendition: false)
    }

    /// Stops the playback running and plays `preloaded` (or `url` cold) in its place.
    func play(
        _ url: String, preloaded: PreloadPool.Entry?, switchedAt: Duration, rendition: Bool
    ) {
        // One lock for both, so two switches at once cannot each replace the same playback.
        state.withLock {
            let previous = $0.playing
            previous?.cancel()
            $0.playing = tasks.start { [self] in
                guard let preloaded else {
                    _ = await previous?.value
                    return await playback(url: url, switchedAt: switchedAt)
                }
                return await adopt(preloaded, switchedAt: switchedAt, rendition: rendition)
            }
        }
    }

    static func check(_ url: String) throws(LivePlayError) {
        do {
            _ = try StreamURL.kind(of: url)
        } catch {
            throw LivePlayError(.unsupportedURL, error.message)
        }
    }

    /// How long ``switchStream(to:)`` waits for the other rendition to connect and show a keyframe it shares with
    /// the stream playing, before it gives up (`PLAY_ERR_STREAM_SWITCH_FAIL`).
    public static let streamSwitchWait = Duration.seconds(5)
    /// How far apart two renditions' live edges may be and still count as stamped alike (TXLivePlayer's
    /// `switchStream` requires PTS-aligned streams): their newest media is at most this far apart.
    public static let alignmentTolerance = Duration.seconds(1)

    /// TXLivePlayer's `switchStream`: moves playback to another rendition of the same content (another bitrate,
    /// another CDN), whose timestamps are the same as the one playing (PTS-aligned), without a gap or a repeated
    /// picture. The other rendition is preloaded alongside; the switch happens at its first keyframe that the
    /// playback has not reached yet: the stream playing is shown up to that instant, the other from its keyframe
    /// there. Success is `PLAY_EVT_STREAM_SWITCH_SUCC` (2015) with `switch_ms` and the keyframe's `pts_ms`. A
    /// rendition that cannot be reached, or whose timestamps are not within ``alignmentTolerance`` of the one
    /// playing, or that shows no keyframe ahead of the playback within ``streamSwitchWait``, is
    /// `PLAY_ERR_STREAM_SWITCH_FAIL` (−2307) with the `reason`; the stream playing goes on.
    public func switchStream(to url: String) throws(LivePlayError) {
        try switchStream(to: url, backups: nil)
    }

    /// `switchStream`, with the rendition's own backups (a LAS manifest's `backupUrl`s) instead of the configuration's;
    /// `asksStart`: an HTTP-FLV rendition is asked to start at the playback's newest keyframe (LAS's `startPts`).
    func switchStream(to url: String, backups: [String]?, asksStart: Bool = false) throws(LivePlayError) {
        try Self.check(url)
        let requestedAt = time.elapsed()
        let task = tasks.start { [self] in
            await switchRendition(to: url, backups: backups, asksStart: asksStart, requestedAt: requestedAt)
        }
        state.withLock {
            $0.switching?.cancel()
            $0.switching = task
        }
    }

    private func switchRendition(to url: String, backups: [String]?, asksStart: Bool, requestedAt: Duration) async {
        let running = state.withLock { state in state.control.flatMap { control in state.gate.map { (control, $0) } } }
        guard let (playing, gate) = running else {
            return failSwitch("nothing is playing", requestedAt: requestedAt)
        }
        var configuration = state.withLock { $0.configuration }
        if let backups { configuration.backupURLs = backups }
        var cut = RenditionCut(requestedAt: requestedAt, unreachable: "\(Redaction.url(url)) did not connect")
        cut.wait = Self.streamSwitchWait
        cut.alignmentTolerance = Self.alignmentTolerance
        // LAS's smooth switch: the other rendition is asked to start at the next keyframe the playback reaches; a
        // server that honours it sends that keyframe first, one that does not its newest GOP (a later cut).
        var request = url
        if asksStart, (try? StreamURL.kind(of: url)) == .httpFLV, let keyframe = playing.published.nextKeyframe {
            request = LASStart.url(url, startingAt: keyframe.milliseconds)
            cut.asked = keyframe
        }
        // The rendition preloads in a pool of its own until the cut is reached, or the switch fails.
        let pool = PreloadPool(configuration: configuration, clock: clock, logger: logger)
        pool.preload(request)
        if let candidate = pool.entry(request) {
            if let asked = cut.asked { candidate.control.startStandby(at: asked) }
            switch await Self.decide(cut, candidate: candidate, playing: playing, time: time) {
            case (.cut(let start), let decided)?:
                if let asked = decided.asked { startAsked(asked, honoured: decided.honoured == true) }
                // This task, not the playback reaching the cut, stops that playback and plays the other.
                if await Self.reach(start, through: gate, unless: playing), let taken = pool.take(request) {
                    return play(request, preloaded: taken, switchedAt: requestedAt, rendition: true)
                }
            case (.fail(let reason), _)?:
                failSwitch(reason, requestedAt: requestedAt)
            default:
                break
            }
        }
        await pool.removeAll()
    }

    /// What the other rendition's server did with the start it was asked for: told with the switch (2015's
    /// `start_pts_ms`, `start_pts_honoured`) and logged.
    private func startAsked(_ asked: MediaTimestamp, honoured: Bool) {
        logger.debug(
            honoured
                ? "the server started the rendition at the keyframe asked for (startPts)"
                : "the server did not honour startPts: the switch cuts at a keyframe both renditions share",
            metadata: ["startPts": "\(asked.milliseconds)"])
        state.withLock { $0.renditions?.startAsked = (asked, honoured) }
    }

    /// Waits for the playback to reach the cut (``SinkGate/reach(_:)``), or to run dry before it (a rendition too heavy
    /// for the link: it stalled, or holds less than 150 ms and nothing up to the cut): what it lacks before the cut is
    /// skipped rather than waited for, and the other rendition plays from its keyframe at once. `false` when the gate
    /// closed otherwise.
    private static func reach(_ cut: MediaTimestamp, through gate: SinkGate, unless playing: PlaybackControl) async -> Bool {
        await withTaskGroup(of: Bool?.self) { group in
            group.addTask { await gate.reach(cut) }
            group.addTask {
                for await published in playing.publications() where published.runsDry(before: cut) { return true }
                return nil
            }
            defer { group.cancelAll() }
            while let next = await group.next() {
                guard let reached = next else { continue }
                // A stall first: nothing more of the stream playing reaches the sinks.
                if reached { gate.close() }
                return reached
            }
            return false
        }
    }

    /// Follows what both sessions publish at the end of each of their turns (the other rendition's and the
    /// playback's) until ``RenditionCut`` decides (or the switch is cancelled: nil). A timer at the deadline decides
    /// too when the other session publishes nothing (it ended, and its pool waits to retry).
    private static func decide(
        _ cut: RenditionCut, candidate: PreloadPool.Entry, playing: PlaybackControl, time: Stopwatch
    ) async -> (RenditionCut.Action, RenditionCut)? {
        enum Turn: Sendable {
            case candidate(PublishedPlayback)
            case playing(PublishedPlayback)
            case deadline
        }
        let (turns, turn) = AsyncStream.makeStream(of: Turn.self, bufferingPolicy: .bufferingNewest(4))
        return await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await published in candidate.control.publications() { turn.yield(.candidate(published)) }
            }
            group.addTask {
                for await published in playing.publications() { turn.yield(.playing(published)) }
            }
            group.addTask {
                try? await time.sleep(cut.requestedAt + cut.wait)
                turn.yield(.deadline)
            }
            defer { group.cancelAll() }
            var cut = cut
            var (other, shown) = (PublishedPlayback?.none, PublishedPlayback?.none)
            for await next in turns {
                switch next {
                case .candidate(let published): other = published
                case .playing(let published):
                    shown = published
                    // The playback's turns alone decide nothing until the other rendition has published, or the
                    // deadline passed (its own turn may be among those the newest displaced).
                    if other == nil, time.elapsed() < cut.requestedAt + cut.wait { continue }
                case .deadline: other = nil
                }
                let observation = RenditionCut.Observation(
                    candidateReady: candidate.isReady, candidateLiveEdge: other?.liveEdge,
                    candidateKeyframes: other?.standbyKeyframes ?? [], candidatePoster: other?.posterPTS,
                    playingLiveEdge: shown?.liveEdge, shown: shown?.lastPicture?.pts)
                switch cut.decide(observation, at: time.elapsed()) {
                case .wait: continue
                case .startAt(let keyframe): candidate.control.startStandby(at: keyframe)
                case let action: return (action, cut)
                }
            }
            return nil
        }
    }

    /// `PLAY_ERR_STREAM_SWITCH_FAIL` to the listener: the stream playing goes on.
    private func failSwitch(_ reason: String, requestedAt: Duration) {
        let waited = (time.elapsed() - requestedAt).milliseconds
        deliver(
            .event(
                PlayEvent(
                    .streamSwitchFailed, "switchStream failed: \(reason)", elapsedMilliseconds: waited,
                    parameters: ["reason": .string(reason), "waited_ms": .int(waited)])))
    }

    /// Plays a preloaded stream's running session as this player's: its updates to this player's listener, this
    /// player's sinks and settings on it, then preloading ends.
    private func adopt(
        _ preloaded: PreloadPool.Entry, switchedAt: Duration, rendition: Bool
    ) async -> PlaybackOutcome {
        let control = preloaded.control
        let (configuration, gate) = state.withLock { ($0.configuration, Self.attach(control, to: &$0)) }
        control.setVideoSink(gate.video)
        control.setAudioSink(gate.audio)
        let outcome = await delivering(configuration) { delivery in
            preloaded.route.redirect(to: { delivery.post($0) })
            control.switchedTo(at: switchedAt, on: time, preloaded: preloaded.isReady, rendition: rendition)
            return await withTaskCancellationHandler {
                await preloaded.task?.value ?? .stopped
            } onCancel: {
                preloaded.task?.cancel()
            }
        }
        detach(control)
        keepPosition(of: preloaded.url, after: outcome, in: configuration.resume)
        return outcome
    }
}
