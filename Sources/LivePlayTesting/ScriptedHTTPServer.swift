import Foundation

/// A loopback HTTP server whose every answer is scripted by the test: a status, headers, a body
/// written at a chosen pace, then close — for HTTP errors, redirects, finished files, live bodies
/// that end, and trickles. Serves each connection on its own thread; stops in ``stop()``/deinit.
///
/// `@unchecked Sendable`: what it records and its stop flag are read and written under `lock`.
public final class ScriptedHTTPServer: @unchecked Sendable {
    /// What to send on one connection, given the request path.
    public struct Response: Sendable {
        public var status: Int
        public var reason: String
        public var headers: [(String, String)]
        public var body: [UInt8]
        /// Bytes per write and the pause between writes; `nil` writes the body at once.
        public var pacing: (chunk: Int, interval: Duration)?
        /// Send a Content-Length header (a finished file) or close-delimit the body (live).
        public var contentLength: Bool

        public init(
            status: Int = 200, reason: String = "OK", headers: [(String, String)] = [], body: [UInt8] = [],
            pacing: (chunk: Int, interval: Duration)? = nil, contentLength: Bool = true
        ) {
            self.status = status
            self.reason = reason
            self.headers = headers
            self.body = body
            self.pacing = pacing
            self.contentLength = contentLength
        }
    }

    public let port: Int
    private let listener: Int32
    private let respond: @Sendable (String, [String: String]) -> Response
    private let lock = NSLock()
    private var stopped = false
    private var requests: [(path: String, headers: [String: String])] = []

    public init(respond: @escaping @Sendable (_ path: String, _ headers: [String: String]) -> Response) throws {
        self.respond = respond
        let (descriptor, boundPort) = try LoopbackPort.listen()
        listener = descriptor
        port = Int(boundPort)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit {
        stop()
    }

    /// Every request received so far: path and headers (names lowercased).
    public var receivedRequests: [(path: String, headers: [String: String])] {
        lock.withLock { requests }
    }

    public func stop() {
        let wasStopped = lock.withLock {
            defer { stopped = true }
            return stopped
        }
        guard !wasStopped else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func acceptLoop() {
        while !isStopped {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.ends(with: [13, 10, 13, 10]) && request.count < 65536 {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer[0..<count]
        }
        let lines = String(decoding: request, as: UTF8.self).components(separatedBy: "\r\n")
        let path = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        lock.withLock { requests.append((path, headers)) }
        let response = respond(path, headers)
        var head = "HTTP/1.1 \(response.status) \(response.reason)\r\nConnection: close\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        if response.contentLength { head += "Content-Length: \(response.body.count)\r\n" }
        head += "\r\n"
        guard LoopbackPort.send(client, Array(head.utf8)) else { return }
        guard let pacing = response.pacing else {
            _ = LoopbackPort.send(client, response.body)
            return
        }
        var offset = 0
        while offset < response.body.count, !isStopped {
            let end = min(offset + pacing.chunk, response.body.count)
            guard LoopbackPort.send(client, Array(response.body[offset..<end])) else { return }
            offset = end
            Thread.sleep(forTimeInterval: Double(pacing.interval / .milliseconds(1)) / 1000)
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
