import Logging
import NIOCore
import NIOHTTP1

/// One HTTP connection to the live server: routes the request, writes the response head itself (so the
/// body can be chunked or close-delimited), and for the live stream becomes a session fed by its loop's
/// ``ClientHub``.
final class LiveFLVHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    private enum Phase {
        case waitingForRequest
        case responding
        case live
        case finished
    }

    private let routes: ServerRoutes
    /// The rendition the request names, once it has been routed.
    private var routed: ServerCore?
    private var core: ServerCore { routed ?? routes.cores.values.first! }
    private var phase = Phase.waitingForRequest
    private var context: ChannelHandlerContext?
    private var hub: ClientHub?
    private var chunked = true
    private var waitingForKeyframe = false
    private var closeTimer: Scheduled<Void>?

    init(routes: ServerRoutes) {
        self.routes = routes
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        leave()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        leave()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        core.logger.debug("client connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data), phase == .waitingForRequest else { return }
        phase = .responding
        let request = LiveFLVRequest(uri: head.uri)
        let isHTTP11 = head.version.major == 1 && head.version.minor >= 1
        guard head.method == .GET || head.method == .HEAD else {
            respondAndClose(context: context, status: "405 Method Not Allowed", body: "GET only\n")
            return
        }
        guard request.path.hasSuffix(".flv"), let core = routes.core(for: request.path) else {
            respondAndClose(context: context, status: "404 Not Found", body: "no such stream\n")
            return
        }
        routed = core
        let headOnly = head.method == .HEAD
        if request.path.split(separator: "/").last == "file.flv" {
            let file = core.program.fileBytes
            writeHead(context: context, headers: ["Content-Length: \(file.readableBytes)"])
            if !headOnly { context.write(wrapOutboundOut(file), promise: nil) }
            finishAfterFlush(context: context)
            return
        }
        chunked = request.chunked && isHTTP11
        writeHead(context: context, headers: chunked ? ["Transfer-Encoding: chunked"] : [])
        context.flush()
        if headOnly {
            chunked = false  // a HEAD response has no body, not even the last chunk
            finishStream()
            return
        }
        phase = .live
        // Without the cache a client starts at the next keyframe, so its first video is decodable.
        waitingForKeyframe = !(request.gopCache && core.configuration.gopCache) && core.program.hasVideo
        core.counters.withLock {
            $0.activeClients += 1
            $0.servedClients += 1
        }
        if let seconds = request.closeAfter {
            closeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) {
                [self] in finishStream()
            }
        }
        core.subscribe(
            NIOLoopBound(self, eventLoop: context.eventLoop), useCache: request.gopCache, startPts: request.startPts)
    }

    /// The broadcaster's first delivery: header tags, then the cache.
    func startStream(initial: [ByteBuffer], hub: ClientHub, finished: Bool) {
        guard phase == .live, let context, context.channel.isActive else { return }
        self.hub = hub
        hub.add(self)
        for buffer in initial where buffer.readableBytes > 0 {
            writeBody(buffer, context: context)
        }
        context.flush()
        if finished { finishStream() }
    }

    /// One tick of the stream.
    func deliver(_ chunk: LiveChunk) {
        guard phase == .live, let context else { return }
        if !context.channel.isWritable {
            switch core.configuration.slowClientPolicy {
            case .disconnect:
                core.counters.withLock { $0.slowClientsDisconnected += 1 }
                core.logger.info(
                    "disconnecting slow client",
                    metadata: ["remote": "\(context.channel.remoteAddress.map { "\($0)" } ?? "?")"])
                leave()
                context.close(promise: nil)
            case .skipToKeyframe:
                if !waitingForKeyframe {
                    waitingForKeyframe = true
                    core.counters.withLock { $0.slowClientsSkipped += 1 }
                }
            }
            return
        }
        if waitingForKeyframe {
            guard let tail = chunk.fromKeyframe else { return }
            waitingForKeyframe = false
            writeBody(tail, context: context)
        } else {
            context.write(wrapOutboundOut(chunked ? chunk.chunkedPayload : chunk.payload), promise: nil)
        }
        context.flush()
    }

    /// Ends the body (the last chunk when chunked) and closes once it is out.
    func finishStream() {
        guard phase == .live || phase == .responding, let context else { return }
        leave()
        if chunked {
            context.write(wrapOutboundOut(HTTPChunk.last), promise: nil)
        }
        finishAfterFlush(context: context)
    }

    private func finishAfterFlush(context: ChannelHandlerContext) {
        phase = .finished
        // An empty write after the body completes once everything before it has been written.
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(ByteBuffer()), promise: promise)
        let channel = context.channel
        promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }

    private func leave() {
        closeTimer?.cancel()
        closeTimer = nil
        if phase == .live {
            core.counters.withLock { $0.activeClients -= 1 }
        }
        if phase == .live || phase == .responding {
            phase = .finished
        }
        hub?.remove(self)
        hub = nil
    }

    private func writeBody(_ buffer: ByteBuffer, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(chunked ? HTTPChunk.frame(buffer, allocator: context.channel.allocator) : buffer),
            promise: nil)
    }

    private func writeHead(context: ChannelHandlerContext, status: String = "200 OK", headers: [String]) {
        var lines = ["HTTP/1.1 \(status)", "Server: liveplay-lab", "Connection: close", "Cache-Control: no-cache"]
        if status.hasPrefix("200") {
            lines += ["Content-Type: video/x-flv", "Access-Control-Allow-Origin: *"]
        }
        lines += headers
        context.write(wrapOutboundOut(ByteBuffer(string: lines.joined(separator: "\r\n") + "\r\n\r\n")), promise: nil)
    }

    private func respondAndClose(context: ChannelHandlerContext, status: String, body: String) {
        writeHead(
            context: context, status: status,
            headers: ["Content-Type: text/plain; charset=utf-8", "Content-Length: \(body.utf8.count)"])
        context.write(wrapOutboundOut(ByteBuffer(string: body)), promise: nil)
        context.flush()
        finishAfterFlush(context: context)
    }
}

/// The parts of a live-server request URI the server acts on.
struct LiveFLVRequest: Sendable, Equatable {
    var path: String
    /// `gop=0` turns the GOP cache off for this client.
    var gopCache = true
    /// `chunked=0` asks for a close-delimited body.
    var chunked = true
    /// `close_after=SECONDS` ends the body after that long.
    var closeAfter: Double?
    /// `startPts=MS` (LAS): start at the GOP of that keyframe, or, negative, that far behind the live edge.
    var startPts: Int64?

    init(uri: String) {
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = String(parts.first ?? "")
        guard parts.count > 1 else { return }
        for pair in parts[1].split(separator: "&") {
            let item = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = item.count > 1 ? String(item[1]) : ""
            switch item[0] {
            case "gop": gopCache = !Self.isOff(value)
            case "chunked": chunked = !Self.isOff(value)
            case "close_after": closeAfter = Double(value).flatMap { $0 >= 0 ? $0 : nil }
            case "startPts": startPts = Int64(value)
            default: break
            }
        }
    }

    private static func isOff(_ value: String) -> Bool {
        ["0", "false", "no", "off"].contains(value.lowercased())
    }
}
