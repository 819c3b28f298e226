import Foundation
public import LivePlayDecode
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
        let body = try await readDocument(url, kind: "manifest", limit: maximumSize, transport: transport)
        do {
            return try LASManifest(parsing: body)
        } catch {
            throw LivePlayError(.badManifest, "\(Redaction.url(url)) cannot be played: \(error.message)", cause: .manifest(error))
        }
    }
}

extension M3UPlaylist {
    /// Reads the M3U playlist `url` names (a path, a `file://` URL, or HTTP(S)), its entries resolved against it: at
    /// most ``maximumSize`` bytes, one request within the transport's timeouts.
    /// - Throws: ``LivePlayError``: `sourceNotFound` (no such file, or 404), `sourceFailed` (it could not be read),
    ///   `badPlaylist` (not a playlist of what liveplay plays; the message says why).
    public static func read(_ url: String, transport: TransportOptions = TransportOptions()) async throws(LivePlayError)
        -> M3UPlaylist
    {
        let body = try await readDocument(url, kind: "playlist", limit: maximumSize, transport: transport)
        // A relative path is relative to the working directory; its entries, to the playlist's own directory.
        let base = url.hasPrefix("/") || url.contains("://") ? url : FileManager.default.currentDirectoryPath + "/" + url
        do {
            return try M3UPlaylist(parsing: body, base: base)
        } catch {
            throw LivePlayError(.badPlaylist, "\(Redaction.url(url)) cannot be played: \(error.message)", cause: .playlist(error))
        }
    }
}

extension StillImage {
    /// Reads and decodes the PNG or JPEG picture `url` names (a path, a `file://` URL, or HTTP(S)): a poster, at most
    /// ``maximumBytes`` in one request within the transport's timeouts.
    /// - Throws: ``LivePlayError``: `sourceNotFound`, `sourceFailed`, `badImage` (the message says why).
    public static func read(_ url: String, transport: TransportOptions = TransportOptions()) async throws(LivePlayError)
        -> RGBPicture
    {
        let body = try await readDocument(url, kind: "picture", limit: maximumBytes, transport: transport)
        do {
            return try decode(body)
        } catch {
            throw LivePlayError(.badImage, "\(Redaction.url(url)) cannot be shown: \(error.message)", cause: .decode(error))
        }
    }
}

/// A manifest's or a playlist's bytes, with what went wrong in reading them as a ``LivePlayError``.
private func readDocument(
    _ url: String, kind: String, limit: Int, transport: TransportOptions
) async throws(LivePlayError) -> [UInt8] {
    do {
        return try await DocumentFetch.read(url, limit: limit, options: transport)
    } catch {
        let missing = error.code == .notFound || error.code == .invalidURL || error.httpStatus == 404
        throw LivePlayError(
            missing ? .sourceNotFound : .sourceFailed, "the \(kind) \(Redaction.url(url)) cannot be read: \(error.message)",
            cause: .transport(error))
    }
}
