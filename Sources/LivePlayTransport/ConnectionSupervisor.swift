import AsyncHTTPClient
import LivePlayCore
public import Logging

/// What the ``ConnectionSupervisor`` tells the play loop, in order.
public enum SupervisorEvent: Sendable {
    /// A connection attempt starts (0 = the first).
    case attempt(Int)
    /// What the connection reports: connected, handshake done, stream began, bytes.
    case event(TransportEvent)
    /// The connection failed or was lost; the policy's decision comes with it (retry after a delay, or give up).
    case lost(TransportError, ReconnectPolicy.Action)
    /// The stream finished by design.
    case finished
}

/// Owns the connections of one playback: makes the source a URL names, connects, reads, and reconnects as
/// the ``ReconnectPolicy`` says, handing every event to the play loop in order.
///
/// The play loop never chooses a transport or touches the HTTP client: ``withSource(for:options:logger:sleep:_:)``
/// makes the source and keeps the client alive exactly as long as the playback, and ``run(from:deliver:abort:)``
/// is the connect–read–retry loop.
public struct ConnectionSupervisor: Sendable {
    public let source: any ByteSource
    private let policy: ReconnectPolicy
    private let sleep: @Sendable (Duration) async throws -> Void

    /// - Parameter sleep: the retry delay's timer; a player passes its own clock's.
    public init(source: any ByteSource, policy: ReconnectPolicy, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.source = source
        self.policy = policy
        self.sleep = sleep
    }

    /// Whether the source can start mid-file (media on demand: a file, an HTTP server honouring `Range`).
    public var seeksByOffset: Bool { source.makeConnection(startingAt: 0) != nil }

    /// Makes the source `url` names (`http(s)` HTTP-FLV, `rtmp(s)` RTMP, a path or `file://` a local file)
    /// and runs `body` with it. An HTTP-FLV source's client is shut down when `body` returns.
    ///
    /// - Parameter sleep: the timer an HTTP body read races for its no-data timeout.
    /// - Throws: ``TransportError/Code/invalidURL`` for a URL that names no source, or the HTTP client's
    ///   failure to shut down.
    public static func withSource<Result>(
        for url: String, options: TransportOptions, logger: Logger,
        sleep: @escaping @Sendable (Duration) async throws -> Void,
        _ body: (any ByteSource) async -> Result
    ) async throws(TransportError) -> Result {
        switch try StreamURL.kind(of: url) {
        case .httpFLV:
            do {
                return try await HTTPClient.withHTTPClient(
                    configuration: HTTPFLVSource.clientConfiguration(options), backgroundActivityLogger: logger
                ) { client in
                    await body(HTTPFLVSource(url: url, options: options, client: client, logger: logger, sleep: sleep))
                }
            } catch {
                throw TransportError(.readFailed, "the HTTP client failed", detail: "\(error)")
            }
        case .rtmp:
            return await body(RTMPSource(url: url, options: options, logger: logger))
        case .file:
            let path = (try? StreamAddress(parsing: url).path) ?? url
            return await body(FileByteSource(path: path))
        }
    }

    /// Connects (from byte `offset` when given and the source can), reads, and reconnects as the policy says,
    /// until the stream finishes, the policy gives up, `deliver` refuses an event, or the task is cancelled.
    ///
    /// - Parameters:
    ///   - deliver: hands one event to the play loop, waiting while it is full (backpressure); `false` stops.
    ///   - abort: asked after each delivered event: an error here ends the connection as lost with it.
    public func run(
        from offset: Int64?, deliver: (SupervisorEvent) async -> Bool, abort: () -> TransportError?
    ) async {
        var policy = policy
        var attempt = 0
        while !Task.isCancelled {
            guard await deliver(.attempt(attempt)) else { return }
            let connection = offset.flatMap(source.makeConnection(startingAt:)) ?? source.makeConnection()
            var sawBytes = false
            do throws(TransportError) {
                while let event = try await connection.next() {
                    if case .bytes = event, !sawBytes {
                        sawBytes = true
                        policy.mediaReceived()
                    }
                    guard await deliver(.event(event)) else {
                        await connection.close()
                        return
                    }
                    if let error = abort() { throw error }
                }
                await connection.close()
                _ = await deliver(.finished)
                return
            } catch {
                await connection.close()
                if Task.isCancelled { return }
                let action = policy.connectionLost()
                guard await deliver(.lost(error, action)) else { return }
                guard case .retry(let next, let delay) = action else { return }
                attempt = next
                do {
                    try await sleep(delay)
                } catch {
                    return
                }
            }
        }
    }
}
