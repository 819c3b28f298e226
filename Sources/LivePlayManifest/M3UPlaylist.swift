import FoundationEssentials

/// A playlist in the extended M3U format (`#EXTM3U`, `#EXTINF:duration,title`; RFC 8216 section 4.1 describes the
/// common base that HLS extends): the streams and files to play one after another, each with its title.
///
/// Bytes from a file or the network: bounded in size and in entries, read as UTF-8 text, each entry resolved against
/// the playlist's own address (RFC 3986 section 5, by FoundationEssentials' `URL`), and checked here, so that what
/// is not a playlist of playable media is refused with one sentence (``M3UPlaylistError``). Fuzzed (`FuzzPlaylist`).
public struct M3UPlaylist: Sendable, Hashable {
    /// Bodies larger than this are not playlists of streams (10,000 entries with titles are about 1 MiB).
    public static let maximumSize = 1 << 21
    /// Entries past this are refused rather than played: a feed is paged (``LivePlaylist``'s reach-last), not
    /// handed over whole.
    public static let maximumEntries = 10_000

    public var entries: [Entry]

    /// One entry: what to play, and what `#EXTINF` said of it.
    public struct Entry: Sendable, Hashable {
        /// An absolute URL (HTTP(S), RTMP(S), or `file://` for an entry of a local playlist).
        public var url: String
        public var title: String?
        /// `#EXTINF`'s duration; `nil` for −1 (a live stream) or none.
        public var duration: Duration?
        /// The entry's picture, for a window to show while it plays without video: `#EXTIMG:` before it, or `#EXTINF`'s
        /// `tvg-logo="…"`, resolved as entries are (an HTTP(S) URL, or a path in a local playlist); one that does not
        /// resolve is left out, not a reason to refuse the playlist.
        public var poster: String?
    }

    /// Whether `url` names a playlist rather than a stream: its path (before any query or fragment) ends in `.m3u`.
    /// (`.m3u8` is an HLS playlist of segments, which liveplay does not play.)
    public static func names(_ url: String) -> Bool {
        let path = url.split(maxSplits: 1, omittingEmptySubsequences: false) { $0 == "?" || $0 == "#" }.first ?? ""
        return path.lowercased().hasSuffix(".m3u")
    }

    /// Reads a playlist from its bytes; `base` is where it was read from (an absolute path, `file://` or HTTP(S)
    /// URL), which relative entries are resolved against.
    /// - Throws: ``M3UPlaylistError`` with a sentence saying what is wrong.
    public init(parsing bytes: some Collection<UInt8>, base: String) throws(M3UPlaylistError) {
        guard bytes.count <= Self.maximumSize else {
            throw M3UPlaylistError("it is larger than \(Self.maximumSize >> 20) MiB: not a playlist")
        }
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
            throw M3UPlaylistError("it is not text (a playlist is UTF-8 lines)")
        }
        guard let baseURL = Self.baseURL(base) else { throw M3UPlaylistError("its own address cannot be read") }
        let remote = baseURL.scheme != "file"
        var entries: [Entry] = []
        var pending: (title: String?, duration: Duration?, poster: String?) = (nil, nil, nil)
        for (number, raw) in text.split(whereSeparator: \.isNewline).enumerated() {
            let line = trimmed(raw)
            if line.hasPrefix("#EXT-X-") {
                throw M3UPlaylistError("line \(number + 1) is HLS (\(line.prefix(20))): liveplay plays FLV, not HLS")
            }
            if line.hasPrefix("#EXTINF:") {
                let information = line.dropFirst("#EXTINF:".count)
                (pending.title, pending.duration) = Self.information(information)
                if let logo = Self.attribute("tvg-logo", in: information) {
                    pending.poster = Self.poster(logo, against: baseURL, remote: remote) ?? pending.poster
                }
                continue
            }
            if line.hasPrefix("#EXTIMG:") {
                pending.poster = Self.poster(trimmed(line.dropFirst("#EXTIMG:".count)), against: baseURL, remote: remote)
                continue
            }
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard entries.count < Self.maximumEntries else {
                throw M3UPlaylistError("it has more than \(Self.maximumEntries) entries")
            }
            let url = try Self.resolve(line, against: baseURL, remote: remote, line: number + 1)
            entries.append(Entry(url: url, title: pending.title, duration: pending.duration, poster: pending.poster))
            pending = (nil, nil, nil)
        }
        guard !entries.isEmpty else { throw M3UPlaylistError("it has no entry to play") }
        self.entries = entries
    }

    /// `DURATION,TITLE` (attributes between them, `tvg-logo="…"`, are skipped).
    private static func information(_ text: Substring) -> (String?, Duration?) {
        let comma = text.firstIndex(of: ",")
        let head = text[..<(comma ?? text.endIndex)]
        let seconds = head.split(separator: " ").first.flatMap { Double($0) }
        let title = comma.map { trimmed(text[text.index(after: $0)...]) }
        let duration = seconds.flatMap { $0 >= 0 && $0 < 1e9 ? Duration.milliseconds(Int64($0 * 1000)) : nil }
        return (title?.isEmpty == false ? title : nil, duration)
    }

    /// `name="value"` among `#EXTINF`'s attributes (before the title's comma).
    private static func attribute(_ name: String, in text: Substring) -> String? {
        let head = text[..<(text.firstIndex(of: ",") ?? text.endIndex)]
        guard let start = head.firstRange(of: name + "=\"")?.upperBound,
            let end = head[start...].firstIndex(of: "\"")
        else { return nil }
        return String(head[start..<end])
    }

    /// A poster's address resolved as an entry is, an HTTP(S) URL or a local path; nil when it is neither.
    private static func poster(_ text: String, against base: URL, remote: Bool) -> String? {
        guard !text.isEmpty, let url = try? resolve(text, against: base, remote: remote, line: 0),
            url.hasPrefix("/") || url.lowercased().hasPrefix("http")
        else { return nil }
        return url
    }

    private static func baseURL(_ base: String) -> URL? {
        if base.hasPrefix("/") { return URL(filePath: base) }
        guard let url = URL(string: base), let scheme = url.scheme?.lowercased(),
            ["http", "https", "file"].contains(scheme)
        else { return nil }
        return url
    }

    private static func resolve(_ entry: String, against base: URL, remote: Bool, line: Int) throws(M3UPlaylistError)
        -> String
    {
        guard !entry.contains(where: { $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } == true }) else {
            throw M3UPlaylistError("line \(line) has a control character in it")
        }
        // Resolved, then its dot segments removed; the host is read before that (`rtmp:x` has none, and removing
        // dot segments would make one of it).
        let absolute =
            entry.hasPrefix("/") && !remote ? URL(filePath: entry) : URL(string: entry, relativeTo: base)?.absoluteURL
        guard let resolved = absolute?.standardized, let scheme = resolved.scheme?.lowercased() else {
            throw M3UPlaylistError("line \(line) is not a URL or a path")
        }
        switch scheme {
        case "http", "https", "rtmp", "rtmps":
            guard absolute?.host?.isEmpty == false, resolved.host?.isEmpty == false else {
                throw M3UPlaylistError("line \(line) is a \(scheme): URL without a host")
            }
        // `file:e` names no file in particular: a local entry is an absolute path once resolved.
        case "file" where !remote && resolved.path.hasPrefix("/"): break
        case "file" where !remote: throw M3UPlaylistError("line \(line) is a file: URL without a path from the root")
        case "file": throw M3UPlaylistError("line \(line) names a local file, which a playlist from the network may not")
        default: throw M3UPlaylistError("line \(line) is a \(scheme): URL, not HTTP(S), RTMP(S) or a file")
        }
        let url = scheme == "file" ? resolved.path : resolved.absoluteString
        guard !names(url) else {
            throw M3UPlaylistError("line \(line) is a playlist: a playlist inside a playlist is not played")
        }
        return url
    }
}

private func trimmed(_ text: Substring) -> String {
    String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
}

/// A playlist refused: `message` says why, in a sentence that follows "… cannot be played: …".
public struct M3UPlaylistError: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
