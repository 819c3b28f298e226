import LivePlayBuffering
import LivePlayCore
import LivePlayDecode

/// The play-out stage's input: what the intake stage passed on (packets into the jitter buffer, configurations to the
/// decoders, what the stream announced to the presenter), and the transport's end.
extension PlayOut {
    func beginConnection() {
        transportFinished = false
        videoDrained = false
        sawFrame = false
        connectionMedia = false
        beginGate.connectionBegan()
        // What the new connection's header and metadata say is learned again (``MediaIntake/Step/videoAnnounced``).
        videoAnnounced = false
    }

    /// What the intake stage passed on: packets, configurations, what the stream announced.
    ///
    /// - Parameter arrivedAt: when the packet arrived (its read); now when not given.
    func take(_ step: MediaIntake.Step, arrivedAt: Duration? = nil) {
        switch step {
        case .arrived(let packet):
            // The decoders follow configuration changes by the packets' order of arrival.
            decoding.received(packet)
            reporter.count { $0.received(packet) }
            if packet.kind == .audio { reporter.reached(\.firstAudio) }
            beginGate.received(packet.kind)
        case .firstKeyframe(let packet):
            reporter.reached(\.firstKeyframe)
            reporter.report(Reports.firstKeyframe(packet))
        case .play(let packet):
            // Probe mode decodes nothing: the jitter buffer paces the packets' times and sizes, not their bytes,
            // and the bytes go back to the demuxer at once.
            if !decodes { decoding.payloads.giveBack(packet.payload) }
            play(decodes ? packet : packet.droppingPayload(), at: arrivedAt ?? reporter.time.elapsed)
        case .videoConfiguration(let video):
            engine.expectsVideo = true
            if decodes { take(decoding.received(video)) }
        case .audioConfiguration(let audio):
            if decodes { take(decoding.received(audio)) }
        case .videoAnnounced:
            engine.expectsVideo = true
            videoAnnounced = true
        case .videoFlagged:
            videoAnnounced = true
        case .colorInfo(let info, let from):
            presenter.colorChanged(to: info, from: from)
        case .audioSilence:
            presenter.silenceBegan()
        case .sei(let messages, let pts):
            presenter.seiArrived(messages, pts: pts)
        case .caption(let change):
            presenter.captionChanged(change)
        case .captionData(let data, let at):
            captions.received(data, at: at)
        case .seekLanded(let keyframe, let target):
            let start = accurateSeek ? max(keyframe, target) : keyframe
            if start > keyframe {
                engine.startAt(start)
                presenter.startAt(start)
            }
            reporter.report(Reports.seekDone(at: start, keyframe: keyframe, target: target))
        case .report(let report):
            reporter.report(report)
        case .mediaArrived:
            break
        }
    }

    /// A packet to play, into the jitter buffer.
    func play(_ packet: EncodedPacket, at now: Duration) {
        if !connectionMedia {
            connectionMedia = true
            engine.connectionRestarted()
        }
        for action in engine.receive(packet, at: now) {
            if case .skipped(let removed, let dropped) = action {
                reporter.report(Reports.shedAtLimit(removed: removed, dropped: dropped))
            }
        }
    }

    /// A live connection was lost after `lastVideo`: what the decoder holds back (B-frames' reorder delay) is
    /// drained once that packet has gone in, so those pictures are shown, not lost with the connection. Media on
    /// demand resumes where it broke off: its decoder simply goes on.
    func connectionLost(after lastVideo: MediaTimestamp?) {
        if !onDemand { decoding.connectionLost(after: lastVideo) }
    }

    /// The transport is done; what it delivered is played out first, then playback ends as `how` says.
    func finish(_ how: Ending) {
        transportFinished = true
        engine.inputEnded = true
        if ending == nil { ending = how }
    }
}
