import LivePlayCache
import LivePlayTransport
import Logging

/// Where a session's bytes come from: the source its URL names (by scheme: HTTP-FLV, RTMP or a file), read through
/// the media cache when the configuration has one and the source is HTTP. The one place a session's source is
/// chosen; the play loop only reads what it is given.
enum SessionSource {
    /// Runs `body` with the sources of `urls` (the URL, then its backups), each through the cache where it applies.
    static func with<Result>(
        _ urls: [String], _ configuration: LivePlayConfiguration, logger: Logger, timer: (any DeadlineTimer)?,
        _ body: ([any ByteSource]) async -> Result
    ) async throws(TransportError) -> Result {
        try await ConnectionSupervisor.withSources(
            for: urls, options: configuration.transport, logger: logger, timer: timer
        ) { sources in
            await body(
                sources.map { source in
                    guard let cache = configuration.cache, let network = source as? HTTPFLVSource else { return source }
                    return CachingSource(network: network, cache: cache)
                })
        }
    }
}
