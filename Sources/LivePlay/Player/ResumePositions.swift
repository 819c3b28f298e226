import Foundation
import LivePlayCore

/// Where media on demand was left, per URL (mpv's `--save-position-on-quit`, VLC's remembered positions, Brightcove's
/// `resumeVideo(at:)`): a text file of `KEY<TAB>MILLISECONDS` lines, the newest last, at most ``capacity`` of them (the
/// oldest forgotten first). A URL's key is its scheme, host, port and path: the query, fragment and user info are left
/// out, so a token that changes from one play to the next (and a secret) is neither stored nor part of the key.
///
/// The file is replaced whole (written beside it, then renamed over it), so a crash mid-write leaves the old file or
/// the new one, never a mix; a line that does not read (a file edited by hand, an older format) is skipped, and no
/// more than ``maximumFileBytes`` are read. Not shared between processes beyond that: the last writer wins.
public struct ResumePositions: Sendable, Hashable {
    public let path: String
    public let capacity: Int
    public static let maximumFileBytes = 1 << 20

    /// `$XDG_STATE_HOME/liveplay/positions` (the XDG Base Directory's state directory, for "history" that should
    /// survive a restart), or `~/.local/state/liveplay/positions` without it.
    public static var standardPath: String {
        let environment = ProcessInfo.processInfo.environment
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        return state + "/liveplay/positions"
    }

    public init(path: String = ResumePositions.standardPath, capacity: Int = 500) {
        self.path = path
        self.capacity = max(1, capacity)
    }

    /// What `url` is kept under: a file's absolute path, or a URL's scheme, host, port and path.
    public static func key(for url: String) -> String {
        guard let components = URLComponents(string: url), let scheme = components.scheme, scheme != "file",
            components.host != nil
        else {
            let path = url.hasPrefix("file://") ? String(url.dropFirst("file://".count)) : url
            return URL(fileURLWithPath: path).standardizedFileURL.path
        }
        var kept = URLComponents()
        kept.scheme = scheme.lowercased()
        kept.host = components.host?.lowercased()
        kept.port = components.port
        kept.percentEncodedPath = components.percentEncodedPath
        return kept.string ?? url
    }

    /// Makes the file's directory and checks that it can be written, so that a front end can say at the start of a
    /// run, rather than after it, that positions will not be kept.
    public func prepare() throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard access(directory, W_OK) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EACCES) }
    }

    /// Where `url` was left, if it was.
    public func position(for url: String) -> Duration? {
        let key = Self.key(for: url)
        return entries().last { $0.key == key }.map { .milliseconds($0.milliseconds) }
    }

    /// Keeps `position` for `url`, as the newest entry.
    public func remember(_ position: Duration, for url: String) throws {
        let key = Self.key(for: url)
        // A key with a tab or a line break in it (a strange file name) would not read back: not kept.
        guard !key.contains(where: { $0 == "\t" || $0.isNewline }) else { return }
        var kept = entries().filter { $0.key != key }
        kept.append((key, position.milliseconds))
        try write(kept.suffix(capacity))
    }

    /// Forgets `url` (it was played to its end).
    public func forget(_ url: String) throws {
        let key = Self.key(for: url)
        let all = entries()
        guard all.contains(where: { $0.key == key }) else { return }
        try write(all.filter { $0.key != key }[...])
    }

    private func entries() -> [(key: String, milliseconds: Int64)] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: Self.maximumFileBytes)) ?? Data()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t")
            guard fields.count == 2, let milliseconds = Int64(fields[1]), milliseconds >= 0 else { return nil }
            return (String(fields[0]), milliseconds)
        }
    }

    private func write(_ entries: ArraySlice<(key: String, milliseconds: Int64)>) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let text = entries.map { "\($0.key)\t\($0.milliseconds)\n" }.joined()
        // Written beside the file and renamed over it: rename(2) replaces it whole.
        let temporary = path + ".\(ProcessInfo.processInfo.processIdentifier).new"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8)) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary])
        }
        guard rename(temporary, path) == 0 else {
            let failure = errno
            unlink(temporary)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
    }
}

extension LivePlayer {
    /// Where `url` was left, when resuming is on (``LivePlayConfiguration/resume``): where ``startPlay(_:type:)``
    /// starts it unless the configuration has a ``LivePlayConfiguration/startPosition``. A front end tells the viewer
    /// (the CLI prints a line).
    public func resumePosition(for url: String) -> Duration? {
        let configuration = state.withLock { $0.configuration }
        return configuration.startPosition == nil ? configuration.resume?.position(for: url) : nil
    }

    /// `configuration` starting where `url` was left, when it resumes and has no start of its own.
    static func resuming(_ url: String, _ configuration: LivePlayConfiguration) -> LivePlayConfiguration {
        guard configuration.startPosition == nil, let resume = configuration.resume else { return configuration }
        var resumed = configuration
        resumed.startPosition = resume.position(for: url)
        return resumed
    }

    /// After a playback of media on demand: where it stopped, kept; forgotten once played to its end (or to within
    /// ``finishedWithin`` of it), or stopped before its first second. A live stream keeps nothing.
    func keepPosition(of url: String, after outcome: PlaybackOutcome, in resume: ResumePositions?) {
        guard let resume, case .onDemand(let position, let duration) = state.withLock({ $0.playbackState.timeline })
        else { return }
        let finished = outcome == .ended || duration.map { position >= $0 - Self.finishedWithin.seconds } == true
        do {
            if finished || position < 1 {
                try resume.forget(url)
            } else {
                try resume.remember(.milliseconds(Int64(position * 1000)), for: url)
            }
        } catch {
            logger.warning("liveplay could not keep where \(Redaction.url(url)) was left: \(error)")
        }
    }

    /// How near its end an item counts as finished: the credits of a film, the last GOP of a clip.
    public static let finishedWithin = Duration.seconds(5)
}
