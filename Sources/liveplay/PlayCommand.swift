import ArgumentParser
import Foundation
import LivePlay
import LivePlayWindow
import Logging
import Synchronization

/// `liveplay URL`: play a live stream; print its events and once-per-second status, for a person or (JSON
/// lines) for monitoring; optionally write the decoded pictures and sound.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play an HTTP(S)-FLV or RTMP URL, or an FLV file, and log its events and status.",
        usage: "liveplay [play] [URL|FILE ...] [options]",
        discussion: """
            Without a URL (or with `demo`), plays the built-in demo stream from a live HTTP-FLV server started \
            in-process on a free loopback port. A local path, a file:// URL or an HTTP response with a \
            Content-Length is media on demand: played from its start (or --start) at 1.0×, with progress and \
            duration, to its end. The log is JSON lines (schema v1, docs/event-log.md) when stdout is not a \
            terminal or with --json, and readable lines with a live status line on a terminal or with \
            --human; every line is flushed as it happens. When --video-out or --audio-out is `-`, stdout \
            carries the media and the log goes to stderr. Errors go to stderr as plain sentences, whatever \
            the log format. URLs are printed with query values and passwords hidden unless --show-secrets.

            Exit codes: 0 media played and then the stream ended, --duration or --frames was reached, or \
            SIGINT/SIGTERM or a closed stdout (`| head`) stopped it; 64 bad usage (options, a malformed or \
            unsupported URL); 65 not playable (not FLV, no decoder opens, or it ended without any media), or a file cut short \
            (it ends before its metadata's duration or inside a tag: warning 9103); \
            66 the file does not exist or is a directory; 69 unavailable: the server is unreachable, refused \
            the stream, the connection was lost after every retry (whether or not media played before), or \
            --duration ran out before a picture (or, without video, sound) was presented; 74 an output could not \
            be written (a media output that fails while playing stops the run), or a --record recording stopped \
            (event 9102) even though playback went on.

            Window keys (--window): space pause / resume; m mute; up / down volume; left / right 10 s back / on (a file, \
            --timeshift); 1 / 2 / 3 auto / speed / \
            smooth; l to the live edge; s snapshot (liveplay-snapshot-MS.png); f fullscreen; r rotate; i figures \
            on / off; c captions on / off; h, ? or F1 this key list on / off; n / p next / previous stream; v / a next video / audio track; q or \
            Escape quit. Moving the mouse shows a control bar for 3 s (play / pause; a file's time and seek bar, a \
            --timeshift window's seek bar and LIVE / GO LIVE, or \
            LIVE; mute and volume; CC; fullscreen). A click elsewhere on the picture pauses / resumes, a \
            double-click toggles fullscreen.

            Files: play writes only what its options name (--record, --video-out, --audio-out, --captions-out, \
            --snapshot, --snapshot-path, --arrival-trace), the window's snapshots (s: liveplay-snapshot-MS.png in the working \
            directory), with --media-cache, the media cache ($XDG_CACHE_HOME/liveplay, or ~/.cache/liveplay), and where \
            media on demand was left ($XDG_STATE_HOME/liveplay/positions, or ~/.local/state/liveplay/positions; \
            --no-resume neither reads nor writes it).

            Examples:
              liveplay                                the built-in demo stream
              liveplay http://127.0.0.1:8080/live.flv a live HTTP-FLV stream
              liveplay rtmp://127.0.0.1/live/s -t 60 --json > log.jsonl
                                                      a minute of RTMP as JSON lines
              liveplay URL -t 10 && echo ok           exit 0 only if media played
              liveplay movie.flv --start 30           a file, from 30 s in
              liveplay URL --record keep.mp4          record while playing
              liveplay URL --video-out - | ffplay -   watch it
              liveplay URL1 URL2 URL3 --preload 2 --window
                                                      switch with n / p, 2 preloaded
              liveplay http://127.0.0.1:8080/las.json --max-bitrate 1500
                                                      a LAS manifest, under 1.5 Mbit/s
            """
    )

    @Argument(help: "http(s)://…/stream.flv, rtmp(s)://host[:port]/app/stream, a .flv path or file:// URL, a LAS manifest (…/manifest.json); none or `demo` for the demo stream. Several: the first plays, the others are switched to (n / p in the window, --switch-every)")
    var urls: [String] = []

    @Flag(name: [.customShort("j"), .long], help: "Log JSON lines (the default when stdout is not a terminal).")
    var json = false

    @Flag(help: "Log readable lines and a live status line (the default on a terminal).")
    var human = false

    @Flag(name: .shortAndLong, help: "Quiet: errors only, no status lines (with --json, the 9006 summary too).")
    var quiet = false

    @Option(help: "Least important events and library messages logged: trace, debug, info, warning, error.")
    var logLevel: LogLevelOption = .info

    @Option(help: "A name for this stream, on every JSON line (`id`), to tell merged logs apart.")
    var id: String?

    @Flag(help: "Also log one JSON line per presented picture: stream time, wall-clock time shown, rate.")
    var traceFrames = false

    @Option(name: [.customShort("t"), .long], parsing: .unconditional, help: "Stop after this many seconds of playing.")
    var duration: Double?

    @Option(name: [.customShort("n"), .long], parsing: .unconditional, help: "Stop after this many pictures have been shown (1: right after the first).")
    var frames: Int?

    @Option(parsing: .unconditional, help: "Media on demand: start this many seconds in (the picture there, decoded from the keyframe at or before).")
    var start: Double?

    @Option(help: "Live streams: keep the last DURATION (e.g. 90s, 30m, 1h; 10 s to 24 h) on disk to go back in (← / → in the window, docs/time-shift.md).")
    var timeshift: TimeShiftWindow?

    @Flag(help: "Media on demand: --start and seeks play from the keyframe at or before the target (sooner), not the picture at it.")
    var keyframeSeek = false

    @Option(parsing: .unconditional, help: "Multitrack streams (Enhanced RTMP v2): the video track id to play (default: the lowest; `v` in the window steps through them).")
    var videoTrack: UInt8?

    @Option(parsing: .unconditional, help: "Multitrack streams: the audio track id to play (default: the lowest; `a` in the window).")
    var audioTrack: UInt8?

    @Flag(help: "Probe: transport, demux and timing figures without decoding (cheap monitoring).")
    var noDecode = false

    @Flag(help: "Report in-stream messages: script data and user-data SEI (enableMessage, event 2012).")
    var messages = false

    @Flag(help: "Report onMetaData (enableMetaData, event 2028).")
    var metadata = false

    @Option(
        help: """
            Report H.264 / HEVC SEI messages of these payload types as each picture is shown (event 9018, the payload \
            in base64): 5 (user data unregistered), 242, 243… Repeat it or give a list: --sei 5,242.
            """)
    var sei: [SEIPayloadTypes] = []

    @Option(
        help: """
            The CEA-608 caption channel read from the pictures (H.264 / HEVC SEI): cc1 (the default), cc2, cc3, \
            cc4 or off. Each caption is logged as it leaves the screen (a `caption` JSON line, event 9020); given, \
            the window shows them from the start (c shows / hides them).
            """)
    var captions: CaptionOption?

    @Option(parsing: .unconditional, help: "Reconnect attempts after a loss (connectRetryCount, 0–10).")
    var retries = 3

    @Option(parsing: .unconditional, help: "Seconds to wait before each reconnect attempt (connectRetryInterval).")
    var retryInterval: Double = 3

    @Option(name: [.customShort("H"), .customLong("header")], help: "An HTTP request header 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(parsing: .unconditional, help: "Seconds without any bytes before the connection counts as lost.")
    var readTimeout: Double = 5

    @Option(parsing: .unconditional, help: "Seconds allowed for each connection attempt: TCP, then the server's answer (RTMP handshake and play, or the HTTP response head).")
    var connectTimeout: Double = 5

    @Option(help: "RTMP: Enhanced RTMP v2's connect (HEVC, AV1, multitrack): auto (falls back to the plain connect for a server that rejects it), on, or off.")
    var rtmpEnhanced: RTMPEnhancedOption = .auto

    @Option(name: .shortAndLong, help: "Latency mode: auto (1–5 s adaptive), speed (1 s, catches up), smooth (5 s fixed cache).")
    var mode: LatencyModeOption = .auto

    @OptionGroup
    var sources: SourceOptions

    @OptionGroup(title: "Playlists")
    var playlists: PlaylistOptions

    @Option(parsing: .unconditional, help: "cacheTime in seconds: the fixed cache (smooth) and what loading waits for.")
    var cacheTime: Double?

    @Option(parsing: .unconditional, help: "minAutoAdjustCacheTime in seconds (auto / speed).")
    var minCache: Double?

    @Option(parsing: .unconditional, help: "maxAutoAdjustCacheTime in seconds (auto / speed).")
    var maxCache: Double?

    @OptionGroup(title: "Outputs")
    var outputs: OutputOptions

    @Flag(name: .customLong("media-cache"), help: "Play media on demand (HTTP files) through the media cache: kept as it plays, played from disk next time (docs/cache.md).")
    var usesMediaCache = false

    @OptionGroup(title: "Media cache")
    var mediaCache: MediaCacheOptions

    @Flag(help: "Accept TLS certificates that cannot be verified (self-signed; testing only).")
    var insecure = false

    @Flag(help: "Show URLs with their query values and passwords.")
    var showSecrets = false

    @Flag(help: "Show the picture in a window and play the sound on the sound device (keys: below).")
    var window = false

    @Option(help: ArgumentHelp("With --window: the picture shown while a stream without video plays (PNG or JPEG, a path or an HTTP(S) URL; a playlist item's own, #EXTIMG or tvg-logo, comes first). Without one, a card with the title and a level meter.", valueName: "IMAGE"))
    var poster: String?

    @Option(parsing: .unconditional, help: "Report the sound's level every MS milliseconds (at least 100): event 9011.")
    var volumeEvaluation: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Normalise the sound's loudness to this many LUFS (EBU R 128; -70 to 0, e.g. -16): a slow gain, no sample above -1 dBFS.", valueName: "LUFS"))
    var loudness: Double?

    @Option(parsing: .unconditional, help: "With several URLs: keep this many of the streams nearest the one playing preloaded (connected, newest GOP buffered, poster decoded) for an instant switch.")
    var preload = 0

    @Option(parsing: .unconditional, help: "With several URLs: switch to the next one every this many seconds.")
    var switchEvery: Double?

    @Option(help: "switchStream: after --switch-stream-after seconds, move to this rendition of the same content (PTS-aligned) at a keyframe both share: 2015, or -2307 and the stream plays on.")
    var switchStream: String?

    @Option(parsing: .unconditional, help: "Seconds of playing before --switch-stream.")
    var switchStreamAfter: Double = 5

    func validate() throws {
        for url in urls where url != "demo" {
            do {
                _ = try StreamAddress(parsing: url)
            } catch {
                throw ValidationError("cannot play \(showSecrets ? url : Redaction.url(url)): \(error.message)")
            }
        }
        guard (0...8).contains(preload) else { throw ValidationError("--preload must be 0…8") }
        try sources.validate(urls: urls, showSecrets: showSecrets)
        try playlists.validate(urls: urls)
        if let switchEvery { try Seconds.check(switchEvery, "--switch-every") }
        if let switchStream {
            do {
                _ = try StreamAddress(parsing: switchStream)
            } catch {
                throw ValidationError("cannot switch to \(showSecrets ? switchStream : Redaction.url(switchStream)): \(error.message)")
            }
            if urls.count > 1 { throw ValidationError("--switch-stream plays one URL; a list switches with --switch-every") }
        }
        try Seconds.check(switchStreamAfter, "--switch-stream-after", allowsZero: true)
        if urls.count < 2, preload > 0 || switchEvery != nil {
            throw ValidationError("--preload and --switch-every need two URLs or more")
        }
        guard (0...10).contains(retries) else { throw ValidationError("--retries must be 0…10") }
        try Seconds.check(retryInterval, "--retry-interval", allowsZero: true)
        try Seconds.check(readTimeout, "--read-timeout")
        try Seconds.check(connectTimeout, "--connect-timeout")
        if let duration { try Seconds.check(duration, "--duration") }
        if let start { try Seconds.check(start, "--start", allowsZero: true) }
        if let frames, frames <= 0 { throw ValidationError("--frames must be positive") }
        if let volumeEvaluation, volumeEvaluation < 100 {
            throw ValidationError("--volume-evaluation is at least 100 ms (TXLivePlayer's enableAudioVolumeEvaluation)")
        }
        if let loudness, !(-70...0).contains(loudness) {
            throw ValidationError("--loudness is -70 to 0 LUFS (-16 is what streaming services play at), got \(loudness)")
        }
        if json && human { throw ValidationError("--json and --human exclude each other") }
        if poster != nil, !window { throw ValidationError("--poster is shown in the window: add --window") }
        if window, outputs.audioOut != nil {
            throw ValidationError("--window plays the sound on the sound device; --audio-out cannot take it too")
        }
        if noDecode && (frames != nil || outputs.decodes || traceFrames || window) {
            throw ValidationError("--no-decode shows no pictures: it excludes --frames, --trace-frames and outputs")
        }
        for value in [cacheTime, minCache, maxCache].compactMap({ $0 }) where !(value > 0 && value <= 60) {
            throw ValidationError("cache times must be in (0, 60] seconds, got \(value)")
        }
        if let minCache, let maxCache, minCache > maxCache {
            throw ValidationError("--min-cache must not exceed --max-cache")
        }
        for header in headers where HTTPHeaderField(parsing: header) == nil {
            throw ValidationError("--header must look like 'Name: value', got '\(header)'")
        }
        if let id, id.isEmpty || id.count > 200 { throw ValidationError("--id must be 1 to 200 characters") }
        try outputs.validate()
        if captions == .off, outputs.captionsOut != nil {
            throw ValidationError("--captions-out needs captions: leave out --captions off")
        }
        try timeshift?.validate(playing: urls)
        if outputs.record != nil, urls.count > 1 {
            throw ValidationError("--record records one stream: give one URL")
        }
    }

    func run() async throws {
        // A reader that goes away (`| head`, a closed ffplay) is a write error to handle, not a fatal signal.
        signal(SIGPIPE, SIG_IGN)
        let logToStandardError = outputs.usesStandardOutput
        let terminal = isatty(logToStandardError ? STDERR_FILENO : STDOUT_FILENO) == 1
        let style: EventLog.Style = json || (!human && !terminal) ? .json : .human(statusLine: terminal && !quiet)
        let level = quiet ? .error : logLevel
        if window, let reason = PlayerWindow.displayUnavailableReason() {
            Standard.error("liveplay: cannot open a window: \(reason)")
            throw ExitCode(ExitStatus.unavailable)
        }
        let log = EventLog(
            style: style, output: LogOutput(logToStandardError ? .standardError : .standardOutput), streamID: id,
            level: level, quiet: quiet ? (json ? .errorsAndSummary : .errorsOnly) : nil)
        CodecLog.route(minimum: level.codecLevel) { _, text in log.error("liveplay: " + text) }

        if loudness != nil, let reason = LivePlayConfiguration.loudnessUnavailableReason {
            Standard.error("liveplay: --loudness: \(reason)")
            throw ExitCode(ExitStatus.unavailable)
        }
        var demo: BuiltInDemo?
        var targets: [String] = []
        // Made once: it opens the media cache, which says once at the start when it will keep nothing new.
        let configuration = try makeConfiguration()
        let playlist = try await playlists.playlist(for: urls, log: log, options: configuration.transport)
        var picture: RGBPicture?
        if let poster { picture = try await WindowFrontEnd.readPoster(poster, transport: configuration.transport, log: log) }
        for url in playlist?.items.map(\.url) ?? (urls.isEmpty ? ["demo"] : urls) {
            if url == "demo" {
                if demo == nil {
                    do {
                        demo = try await BuiltInDemo.start()
                    } catch {
                        Standard.error("liveplay: cannot start the demo stream: \(error)")
                        throw ExitCode(ExitStatus.ioError)
                    }
                    log.note("liveplay: the built-in demo stream, served in-process at \(demo!.url)")
                }
                targets.append(demo!.url)
                continue
            }
            // A playlist's items are checked as each comes: one that is not there is told and skipped.
            if playlist == nil, let address = try? StreamAddress(parsing: url), address.isLocalFile {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: address.path, isDirectory: &isDirectory) else {
                    Standard.error("liveplay: no such file: \(address.path)")
                    throw ExitCode(ExitStatus.noInput)
                }
                guard !isDirectory.boolValue else {
                    Standard.error("liveplay: \(address.path) is a directory; give an FLV file in it")
                    throw ExitCode(ExitStatus.noInput)
                }
            }
            targets.append(url)
        }
        let target = targets[0]
        // A playlist is named as given (its items are told as each starts, 9023).
        let named = playlist == nil ? target : urls[0]
        let shown = showSecrets ? named : Redaction.url(named)
        log.note("liveplay: playing \(shown)" + (playlist.map { ", a playlist of \($0.items.count)" } ?? ""))
        // Media on demand where it was left: said once, on the start line (JSON) or as a note.
        let resume = configuration.resume
        do {
            try resume?.prepare()
        } catch {
            log.error("liveplay: could not keep where media is left in \(resume?.path ?? ""): \(error)")
        }
        let resumeAt = start == nil ? resume?.position(for: target) : nil
        log.start(url: shown, mode: mode.rawValue, resumeAt: resumeAt)

        let stop = StopSignal()
        log.output.onBroken = { stop.fire(.outputClosed) }
        let sinks: Outputs
        do {
            sinks = try outputs.make { failure in
                stop.fire(failure.code == .outputClosed ? .outputClosed : .outputFailed)
            }
        } catch {
            Standard.error("liveplay: \(error.message)")
            throw ExitCode(ExitStatus.ioError)
        }
        let presented = PresentedFrames(limit: frames, log: traceFrames ? log : nil, stop: stop)
        let player = LivePlayer(
            configuration: configuration, videoSink: VideoFanOut([presented] + sinks.video),
            audioSink: sinks.audio, arrivalTap: sinks.arrivals, logger: Self.logger(level, log: log))
        let report = RunReport(
            log: log, target: shown, retries: retries, backups: sources.backups.count, tracks: (videoTrack, audioTrack),
            also: sinks.captions.map { [$0] } ?? [])
        player.listener = report
        if let volumeEvaluation { player.enableAudioVolumeEvaluation(.milliseconds(volumeEvaluation)) }
        var frontEnd: WindowFrontEnd?
        if window {
            do {
                let opened = try await WindowFrontEnd(
                    title: "liveplay — \(shown)", player: player, stop: stop, log: log, renderMode: outputs.renderMode.mode,
                    rotation: RenderRotation(rawValue: outputs.rotation) ?? .rotation0,
                    showsCaptions: captions.map { $0 != .off } ?? false,
                    thumbnailsFrom: targets.count == 1 ? (try? StreamAddress(parsing: target)).flatMap {
                        switch $0.scheme {
                        case .file: .file($0.path)
                        // A file over HTTP (a live stream's bar has no seek bar to hover).
                        case .http, .https: .http(target)
                        case .rtmp, .rtmps: nil
                        }
                    } : nil, poster: picture, cardTitle: (named as NSString).lastPathComponent)
                player.setVideoSink(VideoFanOut([presented, opened.window] + sinks.video))
                player.setAudioSink(opened.sound)
                player.listener = WindowStatus(report, frontEnd: opened)
                await opened.goOnTheBus(named: shown, stop: stop)
                frontEnd = opened
            } catch {
                Standard.error("liveplay: cannot open a window: \(error.message)")
                await demo?.stop()
                throw ExitCode(ExitStatus.unavailable)
            }
        }
        let showSecrets = showSecrets
        let switcher = targets.count > 1 && playlist == nil
            ? StreamSwitcher(
                urls: targets, player: player, configuration: configuration, preload: preload, log: log,
                show: { showSecrets ? $0 : Redaction.url($0) },
                onSwitch: { [window = frontEnd?.window] shown in window?.setTitle("liveplay — \(shown)") })
            : nil
        if let switcher { frontEnd?.switchesStreams(with: switcher.request) }
        if let playlist {
            frontEnd?.switchesStreams { $0 > 0 ? playlist.next() : playlist.previous() }
            frontEnd?.follows(playlist)
        }
        // A playlist keeps the item to come preloaded, so that autoplay to it is a switch (a switcher's pool's logger).
        var quiet = Logger(label: "liveplay.preload")
        quiet.logLevel = .error
        let playlistPool = playlist.map { _ in PreloadPool(configuration: configuration, logger: quiet) }
        let switchEvery = switchEvery.map { Duration.seconds($0) }
        let (switchStream, switchStreamAfter) = (switchStream, switchStreamAfter)
        let signals = SignalWatch([SIGINT, SIGTERM]) { stop.fire(.interrupted) }
        let resizes = SignalWatch([SIGWINCH]) { log.redrawStatus() }
        let duration = duration
        let outcome = await withTaskGroup(of: StopReason?.self) { group in
            group.addTask {
                guard let playlist else { return .played(await player.run(url: target)) }
                return .played(await player.run(playlist: playlist, preload: playlistPool))
            }
            group.addTask { await stop.reason() }
            // Helpers that return nil: they never end the run.
            if let frontEnd, playlist != nil {
                group.addTask {
                    await frontEnd.showPosters(transport: configuration.transport)
                    return nil
                }
            }
            if let switcher {
                group.addTask {
                    await switcher.run(every: switchEvery)
                    return nil
                }
            }
            if let rendition = switchStream {
                group.addTask {
                    guard (try? await Task.sleep(for: .seconds(switchStreamAfter))) != nil else { return nil }
                    try? player.switchStream(to: rendition)
                    return nil
                }
            }
            if let duration {
                group.addTask {
                    try? await Task.sleep(for: .seconds(duration))
                    return .duration
                }
            }
            var first: StopReason?
            while first == nil, let next = await group.next() { first = next }
            group.cancelAll()
            // The player's task finishes its summary before the group returns.
            var reason = first
            while let next = await group.next() {
                if case .played = next, reason == nil { reason = next }
            }
            return reason ?? .interrupted
        }
        signals.cancel()
        resizes.cancel()
        await frontEnd?.close()
        let outputFailure = sinks.finish()
        log.close()
        await demo?.stop()
        if case .outputClosed = outcome { throw ExitCode(ExitStatus.success) }
        if let outputFailure, outputFailure.code != .outputClosed {
            Standard.error("liveplay: \(outputFailure.message)")
            throw ExitCode(ExitStatus.ioError)
        }
        if let sentence = report.startPastTheEnd, !report.playedMedia {
            log.error(sentence)
            throw ExitCode(ExitStatus.usage)
        }
        let status = outcome.exitStatus(playedMedia: report.playedMedia)
        if playlist != nil, status == ExitStatus.success, let failed = report.failure {
            log.error("liveplay: \(failed.message); the playlist's last item was skipped.")
        }
        if status != ExitStatus.success, let sentence = report.finalSentence(for: outcome) { log.error(sentence) }
        if status != ExitStatus.success { throw ExitCode(status) }
        // Playback went on, but a recording the person asked for stopped (already told on stderr when it did).
        if report.recordingFailed { throw ExitCode(ExitStatus.ioError) }
        // What was there played to its end, but the media was cut short (told on stderr when it was seen).
        if report.truncated, case .played(.ended) = outcome { throw ExitCode(ExitStatus.dataError) }
    }

    private func makeConfiguration() throws -> LivePlayConfiguration {
        var transport = TransportOptions(
            connectTimeout: .seconds(connectTimeout), noDataTimeout: .seconds(readTimeout),
            headers: headers.compactMap(HTTPHeaderField.init(parsing:)), allowsInsecureTLS: insecure)
        // --connect-timeout bounds the whole of connecting: the TCP connection, then the server's answer (the RTMP
        // handshake, connect and play; the HTTP response head). A silent server costs one timeout per attempt.
        transport.handshakeTimeout = transport.connectTimeout
        transport.rtmpEnhanced = rtmpEnhanced.connect
        var latency = LatencyParameters.preset(mode.mode)
        if let cacheTime { latency.cacheTime = .seconds(cacheTime) }
        if let minCache { latency.minAutoAdjustCacheTime = .seconds(minCache) }
        if let maxCache { latency.maxAutoAdjustCacheTime = .seconds(maxCache) }
        latency.maxAutoAdjustCacheTime = max(latency.maxAutoAdjustCacheTime, latency.minAutoAdjustCacheTime)
        var configuration = LivePlayConfiguration(
            connectRetryCount: retries, connectRetryInterval: .seconds(retryInterval), enableMessage: messages,
            enableMetaData: metadata, decodes: !noDecode,
            transport: transport, latency: latency)
        configuration.startPosition = start.map { .seconds($0) }
        configuration.accurateSeek = !keyframeSeek
        sources.apply(to: &configuration, bounded: duration != nil || frames != nil)
        configuration.videoTrack = videoTrack
        configuration.audioTrack = audioTrack
        configuration.seiPayloadTypes = Set(sei.flatMap(\.types))
        configuration.captionChannel = (captions ?? .cc1).channel
        configuration.loudness = loudness
        configuration.recording = outputs.recording
        if usesMediaCache || mediaCache.mediaCacheDir != nil { configuration.cache = try mediaCache.open(tellsFullDisk: true) }
        configuration.timeShift = timeshift.map {
            TimeShiftRing.Options(
                window: $0.duration, directory: mediaCache.mediaCacheDir, minimumFreeSpace: Int64(mediaCache.minFree) << 20)
        }
        return configuration
    }

    /// The library's own diagnostics (librtmp, the FLV demuxer) on stderr, in the CLI's plain form, from
    /// `--log-level debug` down (events say the same things in the log).
    private static func logger(_ level: LogLevelOption, log: EventLog) -> Logger {
        Logger(label: "liveplay") { _ in PlainLogHandler(log: log, level: level) }
    }
}
