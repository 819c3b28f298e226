import LivePlayCache
import LivePlayTransport
import Logging

/// Where a session's bytes come from: the source its URL names (by scheme: HTTP-FLV, RTMP or a file), read through
/// the media cache when the configuration has one and the source is HTTP. The one place a session's source is
/// chosen; the play loop only reads what it is given.
enum SessionSource {
    static func with<Result>(
        _ url: String, _ configuration: LivePlayConfiguration, logger: Logger, timer: (any DeadlineTimer)?,
        _ body: (any ByteSource) async -> Result
    ) async throws(TransportError) -> Result {
        try await ConnectionSupervisor.withSource(
            for: url, options: configuration.transport, logger: logger, timer: timer
        ) { source in
            guard let cache = configuration.cache, let network = source as? HTTPFLVSource else { return await body(source) }
            return await body(CachingSource(network: network, cache: cache))
        }
    }
}
