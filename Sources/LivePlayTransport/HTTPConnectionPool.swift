import AsyncHTTPClient
import LivePlayCore
public import Logging
import NIOSSL

/// The HTTP client that ``HTTPFLVSource``s share, owned by this module: a caller holds one of these, never
/// AsyncHTTPClient's `HTTPClient`, so only LivePlayTransport speaks HTTP and no HTTP library type reaches
/// another module's API (STYLE.md's layering).
///
/// Its lifetime is a scope (``withPool(options:logger:_:)``), as `HTTPClient.withHTTPClient`'s is: the
/// client is shut down when the work that uses it returns, so no connection outlives the caller's task.
public struct HTTPConnectionPool: Sendable {
    let client: HTTPClient

    /// Runs `body` with a pool configured as `options` say (timeouts, TLS verification), shut down when `body`
    /// returns.
    ///
    /// - Throws: ``TransportError/Code/readFailed`` when the client fails to shut down.
    public static func withPool<Result>(
        options: TransportOptions, logger: Logger, _ body: (HTTPConnectionPool) async -> Result
    ) async throws(TransportError) -> Result {
        do {
            return try await HTTPClient.withHTTPClient(
                configuration: configuration(options), backgroundActivityLogger: logger
            ) { client in
                await body(HTTPConnectionPool(client: client))
            }
        } catch {
            throw TransportError(.readFailed, "the HTTP client failed", detail: "\(error)")
        }
    }

    /// The client configuration these options need: timeouts, redirects, TLS verification.
    static func configuration(_ options: TransportOptions) -> HTTPClient.Configuration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if options.allowsInsecureTLS { tls.certificateVerification = .none }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            // Redirects are followed by ``HTTPFLVConnection`` itself, each target checked first: AsyncHTTPClient
            // traps on a redirect to an IP literal with a port over 65535 (a server could crash the player).
            redirectConfiguration: .disallow,
            // No read timeout of AsyncHTTPClient's: bytes of an unfinished response head do not reset it, so
            // a trickled head would look like silence. The head is bounded by the handshake deadline, and
            // each body read races ``TransportOptions/noDataTimeout`` (``HTTPFLVConnection``).
            timeout: .init(connect: .nanoseconds(options.connectTimeout.nanoseconds)),
            decompression: .disabled)
        configuration.httpVersion = .http1Only
        // The player has its own reconnect policy with documented events; a refused connection must
        // surface at once, not after AsyncHTTPClient's own retries use up the connect timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }
}
