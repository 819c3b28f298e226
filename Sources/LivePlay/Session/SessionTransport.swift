import LivePlayCore
import LivePlayFLV
import LivePlayTransport

/// What the transport delivers, carried out on a turn of the play loop: the connection's state (attempts, losses,
/// the stream's begin), its media through the intake stage to play-out and the session's taps.
extension LiveSession {
    /// Carries out what the supervisor says, in order.
    func apply(_ update: SupervisorEvent) -> PlaybackOutcome? {
        switch update {
        case .attempt:
            reporter.connectionCount += 1
            beginConnection()
        case .event(.onDemand(let length)):
            guard !playOut.onDemand else { break }
            playOut.playOnDemand()
            taps.holdUntilPlayed()
            logger.debug("media on demand", metadata: ["bytes": "\(length)"])
        case .event(let event):
            // Reading the time-shift ring again (a seek, going live) connects to nothing: not told as a connection.
            if timeShift != nil, everConnected, event.isConnectionStep { break }
            switch event {
            case .resolved(let addresses): logger.debug("resolved", metadata: ["addresses": "\(addresses)"])
            case .connected: everConnected = true
            case .streamBegin: streaming = true
            default: break
            }
            reporter.transport(event)
        case .media(let byteCount, let elements):
            reporter.count { $0.received(bytes: byteCount) }
            reporter.reached(\.firstByte)
            streaming = true
            let takenAt = elapsed
            for element in elements { take(element, arrivedAt: takenAt) }
            taps.readTaken(at: takenAt, bytes: byteCount, connection: reporter.connectionCount, turn: turns)
        case .slowLink(let goodput):
            reporter.report(Reports.slowLink(receiving: goodput))
        case .unplayable(let message):
            return reporter.fail(.unplayable, message)
        case .lost(let error, let action):
            if mediaLostAt == nil { mediaLostAt = elapsed }
            playOut.connectionLost(after: intake.admission.newestVideo)
            let (lost, isFinal) = Reports.lost(error, streaming: streaming)
            // With backups a source's refusal ends only its turn; −2301 comes once every source has had its retries.
            let hasBackups = sourceURLs.count > 1
            guard !isFinal || hasBackups else { return reporter.fail(lost.code, lost.message) }
            if !isFinal { reporter.report(lost) }
            switch action {
            case .nextSource(let index, _):
                let sourceURL = sourceURLs[index]
                reporter.source = Redaction.url(sourceURL)
                reporter.report(Reports.sourceChanged(to: index, url: sourceURL, after: error))
            case .retry(let attempt, _):
                reporter.reconnecting(attempt: attempt, of: configuration.connectRetryCount, after: error)
            case .giveUp(let attempts):
                // What arrived before the loss is played out first, then the error is reported.
                let message = Reports.gaveUpMessage(after: attempts, everConnected: everConnected, error)
                playOut.finish(.failed(.networkDisconnected, message, error.detail))
            }
        case .endedInsideTag(let bytes):
            intake.cutInsideTag = bytes
        case .finished:
            playOut.finish(.ended)
        case .moved(let tcUrl):
            reporter.report(Reports.reconnectRequested(to: tcUrl))
        case .firstSourceBack:
            reporter.source = Redaction.url(sourceURLs[0])
            reporter.report(Reports.sourceChanged(to: 0, url: sourceURLs[0], after: nil))
        }
        return nil
    }

    func beginConnection() {
        streaming = false
        playOut.beginConnection()
        intake.beginConnection(outage: mediaLostAt.map { elapsed - $0 }, onDemand: playOut.onDemand)
    }

    /// One FLV element through the intake stage, and on to play-out. Every packet of a read arrived when the read
    /// did (`arrivedAt`), not when the loop got to it: what the engine measures of the network is then the network,
    /// and exactly what an arrival trace records (so a replay sees what the session saw).
    func take(_ element: FLVElement, arrivedAt: Duration) {
        // Emptied after too: a packet's payload, given back, is not still held here when the demuxer reuses it.
        defer { steps.removeAll(keepingCapacity: true) }
        intake.take(element, onDemand: playOut.onDemand, at: arrivedAt, into: &steps)
        for step in steps {
            switch step {
            case .report(let report): reporter.report(report)
            case .mediaArrived: mediaLostAt = nil
            case .play(let packet): taps.take(packet, expectsVideo: intake.expectsVideo)
            case .videoConfiguration(let video): taps.configure(video: video)
            case .audioConfiguration(let audio): taps.configure(audio: audio)
            default: break
            }
            if case .report = step { continue }
            if case .mediaArrived = step { continue }
            playOut.take(step, arrivedAt: arrivedAt)
        }
    }

    /// Tells the taps how far playback got, and reports what they did.
    func applyTaps(at now: Duration) {
        if playOut.onDemand, let position = playOut.engine.position { taps.played(upTo: position) }
        taps.reports(at: now).forEach(reporter.report)
    }

    /// At the session's end: a recording of media on demand keeps what was played (all of it at its end; up to where
    /// it stopped otherwise), then every tap finishes and says so.
    func finishTaps(after outcome: PlaybackOutcome) {
        taps.played(upTo: outcome == .ended ? nil : playOut.engine.position)
        taps.finish(at: elapsed).forEach(reporter.report)
    }
}
