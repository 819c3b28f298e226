import LivePlayBuffering
import LivePlayCore
import LivePlayDecode

/// The play-out stage's output: what the decoders returned, to the presenter; what the presenter showed, to the
/// reporter and the control's owner; a preloading session's newest GOP and poster.
extension PlayOut {
    /// Hands the sinks what is due; the first picture is shown as soon as it is decoded.
    func present() {
        guard let position = engine.position else { return }
        // The first picture shows as soon as it is decoded, also when playback begins at once (a preloaded stream
        // switched to): a keyframe's picture can be stamped after its decode time (B-frames' delay).
        let first = presenter.framesShown == 0 && presenter.queuedVideoFrames > 0
        presented(
            engine.state == .playing && !first
                ? presenter.present(at: position, rate: engine.rate) : presenter.showFirstPicture(at: position))
    }

    /// Passes on what the presenter did: the picture shown to the reporter and the control's owner (and a switch's
    /// report), the sound's time and level, what went out with the pictures, a down-mix begun.
    func presented(_ presentation: Presentation) {
        if let audio = presentation.playedAudio { reporter.count { $0.played(audio: audio) } }
        volume.heard(presentation)
        if let frame = presentation.picture {
            published.lastPicture = frame
            reporter.shown(frame)
        }
        for (message, pts) in presentation.shownSEI { reporter.report(Reports.sei(message, pts: pts)) }
        for caption in presentation.endedCaptions { reporter.report(Reports.caption(caption)) }
        if let frame = presentation.picture, let report = standby.shown(frame) { reporter.report(report) }
        if let change = presentation.downmixChange {
            reporter.report(Reports.downmix(from: change.layout, channels: change.channels))
        }
    }

    /// Preloading (``StandbyPlayOut``): the newest GOP kept, a new keyframe's poster put in front; what it holds is
    /// published for the pool and a rendition switch.
    func keepNewestGroup() {
        let poster = standby.keepNewestGroup(
            &engine, startingAt: standby.start, decodes: decodes, decodePoster: poster(of:))
        if let poster {
            firstFrame()
            presenter.replacePoster(poster)
        }
        published.standbyBytes = engine.buffer.byteCount
        published.standbyKeyframes = engine.buffer.keyframes.map(\.pts)
        published.posterPTS = standby.posterPTS
    }

    /// The first keyframe, decoded on its own ahead of the playing decoder (which holds a B-frame stream back by its
    /// reorder delay), goes to the sink as the first picture at once: not after this turn has decoded the rest of
    /// what it released (a GOP cache's burst, 20–30 ms of decoding at 720p).
    func showAtOnce(_ packet: EncodedPacket) {
        guard packet.kind == .video, packet.isKeyframe, decoding.decodesVideo, let picture = poster(of: packet) else {
            return
        }
        firstFrame()
        presenter.enqueue(picture, isPoster: true)
        present()
    }

    private func poster(of keyframe: EncodedPacket) -> VideoFrame? {
        decoding.newestVideo.flatMap { posters.picture(of: keyframe, $0) }
    }

    /// Carries out what the decode stage did: pictures and sound to the presenter, problems reported.
    func take(_ outputs: [DecodeStage.Output]) {
        for output in outputs {
            switch output {
            case .video(let frame):
                firstFrame()
                let (changes, problem) = captions.decode(frame)
                for change in changes { presenter.captionChanged(change) }
                if let problem { reporter.report(problem) }
                presenter.enqueue(frame)
                if let position = engine.position { presenter.dropSupersededPictures(at: position) }
            case .audio(let frame):
                beginGate.soundDecoded()
                if !decoding.decodesVideo, !videoAnnounced { firstFrame() }
                presenter.enqueue(frame)
            case .started, .hardware:
                let decoder = decoding.videoDecoder ?? ""
                reporter.count { $0.decoder = decoder }
                if case .hardware(let notice, _) = output, Reports.hardware(notice, decoder: decoder) == nil {
                    logger.debug("video decoder", metadata: ["decoder": "\(decoder)", "hardware": "\(notice)"])
                }
                if let report = Reports.decoding(output) { reporter.report(report) }
            case .videoDecoderFailedToOpen, .audioDecoderFailedToOpen, .failed:
                if let report = Reports.decoding(output) { reporter.report(report) }
            }
        }
    }

    /// Playback ends (played out, stopped, failed): the caption on screen ends with the last picture shown.
    func picturesEnded() {
        presented(presenter.picturesEnded())
    }

    private func firstFrame() {
        guard !sawFrame else { return }
        sawFrame = true
        reporter.reached(\.firstDecoded)
    }
}
