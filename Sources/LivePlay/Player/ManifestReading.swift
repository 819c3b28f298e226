public import LivePlayManifest
public import LivePlayTransport

extension LASManifest {
    /// Reads the LAS manifest `url` names (a path, a `file://` URL, or HTTP(S)), as playback does before its first
    /// connection: at most ``maximumSize`` bytes, one request within the transport's timeouts.
    /// - Throws: ``LivePlayError``: `sourceNotFound` (no such file, or 404), `sourceFailed` (it could not be read),
    ///   `badManifest` (not a LAS manifest, or one that cannot be played; the message says why).
    public static func read(_ url: String, transport: TransportOptions = TransportOptions()) async throws(LivePlayError)
        -> LASManifest
    {
        let shown = Redaction.url(url)
        let body: [UInt8]
        do {
            body = try await DocumentFetch.read(url, limit: maximumSize, options: transport)
        } catch {
            let missing = error.code == .notFound || error.code == .invalidURL || error.httpStatus == 404
            throw LivePlayError(
                missing ? .sourceNotFound : .sourceFailed, "the manifest \(shown) cannot be read: \(error.message)",
                cause: .transport(error))
        }
        do {
            return try LASManifest(parsing: body)
        } catch {
            throw LivePlayError(.badManifest, "\(shown) cannot be played: \(error.message)", cause: .manifest(error))
        }
    }
}
