public import Logging

/// The seam the `liveplay` CLI's built-in demo goes through: a ``LiveFLVServer`` in this process, on a free
/// loopback port, looping one FLV file as a live stream (GOP cache, wall-clock stamps). Start it, play its
/// ``url``, stop it.
public struct DemoStream: Sendable {
    /// `http://127.0.0.1:PORT/live.flv`.
    public let url: String
    private let server: LiveFLVServer

    /// Starts serving `path` (its own log quiet below errors).
    public static func start(path: String, logger: Logger = Logger(label: "liveplay.demo")) async throws -> DemoStream {
        var logger = logger
        logger.logLevel = max(logger.logLevel, .error)
        let server = try LiveFLVServer(
            path: path, configuration: LiveFLVServer.Configuration(port: 0, threads: 1), logger: logger)
        let port = try await server.start()
        return DemoStream(url: "http://127.0.0.1:\(port)/live.flv", server: server)
    }

    public func stop() async {
        await server.stop()
    }
}
