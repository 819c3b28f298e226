import AsyncHTTPClient
import LivePlayBuffering
import LivePlayCore
import LivePlayDecode
import LivePlayFLV
public import LivePlayTransport
public import Logging

/// Plays one live URL: connect, demux, decode, reconnect, and report every stage as a ``PlayEvent``.
///
/// One structured ``run(onEvent:)``; cancelling the calling task stops it. The clock is injected, so
/// retry waits and event times follow a test's clock.
public final class LiveSession<C: Clock> where C.Duration == Duration {
    public let url: String
    public let configuration: LivePlayConfiguration
    private let clock: C
    private let logger: Logger
    private let makeSource: (@Sendable (String, TransportOptions, Logger) -> (any ByteSource))?
    private var start: C.Instant
    private var emit: (PlayEvent) -> Void = { _ in }

    // Across connections.
    private var policy: ReconnectPolicy
    private var stitcher = TimelineStitcher()
    private var videoDecoder: VideoDecoder?
    private var audioDecoder: AudioDecoder?
    private var lastResolution: (width: Int, height: Int)?
    private var mediaLostAt: C.Instant?
    private var connectionCount = 0

    // Per connection.
    private var demuxer = FLVDemuxer()
    private var sawKeyframe = false
    private var sawFrame = false
    private var sawMedia = false
    /// The server began the stream (RTMP) or sent its first bytes (HTTP): past the handshake.
    private var streaming = false
    /// The header or metadata announced video: playback begins with the first picture, not the first sound.
    private var expectsVideo = false
    private var goodput: GoodputMeter
    private var lagging = false

    /// - Parameter makeSource: overrides how a URL becomes a byte source (tests); by default the URL's
    ///   scheme picks HTTP-FLV or RTMP.
    public init(
        url: String, configuration: LivePlayConfiguration, clock: C, logger: Logger,
        makeSource: (@Sendable (String, TransportOptions, Logger) -> (any ByteSource))? = nil
    ) {
        self.url = url
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.makeSource = makeSource
        self.start = clock.now
        self.policy = ReconnectPolicy(
            retryCount: configuration.connectRetryCount, retryInterval: configuration.connectRetryInterval)
        self.goodput = GoodputMeter(window: configuration.lagWindow)
    }

    /// Plays until the stream ends, an error stops it, or the task is cancelled.
    public func run(onEvent: @escaping (PlayEvent) -> Void) async -> PlaybackOutcome {
        emit = onEvent
        start = clock.now
        if let makeSource {
            return await play(makeSource(url, configuration.transport, logger))
        }
        let kind: StreamURL.Kind
        do {
            kind = try StreamURL.kind(of: url)
        } catch {
            return fail(.fileNotFound, error.message)
        }
        switch kind {
        case .httpFLV:
            let options = configuration.transport
            do {
                return try await HTTPClient.withHTTPClient(
                    configuration: HTTPFLVSource.clientConfiguration(options), backgroundActivityLogger: logger
                ) { client in
                    await play(HTTPFLVSource(url: url, options: options, client: client, logger: logger))
                }
            } catch {
                return fail(.networkDisconnected, "HTTP client: \(error)")
            }
        case .rtmp:
            return await play(RTMPSource(url: url, options: configuration.transport, logger: logger))
        case .file:
            return fail(.fileNotFound, "local files are read with `liveplay inspect`, not played live")
        }
    }

    private var elapsed: Duration { start.duration(to: clock.now) }

    private func report(_ code: PlayEventCode, _ message: String, _ parameters: [String: PlayEventValue] = [:]) {
        let milliseconds = Int64(elapsed / .milliseconds(1))
        emit(PlayEvent(code, message, elapsedMilliseconds: milliseconds, parameters: parameters))
    }

    private func fail(_ code: PlayEventCode, _ message: String) -> PlaybackOutcome {
        report(code, message)
        return .failed(code)
    }

    // MARK: - Connection loop

    private func play(_ source: any ByteSource) async -> PlaybackOutcome {
        while !Task.isCancelled {
            connectionCount += 1
            let connection = source.makeConnection()
            beginConnection()
            do {
                while let event = try await connection.next() {
                    try handle(event)
                }
                await connection.close()
                flushDecoders()
                report(.playEnd, "the server ended the stream")
                return .ended
            } catch {
                await connection.close()
                if Task.isCancelled { return .stopped }
                if mediaLostAt == nil { mediaLostAt = clock.now }
                if let outcome = connectionLost(error) { return outcome }
                switch policy.connectionLost() {
                case .retry(let attempt, let delay):
                    report(
                        .reconnect, "reconnecting (attempt \(attempt) of \(policy.retryCount)): \(error.message)",
                        ["EVT_PARAM1": .int(Int64(attempt)), "reason": .string(error.code.rawValue)])
                    do {
                        try await clock.sleep(for: delay)
                    } catch {
                        return .stopped
                    }
                case .giveUp(let attempts):
                    return fail(.networkDisconnected, "connection lost; \(attempts) reconnect attempts failed")
                }
            }
        }
        return .stopped
    }

    /// Reports why a connection failed; returns an outcome when the failure is final (no retry helps).
    private func connectionLost(_ error: TransportError) -> PlaybackOutcome? {
        switch error.code {
        case .dnsFailed: report(.dnsFailed, error.message)
        case .connectFailed: report(.serverConnectFailed, error.message)
        case .handshakeFailed: report(.handshakeFailed, error.message)
        case .serverClosed: report(.serverDisconnected, error.message)
        case .noData, .tooSlow: report(.receiveDataLag, error.message, ["reason": .string(error.code.rawValue)])
        case .httpStatus:
            let status = error.httpStatus ?? 0
            if status == 404 { return fail(.fileNotFound, error.message) }
            if (400..<500).contains(status) { return fail(.serverRefused, error.message) }
            report(.serverConnectFailed, error.message, ["http_status": .int(Int64(status))])
        case .invalidURL: return fail(.fileNotFound, error.message)
        case .protocolViolation where !streaming:
            // Garbage or a hostile message before the stream began: the handshake failed.
            report(.handshakeFailed, error.message, ["reason": .string(error.code.rawValue)])
        default: report(.readWriteFailed, error.message)
        }
        return nil
    }

    private func beginConnection() {
        demuxer = FLVDemuxer()
        sawKeyframe = false
        sawFrame = false
        sawMedia = false
        streaming = false
        expectsVideo = false
        lagging = false
        goodput.reset()
        if let lostAt = mediaLostAt {
            stitcher.beginConnection(outage: lostAt.duration(to: clock.now))
        }
    }

    private func handle(_ event: TransportEvent) throws(TransportError) {
        switch event {
        case .connected(let serverAddress):
            report(.connectSucceeded, "connected to \(serverAddress)", ["SERVER_IP": .string(serverAddress)])
        case .streamBegin:
            streaming = true
            report(.rtmpStreamBegin, "the server started the stream")
        case .bytes(let bytes):
            streaming = true
            demuxer.append(bytes)
            do {
                while let element = try demuxer.nextElement() { handle(element) }
            } catch {
                throw TransportError(.protocolViolation, "not an FLV stream: \(error.message)")
            }
            try checkGoodput()
        }
    }

    /// A link delivering media far below real time is lost, not merely slow; a little below is a warning.
    private func checkGoodput() throws(TransportError) {
        guard let rate = goodput.goodput(at: elapsed) else { return }
        if rate < configuration.transport.minimumGoodput, elapsed >= configuration.transport.goodputWindow {
            throw TransportError(.tooSlow, "receiving \(Int(rate * 100)) % of real time")
        }
        if rate < configuration.lagThreshold, !lagging {
            lagging = true
            report(.receiveDataLag, "receiving \(Int(rate * 100)) % of real time", ["goodput": .double(rate)])
        } else if rate >= configuration.lagThreshold {
            lagging = false
        }
    }

    // MARK: - Media

    private func handle(_ element: FLVElement) {
        switch element {
        case .packet(var packet):
            let mapped = stitcher.map(dts: packet.dts, pts: packet.pts)
            packet.dts = mapped.dts
            packet.pts = mapped.pts
            if let gap = mapped.gap, gap > .milliseconds(100) {
                report(
                    .videoDiscontinuity, "media resumed after a \(gap / .milliseconds(1)) ms gap",
                    ["gap_ms": .int(Int64(gap / .milliseconds(1)))])
            }
            if !sawMedia {
                sawMedia = true
                policy.mediaReceived()
                mediaLostAt = nil
            }
            goodput.record(media: packet.dts, at: elapsed)
            if packet.kind == .video, packet.isKeyframe, !sawKeyframe {
                sawKeyframe = true
                report(.receivedFirstKeyframe, "first video keyframe received", ["pts_ms": .int(packet.pts.milliseconds)])
            }
            decode(packet)
        case .videoConfiguration(let video):
            guard configuration.decodes, videoDecoder?.configuration != video else { return }
            flushVideo()
            do {
                videoDecoder = try VideoDecoder(configuration: video, options: configuration.decoder)
                report(.startVideoDecoder, "\(video.codec.rawValue) decoder started", ["codec": .string(video.codec.rawValue)])
            } catch {
                videoDecoder = nil
                report(
                    video.codec == .hevc ? .hevcDecodeFailed : .videoDecodeFailed, "cannot open decoder: \(error)")
            }
        case .audioConfiguration(let audio):
            guard configuration.decodes, audioDecoder?.configuration != audio else { return }
            do {
                audioDecoder = try AudioDecoder(configuration: audio, options: configuration.decoder)
            } catch {
                audioDecoder = nil
                report(.audioDecodeFailed, "cannot open decoder: \(error)")
            }
        case .metadata(let metadata):
            expectsVideo = expectsVideo || metadata.videoCodecID != nil
            guard configuration.enableMetaData else { return }
            var parameters: [String: PlayEventValue] = [:]
            for property in metadata.values {
                if let number = property.value.numberValue { parameters[property.key] = .double(number) }
                if let text = property.value.stringValue { parameters[property.key] = .string(text) }
                if let flag = property.value.booleanValue { parameters[property.key] = .bool(flag) }
            }
            report(.getMetadata, "onMetaData", parameters)
        case .dataMessage(let message):
            guard configuration.enableMessage else { return }
            report(.getMessage, message.name, ["EVT_GET_MSG": .string(String(describing: message.arguments))])
        case .warning(let warning):
            logger.warning("FLV: \(warning)")
        case .header(let header):
            expectsVideo = expectsVideo || header.hasVideo
        case .endOfSequence:
            break
        }
    }

    private func decode(_ packet: EncodedPacket) {
        switch packet.kind {
        case .video:
            guard let decoder = videoDecoder else { return }
            present(decoder.decode(packet), kind: .video)
        case .audio:
            guard let decoder = audioDecoder else { return }
            present(audioDecoder: decoder.decode(packet))
        }
    }

    private func present(_ output: DecodeOutput<VideoFrame>, kind: MediaKind) {
        for error in output.errors { report(.videoDecodeFailed, "\(error)") }
        for frame in output.frames {
            if lastResolution?.width != frame.width || lastResolution?.height != frame.height {
                lastResolution = (frame.width, frame.height)
                report(
                    .changeResolution, "\(frame.width)x\(frame.height)",
                    ["EVT_PARAM1": .int(Int64(frame.width)), "EVT_PARAM2": .int(Int64(frame.height))])
            }
            firstFrame()
        }
    }

    private func present(audioDecoder output: DecodeOutput<AudioFrame>) {
        for error in output.errors { report(.audioDecodeFailed, "\(error)") }
        if !output.frames.isEmpty, videoDecoder == nil, !expectsVideo { firstFrame() }
    }

    private func firstFrame() {
        guard !sawFrame else { return }
        sawFrame = true
        report(.playBegin, "playback began", ["connection": .int(Int64(connectionCount))])
    }

    private func flushVideo() {
        if let decoder = videoDecoder { present(decoder.flush(), kind: .video) }
    }

    private func flushDecoders() {
        flushVideo()
        if let decoder = audioDecoder { present(audioDecoder: decoder.flush()) }
    }
}
