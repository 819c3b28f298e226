import CRTMP
import Foundation
import Synchronization
import LivePlayFLV
import LivePlayWire
import Logging

/// `RTMP_Init` may initialise librtmp's process-wide TLS context (`RTMP_TLS_Init`) without a lock.
private let librtmpInitialization = Mutex(())

/// One RTMP play attempt on its own thread: owns the `RTMP*` from `RTMP_Alloc` to `RTMP_Free`.
///
/// Every librtmp call happens on this thread. The only ways in from outside are the connection control
/// (which shuts the socket down to interrupt a blocking call) and the handoff (which blocks this thread
/// while the consumer is behind).
final class RTMPSession {
    private let source: RTMPSource
    private let control: RTMPConnectionControl
    private let handoff: ByteHandoff
    private let logger: Logger
    private let messageGuard: RTMPMessageGuard
    private let secrets: [String]

    private var rtmp: UnsafeMutablePointer<RTMP>?
    /// librtmp keeps pointers into the URL it parsed, so this copy lives as long as the `RTMP*`.
    private var urlCopy: UnsafeMutablePointer<CChar>?
    private var hasStreamBegun = false
    /// A server's reconnect request being carried out: its `tcUrl` (nil: the same), and the media time it came at.
    private var pendingMove: (tcUrl: String?, at: UInt32?)?
    private var sawVideo = false
    /// Each message's tags, handed out and refilled: the supervisor has let go of a message's by the next one, so
    /// the array keeps its storage.
    private var tags: [FLVTag] = []
    /// This connection sent Enhanced RTMP's `connect`, as the transaction numbered here; `_result` for it came.
    private var enhancedConnect: (transaction: Int, accepted: Bool)?
    /// Before the stream began, the server refused the connection (`_error`, `NetConnection.Connect.Rejected`) or
    /// hung up: what a server that cannot read the enhanced `connect` does. Garbage, a timeout or a broken message
    /// is something else.
    private var refusedBeforeBegin = false
    /// Unfinished messages by chunk stream: what librtmp has allocated and how much it has filled.
    private var unfinished: [Int: (bodySize: Int, bytesRead: Int)] = [:]

    init(source: RTMPSource, control: RTMPConnectionControl, handoff: ByteHandoff) {
        self.source = source
        self.control = control
        self.handoff = handoff
        var logger = source.logger
        logger[metadataKey: "url"] = "\(source.redactedURL)"
        self.logger = logger
        self.messageGuard = RTMPMessageGuard(limits: source.limits)
        self.secrets = RTMPSource.secrets(in: source.url)
    }

    /// The thread's body.
    func run() {
        blockBrokenPipeSignal()
        RTMPLog.attach(RTMPLog.Context(logger: logger, secrets: secrets))
        let end: ConnectionEnd
        do {
            try play()
            end = .finished
        } catch {
            end = .failed(control.stopReason ?? error)
        }
        tearDown()
        RTMPLog.detach()
        switch end {
        case .finished: logger.info("RTMP stream ended by the server")
        case .failed(let error): logger.info("RTMP connection ended", metadata: ["error": "\(error)"])
        }
        handoff.finish(end)
        control.markWorkerExited()
    }

    // MARK: - Connecting

    private func play() throws(TransportError) {
        let target = try RTMPURL(parsing: source.url)
        let rtmp = try setUpLibrtmp(port: target.port)
        let options = source.options

        logger.debug("resolving \(target.host)")
        let addresses = try SocketConnector.resolve(
            host: target.host, port: target.port, timeout: options.resolveTimeout, resolver: source.resolver,
            isStopped: { [control] in control.isStopped })
        if let reason = control.stopReason { throw reason }
        try emit(.resolved(addresses: addresses.map(\.description)))
        let (descriptor, address) = try SocketConnector.connect(
            to: addresses, timeout: options.connectTimeout, wakeDescriptor: control.wakeDescriptors.read)
        // From here librtmp owns `descriptor` (RTMP_Close closes it); the watchdog gets a duplicate.
        rtmp.pointee.m_sb.sb_socket = descriptor
        rtmp.pointee.m_bSendCounter = 1
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else {
            throw TransportError(.connectFailed, "dup: \(SocketConnector.errorText(errno))")
        }
        control.registerSocket(duplicate)
        setTimeouts(receive: options.handshakeTimeout, send: options.handshakeTimeout)
        logger.info("TCP connected", metadata: ["address": "\(address)"])
        try emit(.connected(serverAddress: address.description))

        startWatchdog()
        if source.connectsEnhanced {
            guard RTMPConnectCommand.handshakeAndConnect(rtmp) else { throw readFailure() }
            enhancedConnect = (Int(rtmp.pointee.m_numInvokes), false)
        } else {
            guard RTMP_Connect1(rtmp, nil) != 0 else { throw readFailure() }
        }
        logger.debug("RTMP handshake done, connect sent", metadata: ["enhanced": "\(enhancedConnect != nil)"])
        try emit(.handshakeDone)

        do throws(TransportError) {
            while true {
                var packet = try readMessage()
                defer { RTMPPacket_Free(&packet) }
                if try handle(&packet) == .finished { return }
            }
        } catch {
            // A server that cannot read the enhanced `connect` rejects it or hangs up before answering: the same
            // server is asked again at once with the plain one (`--rtmp-enhanced auto`).
            guard source.options.rtmpEnhanced == .auto, enhancedConnect?.accepted == false, refusedBeforeBegin,
                !hasStreamBegun, control.stopReason == nil
            else { throw error }
            if source.refusedEnhanced.set() {
                logger.info(
                    "the server refused Enhanced RTMP's connect (\(error.message)); connecting with the plain one for the rest of this session")
            }
            try emit(.enhancedConnectRefused)
        }
    }

    private func setUpLibrtmp(port: UInt16) throws(TransportError) -> UnsafeMutablePointer<RTMP> {
        guard let rtmp = RTMP_Alloc() else { throw TransportError(.readFailed, "RTMP_Alloc failed") }
        librtmpInitialization.withLock { _ in RTMP_Init(rtmp) }
        self.rtmp = rtmp
        // `live=1`: play with start -1000 (live) and send FCSubscribe, as librtmp's `live` option does.
        urlCopy = strdup(source.url + " live=1")
        guard RTMP_SetupURL(rtmp, urlCopy) != 0 else {
            throw TransportError(.invalidURL, "librtmp cannot parse \(source.redactedURL)")
        }
        // librtmp's defaults are for downloading: a 30 s buffer and a 30 s timeout.
        let bufferMilliseconds = source.options.rtmpBufferLength / .milliseconds(1)
        RTMP_SetBufferMS(rtmp, Int32(clamping: Int64(bufferMilliseconds.rounded())))
        rtmp.pointee.Link.timeout = Int32(clamping: Int64((source.options.handshakeTimeout / .seconds(1)).rounded(.up)))
        rtmp.pointee.Link.port = port
        return rtmp
    }

    private func startWatchdog() {
        let now = ContinuousClock.now
        var policy = RTMPWatchdogPolicy(options: source.options, origin: now)
        policy.startHandshake(at: now)
        control.installPolicy(policy)
        let control = control
        // Named from inside: Foundation passes a name on to the OS only for the current thread (15 bytes).
        let thread = Thread {
            nameCurrentThread("liveplay-watch")
            control.runWatchdog()
        }
        thread.start()
    }

    private func tearDown() {
        control.stopWatchdog()
        if let rtmp {
            RTMP_Close(rtmp)
            RTMP_Free(rtmp)
            self.rtmp = nil
        }
        free(urlCopy)
        urlCopy = nil
        control.closeSocket()
    }

    // MARK: - Reading

    /// The next complete, non-empty message; chunk headers are checked before librtmp reads them and the
    /// bytes held for unfinished messages after.
    private func readMessage() throws(TransportError) -> RTMPPacket {
        guard let rtmp else { throw TransportError(.readFailed, "not connected") }
        while true {
            let channelBody = Self.heldBody(rtmp, channel: try checkNextChunkHeader(rtmp))
            var packet = RTMPPacket()
            guard RTMP_ReadPacket(rtmp, &packet) != 0 else {
                // A body librtmp allocated for a new message is the caller's to free (found by
                // LeakSanitizer: servers closing mid-message). A continuation's body is the channel's, which
                // librtmp frees: in `RTMP_Close`, which its read calls itself when the socket fails (not on
                // a timeout), so it may be freed already (a double free, found by tiny TCP segments).
                if packet.m_body != channelBody { RTMPPacket_Free(&packet) }
                throw readFailure()
            }
            let channel = Int(packet.m_nChannel)
            let isComplete = packet.m_nBytesRead == packet.m_nBodySize
            unfinished[channel] = isComplete ? nil : (Int(packet.m_nBodySize), Int(packet.m_nBytesRead))
            let held = unfinished.values.reduce(0) { $0 + $1.bodySize }
            guard held <= source.limits.maximumBytesInProgress else {
                RTMPPacket_Free(&packet)
                throw TransportError(
                    .protocolViolation,
                    "unfinished messages hold \(held) bytes (limit \(source.limits.maximumBytesInProgress))")
            }
            if isComplete {
                if packet.m_body != nil, packet.m_nBodySize > 0 { return packet }
                RTMPPacket_Free(&packet)
            }
        }
    }

    /// The body librtmp holds for an unfinished message on `channel`, if any.
    private static func heldBody(_ rtmp: UnsafeMutablePointer<RTMP>, channel: Int) -> UnsafeMutablePointer<CChar>? {
        guard channel >= 0, channel < Int(rtmp.pointee.m_channelsAllocatedIn) else { return nil }
        return rtmp.pointee.m_vecChannelsIn?[channel]?.pointee.m_body
    }

    /// Makes sure the next chunk header is in librtmp's receive buffer and checks it (see
    /// ``RTMPChunkHeader``), returning its chunk stream. Only the header is waited for, never more than the
    /// server must send anyway.
    private func checkNextChunkHeader(_ rtmp: UnsafeMutablePointer<RTMP>) throws(TransportError) -> Int {
        let buffer = rtmp.pointer(to: \.m_sb)!
        var needed = 1
        while true {
            let available = Int(buffer.pointee.sb_size)
            if available >= needed, let start = buffer.pointee.sb_start {
                switch RTMPChunkHeader.parse(UnsafeRawBufferPointer(start: start, count: available)) {
                case .header(let header):
                    let held = unfinished.values.reduce(0) { $0 + $1.bodySize }
                    do throws(WireError) {
                        try messageGuard.check(header, unfinished: unfinished[header.chunkStreamID], bytesInProgress: held)
                    } catch {
                        throw TransportError(error)
                    }
                    return header.chunkStreamID
                case .needMore(let count):
                    needed = max(count, available + 1)
                    continue
                }
            }
            try fillReceiveBuffer(buffer)
        }
    }

    /// Reads more from the socket into librtmp's buffer with librtmp's own `RTMPSockBuf_Fill` (so TLS
    /// works the same), first moving what is left to the buffer's start, since `Fill` appends after it.
    private func fillReceiveBuffer(_ buffer: UnsafeMutablePointer<RTMPSockBuf>) throws(TransportError) {
        let base = liveplay_rtmp_receive_buffer(buffer)!
        let size = Int(buffer.pointee.sb_size)
        if size > 0, let start = buffer.pointee.sb_start, start != base {
            memmove(base, start, size)
            buffer.pointee.sb_start = base
        }
        guard RTMPSockBuf_Fill(buffer) > 0 else { throw readFailure() }
    }

    // MARK: - Handling messages

    private enum Outcome {
        case proceed
        case finished
    }

    private func handle(_ packet: inout RTMPPacket) throws(TransportError) -> Outcome {
        let type = packet.m_packetType
        let body = UnsafeRawBufferPointer(start: packet.m_body, count: Int(packet.m_nBodySize))
        let verdict: RTMPMessageVerdict
        do throws(WireError) {
            verdict = try messageGuard.inspect(type: type, body: body)
        } catch {
            throw TransportError(error)
        }
        switch verdict {
        case .ignore:
            logger.trace("ignoring message", metadata: ["type": "\(type)", "size": "\(body.count)"])
        case .control:
            if type == RTMPMessageType.userControl.rawValue {
                switch userControlEvent(body) {
                case 0:
                    try beginStream(because: "StreamBegin")
                case 1:
                    // Stream EOF: "playback of data is over … no more data is sent without issuing
                    // additional commands" (§7.1.7). nginx-rtmp sends only this to players when the
                    // publisher leaves (UnpublishNotify needs `publish_notify on`), then idles.
                    try emit(.serverStatus("StreamEOF"))
                    return .finished
                default:
                    break
                }
            }
            try passToLibrtmp(&packet)
        case .command(let name, let values):
            if let outcome = try handleCommand(name: name, values: values) { return outcome }
            try passToLibrtmp(&packet)
        case .media:
            try beginStream(because: "media before Play.Start")
            tags.removeAll(keepingCapacity: true)
            FLVTagWriter.appendTags(type: type, timestamp: packet.m_nTimeStamp, body: body, to: &tags)
            if tags.contains(where: { $0.type != RTMPMessageType.amf0Data.rawValue }) {
                control.updatePolicy(wakingWatchdog: false) { [tags] policy in
                    for tag in tags where tag.type != RTMPMessageType.amf0Data.rawValue {
                        policy.recordMedia(type: tag.type, timestamp: tag.timestamp)
                    }
                }
            }
            if pendingMove != nil, let end = moveEnd(in: tags) {
                // What came before the keyframe plays on; the next connection starts at it.
                if end > 0 { try emit(.tags(Array(tags[..<end]))) }
                try emit(.moveRequested(tcUrl: pendingMove?.tcUrl))
                return .finished
            }
            if tags.contains(where: { $0.type == 9 }) { sawVideo = true }
            if !tags.isEmpty { try emit(.tags(tags)) }
        }
        return .proceed
    }

    /// Decides on a command from the player's own decoding; `nil` hands it on to librtmp, which answers
    /// `_result`s (sending createStream, play, the buffer length), pings and bandwidth checks.
    private func handleCommand(name: String, values: [AMF0Value]) throws(TransportError) -> Outcome? {
        let info = values.count > 3 ? values[3] : nil
        let code = info?["code"]?.stringValue ?? ""
        let detail = RTMPLog.scrub(
            [code, info?["description"]?.stringValue ?? ""].filter { !$0.isEmpty }.joined(separator: ": "),
            secrets: secrets)
        switch name {
        case "onStatus":
            logger.debug("onStatus \(detail)")
            try emit(.serverStatus(code))
            switch code {
            case "NetStream.Play.Start", "NetStream.Play.PublishNotify":
                try beginStream(because: code)
                return nil
            case "NetStream.Play.Stop", "NetStream.Play.Complete", "NetStream.Play.UnpublishNotify":
                // The end by design; librtmp would close the connection here too.
                return .finished
            case "NetConnection.Connect.ReconnectRequest":
                // Enhanced RTMP v2: read on to the next keyframe, then reconnect (to `tcUrl` when given).
                pendingMove = (info?["tcUrl"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }, nil)
                guard sawVideo else {
                    try emit(.moveRequested(tcUrl: pendingMove?.tcUrl))
                    return .finished
                }
                return .proceed
            default:
                let level = info?["level"]?.stringValue ?? ""
                guard level == "error" || Self.failureCodes.contains(code) else { return nil }
                if code == "NetConnection.Connect.Rejected" { refusedBeforeBegin = !hasStreamBegun }
                throw phaseError(.serverClosed, "the server reported \(detail)")
            }
        case "_result" where enhancedConnect?.accepted == false:
            if values.count > 1, values[1].numberValue == Double(enhancedConnect?.transaction ?? -1) {
                enhancedConnect?.accepted = true
            }
            return nil
        case "_error" where !hasStreamBegun:
            // The answer to the connect itself (another command's `_error` is not a refused connect).
            refusedBeforeBegin = values.count > 1 && values[1].numberValue == enhancedConnect.map { Double($0.transaction) }
            throw TransportError(.handshakeFailed, "the server refused: \(detail)")
        case "close":
            throw phaseError(.serverClosed, "the server asked to close the connection")
        case "onFCUnsubscribe":
            // librtmp closes the connection on it; the server says more with onStatus or by closing.
            logger.debug("onFCUnsubscribe")
            return .proceed
        default:
            return nil
        }
    }

    /// Where a reconnect request's connection ends in `tags`: at the first video keyframe, or after 10 s of media
    /// without one (a stream whose keyframes are that far apart still moves); nil to read on.
    private func moveEnd(in tags: [FLVTag]) -> Int? {
        for (index, tag) in tags.enumerated() {
            if pendingMove?.at == nil { pendingMove?.at = tag.timestamp }
            let isKeyframe = tag.type == 9 && tag.body.first.map { $0 >> 4 & 0x07 == 1 } == true
            if isKeyframe || tag.timestamp &- (pendingMove?.at ?? tag.timestamp) > 10_000 { return index }
        }
        return nil
    }

    /// `onStatus` codes on which librtmp closes the connection.
    private static let failureCodes: Set<String> = [
        "NetStream.Failed", "NetStream.Play.Failed", "NetStream.Play.StreamNotFound",
        "NetConnection.Connect.InvalidApp", "NetConnection.Connect.Rejected",
    ]

    /// The event type of a user control message (RTMP specification 1.0, §7.1.7) about the stream being
    /// played: 0 StreamBegin, 1 StreamEOF…; `nil` for other streams and other messages.
    private func userControlEvent(_ body: UnsafeRawBufferPointer) -> Int? {
        guard body.count >= 6, let rtmp else { return nil }
        let event = Int(body[0]) << 8 | Int(body[1])
        guard event <= 4 else { return nil }
        let streamID = Int32(body[2]) << 24 | Int32(body[3]) << 16 | Int32(body[4]) << 8 | Int32(body[5])
        return streamID > 0 && streamID == rtmp.pointee.m_stream_id ? event : nil
    }

    private func beginStream(because reason: String) throws(TransportError) {
        guard !hasStreamBegun else { return }
        hasStreamBegun = true
        setTimeouts(receive: source.options.noDataTimeout, send: source.options.noDataTimeout)
        control.updatePolicy { $0.startStreaming() }
        logger.info("RTMP stream began", metadata: ["reason": "\(reason)"])
        try emit(.streamBegin)
    }

    private func passToLibrtmp(_ packet: inout RTMPPacket) throws(TransportError) {
        guard let rtmp else { return }
        _ = RTMP_ClientPacket(rtmp, &packet)
        // librtmp closes the connection itself when a send fails or the server reports a failure.
        guard RTMP_IsConnected(rtmp) != 0 else { throw readFailure() }
    }

    private func emit(_ event: TransportEvent) throws(TransportError) {
        let control = control
        let sent = handoff.send(event) { waiting in control.updatePolicy { $0.setHeldBack(waiting) } }
        guard sent else { throw control.stopReason ?? TransportError(.readFailed, "connection closed") }
    }

    // MARK: - Failures

    /// Why reading (or librtmp) failed: a stop request first, then librtmp's receive timeout, then what
    /// the socket says. Before the stream began, every failure is a failed handshake.
    private func readFailure() -> TransportError {
        if let reason = control.stopReason { return reason }
        if let rtmp, RTMP_IsTimedout(rtmp) != 0 {
            return hasStreamBegun
                ? TransportError(.noData, "no data for \(source.options.noDataTimeout)")
                : TransportError(
                    .handshakeFailed, "the server sent nothing for \(source.options.handshakeTimeout) in the handshake")
        }
        var byte: UInt8 = 0
        let socket = control.registeredSocket
        let peeked = socket >= 0 ? recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) : -1
        let error = errno
        if peeked == 0 {
            if !hasStreamBegun { refusedBeforeBegin = true }
            return phaseError(.serverClosed, "the server closed the connection")
        }
        if peeked < 0, [ECONNRESET, EPIPE, ENOTCONN].contains(error) {
            return phaseError(.serverClosed, "the server reset the connection")
        }
        if peeked < 0, error != EAGAIN, error != EWOULDBLOCK {
            return phaseError(.readFailed, "socket error: \(SocketConnector.errorText(error))")
        }
        return phaseError(.readFailed, "librtmp failed on an open connection")
    }

    private func phaseError(_ code: TransportError.Code, _ message: String) -> TransportError {
        hasStreamBegun
            ? TransportError(code, message) : TransportError(.handshakeFailed, message + " during the handshake")
    }

    // MARK: - Socket settings

    private func setTimeouts(receive: Duration, send: Duration) {
        let socket = control.registeredSocket
        guard socket >= 0 else { return }
        var receiveTime = Self.timeval(receive)
        var sendTime = Self.timeval(send)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &receiveTime, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &sendTime, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func timeval(_ duration: Duration) -> Glibc.timeval {
        let (seconds, attoseconds) = max(duration, .milliseconds(1)).components
        return Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }

    /// librtmp writes with `send(…, 0)`; a write to a connection the server reset raises SIGPIPE, which
    /// would kill the process. Blocked on this thread only, the signal stays pending here and `send`
    /// fails with EPIPE.
    private func blockBrokenPipeSignal() {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }
}
