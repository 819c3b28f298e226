import Foundation
import LivePlayBuffering
import LivePlayCore
import LivePlayFLV
import LivePlayRecording
import LivePlayManifest
import LivePlayTransport

/// One event the session reports, before it is stamped with the session's time.
struct Report {
    var code: PlayEventCode
    var message: String
    var parameters: [String: PlayEventValue] = [:]

    init(_ code: PlayEventCode, _ message: String, _ parameters: [String: PlayEventValue] = [:]) {
        self.code = code
        self.message = message
        self.parameters = parameters
    }
}

/// What the stages did, as TXLivePlayer events: every message and parameter key the session reports is
/// written here, in `PlaybackReports.swift` (recording, decoding, presenting, the status) and in
/// `StreamContentReports.swift` (what the stream itself carries), as a pure function of typed
/// stage outputs (docs/event-log.md documents them; the docs test holds the two together). The session decides
/// *when*; these files decide *what is said*.
enum Reports {
    // MARK: Transport

    static func connected(to serverAddress: String) -> Report {
        Report(.connectSucceeded, "connected to \(serverAddress)", ["SERVER_IP": .string(serverAddress)])
    }

    static var streamBegan: Report { Report(.rtmpStreamBegin, "the server started the stream") }

    /// Why a connection failed, and whether the failure is final (no retry helps).
    /// - Parameter streaming: the stream had begun, so garbage is a broken stream rather than a failed handshake.
    static func lost(_ error: TransportError, streaming: Bool) -> (report: Report, isFinal: Bool) {
        // The sentence leads; what the library underneath said is kept as the detail.
        var parameters: [String: PlayEventValue] = error.detail.map { ["detail": .string($0)] } ?? [:]
        switch error.code {
        case .dnsFailed: return (Report(.dnsFailed, error.message, parameters), false)
        case .connectFailed: return (Report(.serverConnectFailed, error.message, parameters), false)
        case .handshakeFailed: return (Report(.handshakeFailed, error.message, parameters), false)
        case .serverClosed: return (Report(.serverDisconnected, error.message, parameters), false)
        case .noData, .tooSlow:
            parameters["reason"] = .string(error.code.rawValue)
            return (Report(.receiveDataLag, error.message, parameters), false)
        case .httpStatus:
            let status = error.httpStatus ?? 0
            if status == 404 { return (Report(.fileNotFound, error.message), true) }
            if (400..<500).contains(status) { return (Report(.serverRefused, error.message), true) }
            parameters["http_status"] = .int(Int64(status))
            return (Report(.serverConnectFailed, error.message, parameters), false)
        case .invalidURL, .notFound: return (Report(.fileNotFound, error.message), true)
        case .openFailed: return (Report(.unplayable, error.message), true)
        case .protocolViolation where !streaming:
            // Garbage or a hostile message before the stream began: the handshake failed.
            parameters["reason"] = .string(error.code.rawValue)
            return (Report(.handshakeFailed, error.message, parameters), false)
        default: return (Report(.readWriteFailed, error.message, parameters), false)
        }
    }

    static func retrying(attempt: Int, of retryCount: Int, after error: TransportError) -> Report {
        var parameters: [String: PlayEventValue] = [
            "EVT_PARAM1": .int(Int64(attempt)), "reason": .string(error.code.rawValue),
        ]
        if let detail = error.detail { parameters["detail"] = .string(detail) }
        return Report(.reconnect, "reconnecting (attempt \(attempt) of \(retryCount)): \(error.message)", parameters)
    }

    /// The final error's sentence: "lost" only for something that was connected.
    static func gaveUpMessage(after attempts: Int, everConnected: Bool, _ error: TransportError) -> String {
        if everConnected {
            return attempts == 0
                ? "the connection was lost: \(error.message)"
                : "the connection was lost and \(attempts) reconnect attempts failed: \(error.message)"
        }
        return attempts == 0
            ? "could not connect: \(error.message)"
            : "could not connect in \(attempts + 1) attempts: \(error.message)"
    }

    static func slowLink(receiving rate: Double) -> Report {
        Report(.receiveDataLag, "receiving \(Int(rate * 100)) % of real time", ["goodput": .double(rate)])
    }

    // MARK: Demux

    static func timestampsJumped(by jump: Duration) -> Report {
        Report(
            .videoDiscontinuity, "timestamps jumped \(jump / .milliseconds(1)) ms; the timeline follows on",
            ["jump_ms": .int(Int64(jump / .milliseconds(1))), "reason": .string("timestamp_jump")])
    }

    static func mediaResumed(after gap: Duration) -> Report {
        Report(
            .videoDiscontinuity, "media resumed after a \(gap / .milliseconds(1)) ms gap",
            ["gap_ms": .int(Int64(gap / .milliseconds(1)))])
    }

    static func firstKeyframe(_ packet: EncodedPacket) -> Report {
        Report(.receivedFirstKeyframe, "first video keyframe received", ["pts_ms": .int(packet.pts.milliseconds)])
    }

    /// 9017: a server's reconnect request, carried out.
    /// The source failed (`error`; nil: the first source answered a probe again); playback goes on from source `index`
    /// (0 the URL, 1… its backups), `url`.
    static func sourceChanged(to index: Int, url: String, after error: TransportError?) -> Report {
        let shown = Redaction.url(url)
        let which = index == 0 ? "the first source" : "backup \(index)"
        let why = error?.message ?? "the first source plays again"
        return Report(
            .sourceChanged, "\(why): playing from \(which), \(shown)",
            ["source": .int(Int64(index)), "url": .string(shown), "reason": .string(error?.code.rawValue ?? "back")])
    }

    /// A LAS manifest's renditions, lowest bitrate first, and the one playback starts on.
    static func renditions(_ manifest: LASManifest, playing start: LASManifest.Rendition) -> Report {
        let list = manifest.renditions.map { rendition in
            "\(rendition.id):\(rendition.maxBitrate):\(rendition.width ?? 0)x\(rendition.height ?? 0)"
                + (rendition.hidden ? ":hidden" : "") + (rendition.disabledFromAdaptive ? ":manual" : "")
        }
        let shown = Redaction.url(start.url)
        return Report(
            .renditions, "\(manifest.renditions.count) renditions; playing \(start.id), \(start.label): \(shown)",
            ["renditions": .string(list.joined(separator: ",")), "count": .int(Int64(manifest.renditions.count)),
             "rendition": .int(Int64(start.id)), "url": .string(shown)])
    }

    static func reconnectRequested(to tcUrl: String?) -> Report {
        guard let tcUrl else {
            return Report(.reconnectRequested, "the server asked for a reconnect: reconnecting", [:])
        }
        let shown = Redaction.url(tcUrl)
        return Report(
            .reconnectRequested, "the server asked for a reconnect: moving to \(shown)", ["tc_url": .string(shown)])
    }

    /// `LIVEPLAY_EVT_AUDIO_DOWNMIX` (9019): multichannel sound is folded to stereo for the sound sink.
    static func downmix(from layout: String, channels: Int) -> Report {
        Report(
            .audioDownmix, "\(layout) sound down-mixed to stereo",
            ["layout": .string(layout), "channels": .int(Int64(channels)), "to": .string("stereo")])
    }

    static func malformedData(_ warning: FLVError, count: Int, suppressed: Int) -> Report {
        var parameters: [String: PlayEventValue] = [
            "reason": .string(warning.code.rawValue), "count": .int(Int64(count)),
            "suppressed": .int(Int64(suppressed)),
        ]
        if let offset = warning.offset { parameters["offset"] = .int(Int64(offset)) }
        return Report(.malformedData, "the stream has malformed data: \(warning.message)", parameters)
    }

    // MARK: Buffer and engine

    static func shedAtLimit(removed: Duration, dropped: Int) -> Report {
        Report(
            .videoDiscontinuity, "the buffer hit its limit and shed \(dropped) frames",
            ["dropped_frames": .int(Int64(dropped)), "gap_ms": .int(removed.milliseconds)])
    }

    static func loading(buffered: Duration, target: Duration) -> Report {
        Report(
            .playLoading, "buffer ran dry; loading",
            ["buffered_ms": .int(buffered.milliseconds), "target_ms": .int(target.milliseconds)])
    }

    /// A skip to catch up: the catch-up event, and the discontinuity it makes.
    static func skipped(removed: Duration, dropped: Int) -> [Report] {
        [
            Report(
                .catchUpSkip, "skipped \(removed.milliseconds) ms of buffered media to catch up",
                ["removed_ms": .int(removed.milliseconds), "dropped_frames": .int(Int64(dropped)),
                    "method": .string("skip")]),
            Report(
                .videoDiscontinuity, "\(dropped) frames skipped",
                ["dropped_frames": .int(Int64(dropped)), "gap_ms": .int(removed.milliseconds)]),
        ]
    }

    static func catchUpStarted(excess: Duration, rate: Double) -> Report {
        Report(
            .catchUpStarted, "playing faster to remove \(excess.milliseconds) ms of latency",
            ["excess_ms": .int(excess.milliseconds), "rate": .double(rate), "method": .string("rate")])
    }

    static func catchUpEnded(removed: Duration, latency: Duration) -> Report {
        Report(
            .catchUpEnded, "back to normal rate",
            ["removed_ms": .int(removed.milliseconds), "method": .string("rate"),
                "latency_ms": .int(latency.milliseconds)])
    }

    static func arrivalGap(_ gap: Duration, tolerated: Duration, buffered: Duration) -> Report {
        Report(
            .receiveDataLag, "no media for \(gap.milliseconds) ms",
            ["reason": .string("arrival_gap"), "gap_ms": .int(gap.milliseconds),
                "tolerated_ms": .int(tolerated.milliseconds), "buffered_ms": .int(buffered.milliseconds)])
    }

    static func stalled(for stalled: Duration) -> Report {
        Report(
            .videoPlayLag, "playback stopped for \(stalled.milliseconds) ms",
            ["EVT_BLOCK_DURATION": .int(stalled.milliseconds)])
    }

    /// `PLAY_EVT_PLAY_BEGIN`; the first one carries the startup milestones.
    static func began(
        first: Bool, connection: Int, buffered: Duration, target: Duration, startup: StartupTimeline
    ) -> Report {
        var parameters: [String: PlayEventValue] = [
            "connection": .int(Int64(connection)), "buffered_ms": .int(buffered.milliseconds),
            "target_ms": .int(target.milliseconds),
        ]
        if first { parameters.merge(startup.parameters) { first, _ in first } }
        return Report(.playBegin, first ? "playback began" : "playback resumed", parameters)
    }

    // MARK: Control

    static func paused(at position: MediaTimestamp?) -> Report {
        Report(.paused, "paused", ["position_ms": .int(position?.milliseconds ?? 0)])
    }

    static func resumedWherePaused(at position: MediaTimestamp?) -> Report {
        Report(.resumed, "resumed where it paused", ["position_ms": .int(position?.milliseconds ?? 0)])
    }

    /// A seek while paused plays from its target: the pause ends there, told as one (the front end's ▶ follows it).
    static func resumedBySeek(to target: Duration) -> Report {
        Report(.resumed, "resumed by a seek", ["target_ms": .int(target.milliseconds), "by": .string("seek")])
    }

    static func skippedToNewest(removed: Duration, dropped: Int) -> Report {
        Report(
            .videoDiscontinuity, "resumed at the newest media: \(dropped) frames skipped",
            ["dropped_frames": .int(Int64(dropped)), "gap_ms": .int(removed.milliseconds)])
    }

    static func resumedAtLiveEdge(latency: Duration) -> Report {
        Report(.resumed, "resumed at the live edge", ["latency_ms": .int(latency.milliseconds)])
    }

    /// The sound's level as TXLivePlayer reports it (0…100, the peak as a fraction of full scale), and in dBFS.
    static func audioVolume(peak: Float) -> Report {
        let volume = Int64((min(1, max(0, peak)) * 100).rounded())
        let decibels = peak > 0 ? (20 * log10(Double(peak)) * 10).rounded() / 10 : -120
        return Report(.audioVolume, "sound level \(volume)", ["volume": .int(volume), "peak_dbfs": .double(decibels)])
    }

    static func switched(after elapsed: Duration, preloaded: Bool) -> Report {
        let milliseconds = (elapsed.seconds * 10_000).rounded() / 10
        return Report(
            .switched, "switched: first picture \(milliseconds) ms after the call (\(preloaded ? "preloaded" : "cold"))",
            ["switch_ms": .double(milliseconds), "preloaded": .bool(preloaded)])
    }
}

