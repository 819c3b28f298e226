import FoundationEssentials

/// # LivePlayManifest
///
/// A LAS manifest (Kuaishou's Live Adaptive Streaming, `KwaiVideoTeam/las`): the renditions of one live stream,
/// each an FLV URL with its backups and its bitrate, read from the JSON a LAS server or an app publishes.
/// Its reference client's manifest is `client/las.js/demo/manifest.json` and its reading `src/abr/abr-manifest.ts`.
///
/// Bytes from the network: read whole with FoundationEssentials' JSON decoder (no ICU, no locale), bounded in size,
/// and checked here, so that a manifest that is not LAS, or is LAS with something missing or unsafe, is refused
/// with one sentence (``LASManifestError``). Fuzzed (`FuzzManifest`).
public struct LASManifest: Sendable, Hashable {
    /// Bodies larger than this are not manifests (a manifest of ten renditions is about 5 KiB).
    public static let maximumSize = 1 << 20

    /// The manifest's `version`.
    public var version: String
    /// The streams' GOP, `adaptationSet[0].duration`, when given.
    public var groupOfPictures: Duration?
    /// The first adaptation set's renditions, lowest bitrate first (as LAS's client orders them).
    public var renditions: [Rendition]

    /// One `representation`: an FLV stream of the live programme at one bitrate.
    public struct Rendition: Sendable, Hashable, Identifiable {
        public var id: Int
        /// The FLV (HTTP(S), or RTMP(S)) the rendition plays from, and its backups (`backupUrl`), in order.
        public var url: String
        public var backupURLs: [String]
        /// `maxBitrate`, kbit/s.
        public var maxBitrate: Int
        /// `codec`, as RFC 6381 names it (`avc1.64001f,mp4a.40.5`), when given.
        public var codec: String?
        public var width: Int?
        public var height: Int?
        public var frameRate: Double?
        /// `qualityType` (`HIGH`) and `qualityTypeName` (its name for people).
        public var qualityType: String?
        public var qualityTypeName: String?
        /// Not offered to the viewer's choice: only adaptation picks it.
        public var hidden: Bool
        /// Never picked by adaptation: only the viewer's choice plays it.
        public var disabledFromAdaptive: Bool
        public var defaultSelected: Bool

        /// `720p 2300 kbit/s (HIGH)`: what a list of renditions shows.
        public var label: String {
            let size = height.map { "\($0)p " } ?? ""
            return "\(size)\(maxBitrate) kbit/s" + (qualityType.map { " (\($0))" } ?? "")
        }
    }

    /// Whether `url` names a manifest rather than a stream: its path (before any query) ends in `.json`.
    public static func names(_ url: String) -> Bool {
        let path = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return path.lowercased().hasSuffix(".json")
    }

    /// Reads a manifest from its bytes.
    /// - Throws: ``LASManifestError`` with a sentence saying what is wrong.
    public init(parsing bytes: some Collection<UInt8>) throws(LASManifestError) {
        guard bytes.count <= Self.maximumSize else {
            throw LASManifestError("it is larger than \(Self.maximumSize >> 20) MiB: not a manifest")
        }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(bytes))
        } catch DecodingError.dataCorrupted {
            throw LASManifestError("it is not JSON")
        } catch let DecodingError.keyNotFound(key, context) {
            throw LASManifestError("it has no `\(Self.path(context.codingPath + [key]))`: not a LAS manifest")
        } catch let DecodingError.typeMismatch(_, context) {
            throw LASManifestError("its `\(Self.path(context.codingPath))` is not what LAS puts there")
        } catch let DecodingError.valueNotFound(_, context) {
            throw LASManifestError("its `\(Self.path(context.codingPath))` is null")
        } catch {
            throw LASManifestError("it is not JSON")
        }
        guard let set = document.adaptationSet.first else {
            throw LASManifestError("its `adaptationSet` is empty: no rendition to play")
        }
        guard !set.representation.isEmpty else {
            throw LASManifestError("its `adaptationSet[0].representation` is empty: no rendition to play")
        }
        var renditions: [Rendition] = []
        for (index, item) in set.representation.enumerated() {
            for url in [item.url] + (item.backupUrl ?? []) where !Self.isStreamURL(url) {
                throw LASManifestError("representation \(index) has a URL that is not HTTP(S) or RTMP(S)")
            }
            guard !renditions.contains(where: { $0.id == item.id }) else {
                throw LASManifestError("representation \(index) repeats the id \(item.id)")
            }
            renditions.append(
                Rendition(
                    id: item.id, url: item.url, backupURLs: item.backupUrl ?? [], maxBitrate: max(0, item.maxBitrate ?? 0),
                    codec: item.codec, width: item.width, height: item.height, frameRate: item.frameRate,
                    qualityType: item.qualityType, qualityTypeName: item.qualityTypeName, hidden: item.hidden ?? false,
                    disabledFromAdaptive: item.disabledFromAdaptive ?? false, defaultSelected: item.defaultSelected ?? false))
        }
        version = document.version
        groupOfPictures = set.duration.flatMap { $0 > 0 && $0 < 60_000 ? .milliseconds($0) : nil }
        self.renditions = renditions.sorted { ($0.maxBitrate, $0.id) < ($1.maxBitrate, $1.id) }
    }

    /// The rendition playback starts on: the first `defaultSelected` one, as LAS's client does; without one, the
    /// lowest that adaptation may pick (the safe start before any throughput is known), or the lowest of all.
    public var startRendition: Rendition {
        renditions.first { $0.defaultSelected } ?? renditions.first { !$0.disabledFromAdaptive } ?? renditions[0]
    }

    /// The rendition playback starts on: the one asked for by `id` (any, hidden or not), else ``startRendition``
    /// if it is within `maximumBitrate` (kbit/s), else the best one within it that adaptation may pick, else the
    /// lowest.
    /// - Throws: ``LASManifestError`` when no rendition has that `id`.
    public func rendition(id: Int?, maximumBitrate: Int?) throws(LASManifestError) -> Rendition {
        if let id {
            guard let chosen = renditions.first(where: { $0.id == id }) else {
                let ids = renditions.map { String($0.id) }.joined(separator: ", ")
                throw LASManifestError("it has no rendition \(id) (its renditions are \(ids))")
            }
            return chosen
        }
        let start = startRendition
        guard let cap = maximumBitrate, start.maxBitrate > cap else { return start }
        return renditions.last { $0.maxBitrate <= cap && !$0.disabledFromAdaptive } ?? renditions[0]
    }

    /// The renditions a viewer may choose (`hidden` ones are adaptation's only).
    public var choosable: [Rendition] { renditions.filter { !$0.hidden } }

    // MARK: - The JSON

    private struct Document: Decodable {
        var version: String
        var adaptationSet: [AdaptationSet]
    }

    private struct AdaptationSet: Decodable {
        var duration: Int?
        var representation: [Representation]
    }

    private struct Representation: Decodable {
        var id: Int
        var url: String
        var backupUrl: [String]?
        var maxBitrate: Int?
        var codec: String?
        var width: Int?
        var height: Int?
        var frameRate: Double?
        var qualityType: String?
        var qualityTypeName: String?
        var hidden: Bool?
        var disabledFromAdaptive: Bool?
        var defaultSelected: Bool?
    }

    private static func isStreamURL(_ url: String) -> Bool {
        let lowered = url.lowercased()
        return ["http://", "https://", "rtmp://", "rtmps://"].contains { lowered.hasPrefix($0) && lowered.count > $0.count }
            && !url.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } == true })
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
            .trimmingPrefix(".").description
    }
}

/// A manifest refused: `message` says why, in a sentence that follows "… cannot be played: the manifest …".
public struct LASManifestError: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
