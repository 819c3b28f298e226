import Foundation
import LivePlayBuffering
import LivePlayCore
import LivePlayDecode
import LivePlayFLV
import LivePlayRecording
import LivePlayTransport

/// What recording, decoding and presenting did, and the reports of every second and of the end, as TXLivePlayer
/// events (the rest of ``Reports`` is in `SessionReports.swift`).
extension Reports {
    // MARK: Recording

    static func recording(_ event: RecordingFileEvent) -> Report {
        switch event {
        case .began(let path, let format):
            Report(.recordBegan, "recording to \(path)", ["path": .string(path), "format": .string(format.rawValue)])
        case .completed(let path, let milliseconds, let bytes):
            Report(
                .recordCompleted, "recorded \(path): \(milliseconds) ms, \(bytes) bytes",
                ["path": .string(path), "duration_ms": .int(milliseconds), "bytes": .int(bytes)])
        case .failed(let path, let error): recordingFailed(path: path, error)
        }
    }

    static func recordingProgress(path: String, _ milliseconds: Int64, _ bytes: Int64) -> Report {
        Report(
            .recordProgress, "recording \(path): \(milliseconds) ms, \(bytes) bytes",
            ["path": .string(path), "duration_ms": .int(milliseconds), "bytes": .int(bytes)])
    }

    static func recordingFailed(path: String, _ error: RecordingError) -> Report {
        var parameters: [String: PlayEventValue] = ["path": .string(path), "cause": .string(error.code.rawValue)]
        if let errno = error.errno { parameters["errno"] = .int(Int64(errno)) }
        return Report(.recordFailed, "recording stopped: \(error.message)", parameters)
    }

    static func streamSwitched(after elapsed: Duration, at pts: MediaTimestamp) -> Report {
        let milliseconds = (elapsed.seconds * 10_000).rounded() / 10
        return Report(
            .streamSwitchSucceeded, "switched streams at \(pts.milliseconds) ms, \(milliseconds) ms after the call",
            ["switch_ms": .double(milliseconds), "pts_ms": .int(pts.milliseconds)])
    }

    static func latencyChanged(
        from previous: LatencyParameters, to latency: LatencyParameters, target: Duration, current: Duration
    ) -> Report {
        let name = { (parameters: LatencyParameters) in LatencyMode(matching: parameters)?.rawValue ?? "custom" }
        return Report(
            .latencyChanged, "latency mode \(name(previous)) → \(name(latency))",
            ["mode": .string(name(latency)), "previous_mode": .string(name(previous)),
                "auto_adjust": .bool(latency.autoAdjustCacheTime), "cache_time_ms": .int(latency.cacheTime.milliseconds),
                "min_cache_ms": .int(latency.minAutoAdjustCacheTime.milliseconds),
                "max_cache_ms": .int(latency.maxAutoAdjustCacheTime.milliseconds),
                "target_ms": .int(target.milliseconds), "latency_ms": .int(current.milliseconds)])
    }

    static var seekIgnoredOnLive: Report {
        Report(.seekDone, "a live stream plays from now: seeking is for media on demand", ["ignored": .bool(true)])
    }

    static func seekStarted(to target: Duration) -> Report {
        Report(.seekStarted, "seeking to \(target.milliseconds) ms", ["target_ms": .int(target.milliseconds)])
    }

    static func seekDone(at position: MediaTimestamp, keyframe: MediaTimestamp, target: MediaTimestamp) -> Report {
        Report(
            .seekDone,
            "playing from \(position.milliseconds) ms (decoded from the keyframe at \(keyframe.milliseconds) ms)",
            [
                "position_ms": .int(position.milliseconds), "keyframe_ms": .int(keyframe.milliseconds),
                "target_ms": .int(target.milliseconds),
            ])
    }

    // MARK: Decode and present

    /// What the decode stage did, when it is worth an event.
    static func decoding(_ output: DecodeStage.Output) -> Report? {
        switch output {
        case .video, .audio: return nil
        case .started(let video):
            return Report(
                .startVideoDecoder, "\(video.codec.rawValue) decoder started", ["codec": .string(video.codec.rawValue)])
        case .videoDecoderFailedToOpen(let video, let error):
            return Report(
                video.codec == .hevc ? .hevcDecodeFailed : .videoDecodeFailed, "cannot open decoder: \(error)")
        case .audioDecoderFailedToOpen(_, let error):
            return Report(.audioDecodeFailed, "cannot open decoder: \(error)")
        case .failed(.video, let error):
            return Report(.videoDecodeFailed, "\(error)")
        case .failed(.audio, let error):
            return Report(.audioDecodeFailed, "\(error)")
        case .hardware(let notice, let decoder):
            return hardware(notice, decoder: decoder)
        }
    }

    /// What a device did, as TXLivePlayer tells it: 2106 when one asked for by name does not start or gives up while
    /// playing, 2108 when it failed on the first keyframe; nil for a device that started and for `auto`'s quiet
    /// fallback (a debug line).
    static func hardware(_ notice: HardwareNotice, decoder: String) -> Report? {
        let (code, device, reason, message): (PlayEventCode, HardwareDevice?, String, String)
        switch notice {
        case .started, .unavailable(_, _, warns: false):
            return nil
        case .unavailable(let named, let why, warns: true):
            (code, device, reason, message) = (
                .hardwareAccelerationFailed, named, why, "failed to start hard decoding, soft decoding is used"
            )
        case .firstKeyframeFailed(let named, let why):
            (code, device, reason, message) = (
                .firstKeyframeHardwareDecodeFailed, named, why,
                "hard decoding failed on the first keyframe, soft decoding is used"
            )
        case .failed(let named, let why):
            (code, device, reason, message) = (
                .hardwareAccelerationFailed, named, why, "hard decoding failed while playing, soft decoding is used"
            )
        }
        var parameters: [String: PlayEventValue] = ["reason": .string(reason), "decoder": .string(decoder)]
        if let device { parameters["device"] = .string(device.rawValue) }
        return Report(code, "\(message): \(reason)", parameters)
    }

    /// The buffer is ready but nothing can be presented: `PLAY_EVT_PLAY_BEGIN` waits, and this says why, once.
    /// - Parameters:
    ///   - video: the stream carries video (else only sound).
    ///   - hasDecoder: a decoder is open for it, so the configuration came and the packets do not decode.
    static func nothingToPresent(video: Bool, hasDecoder: Bool) -> Report {
        let kind = video ? "video" : "sound"
        let why =
            hasDecoder
            ? "the \(kind) decoder has given nothing from what arrived"
            : "the \(kind) arrives without a sequence header (decoder configuration) a decoder opens with"
        return Report(
            video ? .videoDecodeFailed : .audioDecodeFailed, "nothing to show: \(why)",
            ["reason": .string(video ? "no_decodable_video" : "no_decodable_audio"),
                "decoder_open": .bool(hasDecoder)])
    }

    static func resolution(width: Int, height: Int) -> Report {
        Report(
            .changeResolution, "\(width)x\(height)",
            ["EVT_PARAM1": .int(Int64(width)), "EVT_PARAM2": .int(Int64(height))])
    }

    /// `PLAY_EVT_PLAY_END` for media on demand read to its end before the seek's target: nothing to play.
    static func seekPastTheEnd(target: Double, length: Double) -> Report {
        Report(
            .playEnd,
            "the start position \(String(format: "%.1f", target)) s is past the end of the media "
                + "(\(String(format: "%.1f", length)) s long)",
            ["past_end": .bool(true), "target_s": .double(target), "EVT_PLAY_DURATION": .double(length)])
    }

    static func playedToTheEnd(onDemandPosition: Double?) -> Report {
        guard let position = onDemandPosition else { return Report(.playEnd, "the server ended the stream") }
        return Report(.playEnd, "played to the end", ["EVT_PLAY_PROGRESS": .double(position)])
    }

    // MARK: Once a second, and once at the end

    /// `PLAY_EVT_PLAY_PROGRESS`: position, buffer, latencies.
    /// - Parameter mediaDuration: the media's length, for media on demand (`EVT_PLAY_DURATION`).
    static func progress(
        position: Double, engine: PlaybackEngine, framesShown: Int, droppedFrames: Int, endToEndLatency: Int64?,
        mediaDuration: Double?, timeShift: (behind: Double, atLiveEdge: Bool)? = nil
    ) -> Report {
        var parameters: [String: PlayEventValue] = [
            "EVT_PLAY_PROGRESS": .double(position), "PLAYABLE_DURATION": .double(engine.bufferLatency.seconds),
            "latency_ms": .int(engine.bufferLatency.milliseconds), "rate": .double(engine.rate),
            "target_ms": .int(engine.target.milliseconds), "frames_shown": .int(Int64(framesShown)),
            "dropped_frames": .int(Int64(droppedFrames)),
        ]
        if let endToEndLatency { parameters["e2e_latency_ms"] = .int(endToEndLatency) }
        if let mediaDuration { parameters["EVT_PLAY_DURATION"] = .double(mediaDuration) }
        if let timeShift {
            parameters["behind_live_ms"] = .int(Int64((timeShift.behind * 1000).rounded()))
            parameters["live_edge"] = .bool(timeShift.atLiveEdge)
        }
        return Report(.playProgress, "playing", parameters)
    }

    /// The net status once a second (its dictionary's `NET_STATUS_*` keys are ``NetStatus``'s); rates cover
    /// `interval`, the second since the previous one.
    static func netStatus(
        at now: Duration, state: String, cpu: (process: Double, machine: Double), interval: PlaybackStatistics.Interval,
        engine: PlaybackEngine, statistics: PlaybackStatistics, presenter: Presenter, decodes: Bool,
        stream: (video: VideoCodecConfiguration?, audio: AudioCodecConfiguration?, shown: (width: Int, height: Int)?,
            serverAddress: String),
        endToEndLatency: Int64?
    ) -> NetStatus {
        let latency = engine.bufferLatency
        let cache = engine.buffer.content
        var status = NetStatus(
            elapsedMilliseconds: now.milliseconds, state: state, processCPU: cpu.process, machineCPU: cpu.machine,
            videoWidth: stream.shown?.width ?? stream.video?.width ?? 0,
            videoHeight: stream.shown?.height ?? stream.video?.height ?? 0,
            netSpeedKbps: interval.receivedKbps, netJitterMilliseconds: Int(engine.arrivalJitter.milliseconds),
            videoFPS: decodes ? interval.framesPerSecond : interval.receivedFramesPerSecond,
            videoBitrateKbps: interval.videoKbps,
            audioBitrateKbps: interval.audioKbps, cacheMilliseconds: Int(latency.milliseconds),
            serverAddress: stream.serverAddress, videoCacheFrames: cache.videoPackets,
            audioCacheMilliseconds: Int(cache.audioDuration.milliseconds),
            decodedCacheFrames: presenter.queuedVideoFrames,
            avReceiveIntervalMilliseconds: Int(statistics.receiveInterval?.milliseconds ?? 0),
            avPlayIntervalMilliseconds: Int(statistics.playInterval?.milliseconds ?? 0),
            gopSeconds: statistics.gop?.seconds ?? 0, audioSampleRate: stream.audio?.sampleRate ?? 0,
            audioChannels: stream.audio?.channels ?? 0, videoCodec: stream.video?.codec.rawValue ?? "",
            audioCodec: stream.audio?.codec.rawValue ?? "", latencyMilliseconds: Int(latency.milliseconds),
            endToEndLatencyMilliseconds: endToEndLatency.map { Int($0) },
            target: engine.target, rate: engine.rate, stutters: statistics.stutters,
            stutterMilliseconds: Int(statistics.stutterTime.milliseconds),
            droppedFrames: engine.buffer.droppedVideoFrames + presenter.droppedVideoFrames,
            framesShown: statistics.framesShown, reconnects: statistics.reconnects,
            mode: LatencyMode(matching: engine.parameters)?.rawValue ?? "custom",
            receivedBytes: Int64(statistics.receivedBytes), decoder: statistics.decoder)
        status.loudness = presenter.loudness?.measured
        status.loudnessGain = presenter.loudness?.appliedGain
        return status
    }

    /// `LIVEPLAY_EVT_SESSION_SUMMARY`: how the whole session went; for media on demand (`on_demand`), with no
    /// latency figures.
    static func summary(
        _ outcome: PlaybackOutcome, duration: Duration, statistics: PlaybackStatistics, droppedFrames: Int,
        firstShown: Duration?, onDemand: Bool
    ) -> Report {
        var parameters: [String: PlayEventValue] = [
            "outcome": .string(outcome.name), "duration_ms": .int(duration.milliseconds),
            "stutters": .int(Int64(statistics.stutters)), "stutter_ms": .int(statistics.stutterTime.milliseconds),
            "catch_ups": .int(Int64(statistics.catchUps)), "reconnects": .int(Int64(statistics.reconnects)),
            "bytes": .int(Int64(statistics.receivedBytes)), "frames_shown": .int(Int64(statistics.framesShown)),
            "dropped_frames": .int(Int64(droppedFrames)),
        ]
        if let firstShown { parameters["first_frame_ms"] = .int(firstShown.milliseconds) }
        if onDemand { parameters["on_demand"] = .bool(true) }
        if !statistics.decoder.isEmpty { parameters["decoder"] = .string(statistics.decoder) }
        if let mean = statistics.meanLatency { parameters["mean_latency_ms"] = .int(mean.milliseconds) }
        if let p95 = statistics.p95Latency { parameters["p95_latency_ms"] = .int(p95.milliseconds) }
        return Report(.sessionSummary, "session summary", parameters)
    }
}
