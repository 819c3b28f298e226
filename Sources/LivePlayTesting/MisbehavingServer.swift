import Foundation
public import LivePlayFLV

/// A loopback TCP server that breaks the rules on purpose, to test a client's deadlines and checks.
///
/// Plain POSIX sockets on its own threads; it stops itself after `lifetime`, so a test that forgets it
/// cannot leave it running.
///
/// `@unchecked Sendable`: every mutable field is read and written under `condition`.
public final class MisbehavingServer: @unchecked Sendable {
    public enum Behavior: Sendable {
        /// Accepts the connection and never sends a byte.
        case silent
        /// Sends these bytes instead of an RTMP handshake, then stays silent.
        case garbage([UInt8])
        /// Sends one byte every `interval` (a handshake that never completes, but never goes quiet).
        case trickle(interval: Duration)
        /// Completes the RTMP handshake, sends `bytes`, and stays open and silent.
        case handshakeThen([UInt8])
        /// Never completes a TCP handshake: a listening socket with backlog 0 whose accept queue is filled
        /// by one connection that is never accepted, so further SYNs are dropped.
        case unreachable
        /// Anything else, scripted against the accepted connection.
        case script(@Sendable (Peer) throws -> Void)
    }

    public let port: UInt16
    private let listener: Int32
    private let condition = NSCondition()
    private var stopped = false
    private var peers: [Int32] = []
    private var acceptedCount = 0
    private var filler: Int32 = -1

    public init(_ behavior: Behavior, lifetime: Duration = .seconds(30)) throws {
        var unreachable = false
        if case .unreachable = behavior { unreachable = true }
        // Backlog 0 holds exactly one connection in the accept queue; the filler below takes it.
        let (descriptor, boundPort) = try LoopbackPort.listen(backlog: unreachable ? 0 : 8)
        listener = descriptor
        port = boundPort
        if unreachable {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var target = LoopbackPort.loopback(port: port)
            _ = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            self.filler = filler
        } else {
            Thread.detachNewThread { [self] in acceptLoop(behavior) }
        }
        let deadline = Date(timeIntervalSinceNow: lifetime / .seconds(1))
        Thread.detachNewThread { [self] in
            condition.lock()
            while !stopped, condition.wait(until: deadline) {}
            condition.unlock()
            stop()
        }
    }

    deinit {
        stop()
    }

    /// How many connections the server has accepted so far.
    public var accepted: Int { condition.withLock { acceptedCount } }

    /// Closes the listener and every accepted connection.
    public func stop() {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { return }
        stopped = true
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for peer in peers {
            shutdown(peer, Int32(SHUT_RDWR))
            close(peer)
        }
        peers.removeAll()
        if filler >= 0 { close(filler) }
        condition.broadcast()
    }

    var isStopped: Bool { condition.withLock { stopped } }

    private func acceptLoop(_ behavior: Behavior) {
        while !isStopped {
            var descriptors = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            guard poll(&descriptors, 1, 100) > 0, !isStopped else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let registered = condition.withLock {
                if stopped { return false }
                peers.append(client)
                acceptedCount += 1
                return true
            }
            guard registered else {
                close(client)
                return
            }
            Thread.detachNewThread { [self] in
                let peer = Peer(descriptor: client, server: self)
                try? Self.run(behavior, on: peer)
            }
        }
    }

    private static func run(_ behavior: Behavior, on peer: Peer) throws {
        switch behavior {
        case .silent, .unreachable:
            peer.holdOpen()
        case .garbage(let bytes):
            try peer.write(bytes)
            peer.holdOpen()
        case .trickle(let interval):
            try peer.trickle(every: interval) { _ in [0x03] }
        case .handshakeThen(let bytes):
            try peer.acceptRTMPHandshake()
            try peer.write(bytes)
            peer.holdOpen()
        case .script(let script):
            try script(peer)
        }
    }

    /// Waits up to `duration` (for ever: nil) or until the server stops; `true` if it is still running.
    @discardableResult
    func sleep(_ duration: Duration?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if let duration {
            let deadline = Date(timeIntervalSinceNow: duration / .seconds(1))
            while !stopped, condition.wait(until: deadline) {}
        } else {
            while !stopped { condition.wait() }
        }
        return !stopped
    }

    /// One accepted connection.
    ///
    /// `@unchecked Sendable`: a descriptor and its server, both immutable; the server locks what it changes.
    public final class Peer: @unchecked Sendable {
        public let descriptor: Int32
        private let server: MisbehavingServer

        init(descriptor: Int32, server: MisbehavingServer) {
            self.descriptor = descriptor
            self.server = server
        }

        public func write(_ bytes: [UInt8]) throws {
            guard LoopbackPort.send(descriptor, bytes) else {
                throw LoopbackError("send: \(String(cString: strerror(errno)))")
            }
        }

        /// Reads exactly `count` bytes (waiting as long as it takes, or until the server stops).
        public func read(_ count: Int) throws -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            var offset = 0
            while offset < count {
                let received = bytes[offset...].withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard received > 0 else { throw LoopbackError("connection ended after \(offset) of \(count) bytes") }
                offset += received
            }
            return bytes
        }

        /// Closes the connection both ways, as a server that ends or dies does (the descriptor is closed
        /// when the server stops).
        public func shutDown() {
            shutdown(descriptor, Int32(SHUT_RDWR))
        }

        /// Waits up to `duration`; `false` once the server stopped.
        @discardableResult
        public func sleep(_ duration: Duration) -> Bool {
            server.sleep(duration)
        }

        /// Keeps the connection open, sending nothing, until the server stops: not a wait for time to pass.
        public func holdOpen() {
            server.sleep(nil)
        }

        /// Sends `bytes(n)` for n = 0, 1, … every `interval` until the server stops or `bytes` returns nil: a peer
        /// that trickles (a handshake a byte at a time, media far below real time).
        public func trickle(every interval: Duration, _ bytes: (Int) throws -> [UInt8]?) throws {
            var index = 0
            while server.sleep(interval), let next = try bytes(index) {
                try write(next)
                index += 1
            }
        }

        /// The server side of the plain RTMP handshake (RTMP specification 1.0, §5.2): reads C0 and C1,
        /// sends S0, S1 and S2 (an echo of C1), reads C2.
        /// Reads one message of chunk stream 3 in 128-byte chunks (the player's `connect`, the first message after
        /// the handshake) and decodes its AMF0 values.
        public func readCommand() throws -> [AMF0Value] {
            let header = try read(12)
            let length = Int(header[4]) << 16 | Int(header[5]) << 8 | Int(header[6])
            var body: [UInt8] = []
            while body.count < length {
                if !body.isEmpty { _ = try read(1) }  // the type 3 header between chunks
                body += try read(min(128, length - body.count))
            }
            var decoder = AMF0Decoder(body)
            return try decoder.decodeAll()
        }

        public func acceptRTMPHandshake() throws {
            let c0c1 = try read(1 + 1536)
            var s1 = [UInt8](repeating: 0, count: 1536)
            for index in 8..<s1.count { s1[index] = UInt8(truncatingIfNeeded: index &* 31) }
            try write([0x03] + s1 + Array(c0c1[1...]))
            _ = try read(1536)
        }
    }
}

/// Builds RTMP chunk streams for test servers (RTMP specification 1.0, §5.3).
public enum RTMPChunkWriter {
    /// A whole message: a type 0 chunk header, then the body in `chunkSize` pieces separated by type 3
    /// headers. Timestamps must be below 0xFFFFFF (no extended timestamp).
    public static func message(
        type: UInt8, body: [UInt8], timestamp: UInt32 = 0, messageStreamID: UInt32 = 0, chunkStreamID: UInt8 = 3,
        chunkSize: Int = 128
    ) -> [UInt8] {
        var bytes = header(
            type: type, length: body.count, timestamp: timestamp, messageStreamID: messageStreamID,
            chunkStreamID: chunkStreamID)
        var offset = 0
        while offset < body.count {
            if offset > 0 { bytes.append(0xC0 | chunkStreamID) }
            let end = min(body.count, offset + chunkSize)
            bytes += body[offset..<end]
            offset = end
        }
        return bytes
    }

    /// A type 0 chunk header alone (its message's body is up to the caller: truncated, lying…).
    public static func header(
        type: UInt8, length: Int, timestamp: UInt32 = 0, messageStreamID: UInt32 = 0, chunkStreamID: UInt8 = 3
    ) -> [UInt8] {
        [
            chunkStreamID & 0x3F,
            UInt8(truncatingIfNeeded: timestamp >> 16), UInt8(truncatingIfNeeded: timestamp >> 8),
            UInt8(truncatingIfNeeded: timestamp),
            UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
            UInt8(truncatingIfNeeded: length), type,
            UInt8(truncatingIfNeeded: messageStreamID), UInt8(truncatingIfNeeded: messageStreamID >> 8),
            UInt8(truncatingIfNeeded: messageStreamID >> 16), UInt8(truncatingIfNeeded: messageStreamID >> 24),
        ]
    }

    /// An AMF0 command message (type 20) with these values.
    public static func command(_ values: [AMF0Value], messageStreamID: UInt32 = 0, chunkSize: Int = 128) -> [UInt8] {
        var encoder = AMF0Encoder()
        for value in values { encoder.encode(value) }
        return message(type: 20, body: encoder.bytes, messageStreamID: messageStreamID, chunkSize: chunkSize)
    }

    /// `onStatus(0, null, {level, code, description})` on message stream 1, as servers send it.
    public static func onStatus(_ code: String, level: String = "status") -> [UInt8] {
        command(
            [
                .string("onStatus"), .number(0), .null,
                .object([
                    AMF0Property("level", .string(level)), AMF0Property("code", .string(code)),
                    AMF0Property("description", .string(code)),
                ]),
            ], messageStreamID: 1)
    }

    /// A command whose body is `depth` objects nested in each other: librtmp's decoder recurses once per
    /// level without a limit.
    public static func amfBomb(depth: Int) -> [UInt8] {
        var body: [UInt8] = [0x02, 0x00, 0x07] + Array("_result".utf8) + [0x00] + [UInt8](repeating: 0, count: 8)
        body.reserveCapacity(body.count + depth * 7)
        for _ in 0..<depth { body += [0x03, 0x00, 0x01, 0x61] }
        body.append(0x05)
        for _ in 0..<depth { body += [0x00, 0x00, 0x09] }
        return message(type: 20, body: body)
    }

    /// A Set Chunk Size message (§5.4.1).
    public static func setChunkSize(_ size: UInt32) -> [UInt8] {
        message(
            type: 1,
            body: [UInt8(truncatingIfNeeded: size >> 24), UInt8(truncatingIfNeeded: size >> 16),
                UInt8(truncatingIfNeeded: size >> 8), UInt8(truncatingIfNeeded: size)],
            chunkStreamID: 2)
    }
}
