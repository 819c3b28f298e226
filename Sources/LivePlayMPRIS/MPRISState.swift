/// What the desktop's media controls show of a player: MPRIS's `PlaybackStatus`, `Metadata`, `Volume`, `Position` and
/// what the player can do (`CanGoNext`, `CanSeek`, …), set by its front end as playback goes.
public struct MPRISState: Sendable, Equatable {
    public enum Status: String, Sendable {
        case playing = "Playing"
        case paused = "Paused"
        case stopped = "Stopped"
    }

    public var status = Status.stopped
    /// `xesam:title`: a playlist's title for the item, or the stream's name.
    public var title: String?
    /// `xesam:url`, secrets redacted.
    public var url: String?
    /// `mpris:length`: media on demand's duration.
    public var length: Duration?
    /// Where playback is (media on demand, time-shift); read by the controls when they ask.
    public var position = Duration.zero
    /// 0…1.
    public var volume = 1.0
    public var canGoNext = false
    public var canGoPrevious = false
    public var canSeek = false
    /// Which item this is: a new one is a new `mpris:trackid`.
    public var track = 0

    public init() {}

    /// The object path `mpris:trackid` names the item by.
    var trackPath: String { "/org/mpris/MediaPlayer2/Track/\(track)" }

    /// The `org.mpris.MediaPlayer2.Player` properties, by name.
    var playerProperties: [(String, BusValue)] {
        var metadata: [(String, BusValue)] = [("mpris:trackid", .objectPath(trackPath))]
        if let title { metadata.append(("xesam:title", .string(title))) }
        if let url { metadata.append(("xesam:url", .string(url))) }
        if let length { metadata.append(("mpris:length", .int64(length.microseconds))) }
        return [
            ("PlaybackStatus", .string(status.rawValue)), ("LoopStatus", .string("None")), ("Rate", .double(1)),
            ("Shuffle", .bool(false)), ("Metadata", .dictionary(metadata)), ("Volume", .double(volume)),
            ("Position", .int64(position.microseconds)), ("MinimumRate", .double(1)), ("MaximumRate", .double(1)),
            ("CanGoNext", .bool(canGoNext)), ("CanGoPrevious", .bool(canGoPrevious)), ("CanPlay", .bool(true)),
            ("CanPause", .bool(true)), ("CanSeek", .bool(canSeek)), ("CanControl", .bool(true)),
        ]
    }

    /// The `org.mpris.MediaPlayer2` properties.
    static let rootProperties: [(String, BusValue)] = [
        ("CanQuit", .bool(true)), ("CanRaise", .bool(false)), ("HasTrackList", .bool(false)),
        ("Identity", .string("liveplay")), ("DesktopEntry", .string("liveplay")),
        ("SupportedUriSchemes", .strings(["http", "https", "rtmp", "rtmps", "file"])),
        ("SupportedMimeTypes", .strings(["video/x-flv", "audio/x-mpegurl"])),
    ]

    /// The player's properties that changed from `old` to this, as `PropertiesChanged` tells them (`Position` is
    /// not told: the controls ask for it, and a jump is `Seeked`).
    func changes(from old: MPRISState) -> [(String, BusValue)] {
        let before = Dictionary(old.playerProperties, uniquingKeysWith: { first, _ in first })
        return playerProperties.filter { $0.0 != "Position" && before[$0.0] != $0.1 }
    }
}

extension Duration {
    /// Whole microseconds, as MPRIS's times are.
    var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
