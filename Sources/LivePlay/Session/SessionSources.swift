import LivePlayManifest
import LivePlayTransport

/// Where a session plays from: its URL and the configuration's backups; for a LAS manifest (a URL or file whose path
/// ends in `.json`, ``LASManifest``), its start rendition's URL and that rendition's `backupUrl`s before them. The
/// manifest is read once, before the first connection, and its renditions are told (`LIVEPLAY_EVT_RENDITIONS`).
extension LiveSession {
    func connectAndPlay() async -> PlaybackOutcome {
        if let source { return await play([source]) }
        if LASManifest.names(url) {
            if let refused = await readManifest() { return refused }
        } else {
            sourceURLs = configuration.sourceURLs(url)
        }
        do {
            return try await SessionSource.with(sourceURLs, configuration, logger: logger, timer: realTimeThread) {
                sources in
                guard let options = configuration.timeShift, !(sources[0] is FileByteSource) else { return await play(sources) }
                return await playTimeShifted(sources[0], options)
            }
        } catch where error.code == .invalidURL {
            return reporter.fail(.fileNotFound, "\(Redaction.url(url)) cannot be played: \(error.message)")
        } catch {
            return reporter.fail(.networkDisconnected, "HTTP client: \(error.detail ?? error.message)")
        }
    }

    /// Reads the manifest and chooses the sources; how the session ends when it cannot.
    private func readManifest() async -> PlaybackOutcome? {
        let manifest: LASManifest
        do {
            manifest = try await LASManifest.read(url, transport: configuration.transport)
        } catch {
            let code: PlayEventCode = switch error.code {
            case .badManifest: .unplayable
            case .sourceNotFound: .fileNotFound
            default: .networkDisconnected
            }
            return reporter.fail(code, error.message)
        }
        let start: LASManifest.Rendition
        do {
            start = try manifest.rendition(id: configuration.rendition, maximumBitrate: configuration.maximumBitrate)
        } catch {
            return reporter.fail(.unplayable, "\(Redaction.url(url)) cannot be played: \(error.message)")
        }
        sourceURLs = [start.url] + (configuration.timeShift == nil ? start.backupURLs + configuration.backupURLs : [])
        reporter.report(Reports.renditions(manifest, playing: start))
        reporter.playbackState.manifest = manifest
        reporter.playbackState.rendition = start.id
        return nil
    }
}
