public import LivePlayDecode

/// A TXLivePlayer event code: the documented number and symbol, exactly as Tencent's SDK spells them.
public struct PlayEventCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public let symbol: String

    public init(rawValue: Int) {
        self.rawValue = rawValue
        self.symbol = Self.known.first { $0.rawValue == rawValue }?.symbol ?? "PLAY_EVT_UNKNOWN_\(rawValue)"
    }

    private init(_ rawValue: Int, _ symbol: String) {
        self.rawValue = rawValue
        self.symbol = symbol
    }

    public var description: String { "\(rawValue) \(symbol)" }

    /// Errors are negative; the player stops after one.
    public var isError: Bool { rawValue < 0 }
    /// Warnings are 2101–2199 and 3001–3099, and liveplay's own 9101–9199; 9001–9099 are liveplay's own
    /// informational events, −9001…−9099 its own errors.
    public var isWarning: Bool {
        (2101...2199).contains(rawValue) || (3001...3099).contains(rawValue) || (9101...9199).contains(rawValue)
    }

    public static let connectSucceeded = PlayEventCode(2001, "PLAY_EVT_CONNECT_SUCC")
    public static let rtmpStreamBegin = PlayEventCode(2002, "PLAY_EVT_RTMP_STREAM_BEGIN")
    public static let receivedFirstKeyframe = PlayEventCode(2003, "PLAY_EVT_RCV_FIRST_I_FRAME")
    public static let playBegin = PlayEventCode(2004, "PLAY_EVT_PLAY_BEGIN")
    public static let playProgress = PlayEventCode(2005, "PLAY_EVT_PLAY_PROGRESS")
    public static let playEnd = PlayEventCode(2006, "PLAY_EVT_PLAY_END")
    public static let playLoading = PlayEventCode(2007, "PLAY_EVT_PLAY_LOADING")
    public static let startVideoDecoder = PlayEventCode(2008, "PLAY_EVT_START_VIDEO_DECODER")
    public static let changeResolution = PlayEventCode(2009, "PLAY_EVT_CHANGE_RESOLUTION")
    public static let getMessage = PlayEventCode(2012, "PLAY_EVT_GET_MESSAGE")
    /// `switchStream` moved playback to the other rendition at a keyframe both share.
    public static let streamSwitchSucceeded = PlayEventCode(2015, "PLAY_EVT_STREAM_SWITCH_SUCC")
    public static let getMetadata = PlayEventCode(2028, "PLAY_EVT_GET_METADATA")

    public static let videoDecodeFailed = PlayEventCode(2101, "PLAY_WARNING_VIDEO_DECODE_FAIL")
    public static let audioDecodeFailed = PlayEventCode(2102, "PLAY_WARNING_AUDIO_DECODE_FAIL")
    public static let reconnect = PlayEventCode(2103, "PLAY_WARNING_RECONNECT")
    public static let receiveDataLag = PlayEventCode(2104, "PLAY_WARNING_RECV_DATA_LAG")
    public static let videoPlayLag = PlayEventCode(2105, "PLAY_WARNING_VIDEO_PLAY_LAG")
    /// Hardware decoding asked for by name could not start, or failed while playing: software decodes (`reason`,
    /// `device`, `decoder`).
    public static let hardwareAccelerationFailed = PlayEventCode(2106, "PLAY_WARNING_HW_ACCELERATION_FAIL")
    public static let videoDiscontinuity = PlayEventCode(2107, "PLAY_WARNING_VIDEO_DISCONTINUITY")
    /// The hardware decoder failed on the stream's first keyframe; software decoded that keyframe and goes on
    /// (`reason`, `device`, `decoder`).
    public static let firstKeyframeHardwareDecodeFailed = PlayEventCode(2108, "PLAY_WARNING_FIRST_IDR_HW_DECODE_FAIL")
    public static let dnsFailed = PlayEventCode(3001, "PLAY_WARNING_DNS_FAIL")
    public static let serverConnectFailed = PlayEventCode(3002, "PLAY_WARNING_SEVER_CONN_FAIL")
    public static let handshakeFailed = PlayEventCode(3003, "PLAY_WARNING_SHAKE_FAIL")
    public static let serverDisconnected = PlayEventCode(3004, "PLAY_WARNING_SERVER_DISCONNECT")
    public static let readWriteFailed = PlayEventCode(3005, "PLAY_WARNING_READ_WRITE_FAIL")

    public static let networkDisconnected = PlayEventCode(-2301, "PLAY_ERR_NET_DISCONNECT")
    public static let fileNotFound = PlayEventCode(-2303, "PLAY_ERR_FILE_NOT_FOUND")
    public static let hevcDecodeFailed = PlayEventCode(-2304, "PLAY_ERR_HEVC_DECODE_FAIL")
    /// `switchStream` could not switch (the other rendition unreachable, or its timestamps not aligned within the
    /// wait); the stream playing goes on. Not an end of playback.
    public static let streamSwitchFailed = PlayEventCode(-2307, "PLAY_ERR_STREAM_SWITCH_FAIL")
    public static let serverRefused = PlayEventCode(-2308, "PLAY_ERR_SERVER_REFUSED")
    /// liveplay's own: the server sends something that is not FLV; no reconnect can help.
    public static let unplayable = PlayEventCode(-9001, "LIVEPLAY_ERR_UNPLAYABLE")

    // liveplay's own events, in a range Tencent does not use (9001–9099).
    public static let catchUpStarted = PlayEventCode(9001, "LIVEPLAY_EVT_CATCH_UP_START")
    public static let catchUpEnded = PlayEventCode(9002, "LIVEPLAY_EVT_CATCH_UP_END")
    public static let catchUpSkip = PlayEventCode(9003, "LIVEPLAY_EVT_CATCH_UP_SKIP")
    public static let latencyChanged = PlayEventCode(9004, "LIVEPLAY_EVT_LATENCY_CHANGED")
    public static let listenerOverflow = PlayEventCode(9005, "LIVEPLAY_EVT_LISTENER_OVERFLOW")
    public static let sessionSummary = PlayEventCode(9006, "LIVEPLAY_EVT_SESSION_SUMMARY")
    public static let paused = PlayEventCode(9007, "LIVEPLAY_EVT_PAUSED")
    public static let resumed = PlayEventCode(9008, "LIVEPLAY_EVT_RESUMED")
    public static let seekStarted = PlayEventCode(9009, "LIVEPLAY_EVT_SEEK_START")
    public static let seekDone = PlayEventCode(9010, "LIVEPLAY_EVT_SEEK_DONE")
    /// The level of the sound played, every `enableAudioVolumeEvaluation` interval (TXLivePlayer's
    /// `onPlayoutVolumeUpdate`).
    public static let audioVolume = PlayEventCode(9011, "LIVEPLAY_EVT_AUDIO_VOLUME")
    /// A player was switched to another stream (``LivePlayer/switch(to:from:)``): its first picture reached the
    /// sink, `switch_ms` after the call; `preloaded` says whether it came from a ``PreloadPool``.
    public static let switched = PlayEventCode(9012, "LIVEPLAY_EVT_SWITCHED")
    /// A recording opened a file (V2's `onLocalRecordBegin`): `path`, `format`.
    public static let recordBegan = PlayEventCode(9013, "LIVEPLAY_EVT_RECORD_BEGIN")
    /// Every `progressInterval` while recording (V2's `onLocalRecording`): `path`, `duration_ms`, `bytes`.
    public static let recordProgress = PlayEventCode(9014, "LIVEPLAY_EVT_RECORD_PROGRESS")
    /// A recording's file was closed and is playable (V2's `onLocalRecordComplete`): `path`, `duration_ms`, `bytes`.
    public static let recordCompleted = PlayEventCode(9015, "LIVEPLAY_EVT_RECORD_COMPLETE")
    /// A multitrack stream's tracks changed: one appeared, its configuration changed, or another one plays now
    /// (``LivePlayer/selectTrack(_:_:)``): `tracks` (a summary per track), `video_tracks` / `audio_tracks` (the ids,
    /// space-separated), `video_track` / `audio_track` (the ones playing).
    public static let tracksChanged = PlayEventCode(9016, "LIVEPLAY_EVT_TRACKS_CHANGED")
    /// The RTMP server asked for a reconnect (Enhanced RTMP's `NetConnection.Connect.ReconnectRequest`): the
    /// connection was read to the next keyframe and the player moves on at once, to `tc_url` when the server
    /// named one (secrets redacted); a planned move, so no 2103 and nothing counted against the retries.
    public static let reconnectRequested = PlayEventCode(9017, "LIVEPLAY_EVT_RECONNECT_REQUESTED")
    /// An SEI message of a payload type asked for (``LivePlayConfiguration/seiPayloadTypes``), with the picture it
    /// came with: `payload_type`, `pts_ms`, `payload` (base64), `size`, `uuid` (type 5).
    public static let seiMessage = PlayEventCode(9018, "LIVEPLAY_EVT_SEI_MESSAGE")
    /// Multichannel sound is down-mixed to stereo for the sound sink: `layout`, `channels`, `to`.
    public static let audioDownmix = PlayEventCode(9019, "LIVEPLAY_EVT_AUDIO_DOWNMIX")
    /// A caption left the screen (``LivePlayConfiguration/captionChannel``): `start_ms`, `end_ms` (the times of the
    /// pictures it showed with, stream time), `text` (lines separated by `\n`), `channel` (`CC1` to `CC4`, `TEXT`).
    public static let caption = PlayEventCode(9020, "LIVEPLAY_EVT_CAPTION")
    /// The source failed and playback goes on from another (``LivePlayConfiguration/backupURLs``): `source` (0 the
    /// URL, 1… its backups), `url` (secrets redacted), `reason` (why the one before failed).
    public static let sourceChanged = PlayEventCode(9021, "LIVEPLAY_EVT_SOURCE_CHANGED")
    /// A LAS manifest was read: `renditions` (`id:kbit/s:WxH`, lowest first, `:hidden` / `:manual` where the
    /// manifest says so, comma-separated), `count`, `rendition` (the id playback starts on), `url` (redacted).
    public static let renditions = PlayEventCode(9022, "LIVEPLAY_EVT_RENDITIONS")
    /// A playlist's item starts (``LivePlayer/run(playlist:preload:)``): `index` (from 0), `count`, `url` (secrets
    /// redacted), `title` when the playlist has one.
    public static let playlistItem = PlayEventCode(9023, "LIVEPLAY_EVT_PLAYLIST_ITEM")
    /// The item starting is among a playlist's last ``LivePlaylist/reachLastCount`` (TUIPlayer's `onReachLast`), once
    /// a pass: `index`, `count`, `pass` (from 0; a looped playlist counts its passes).
    public static let playlistReachLast = PlayEventCode(9024, "LIVEPLAY_EVT_PLAYLIST_REACH_LAST")
    /// liveplay's own warning: the stream carries malformed data the demuxer skipped (a lying PreviousTagSize,
    /// an oversized tag, bad script data), reported at most once per kind every 10 s with counts.
    public static let malformedData = PlayEventCode(9101, "LIVEPLAY_WARNING_MALFORMED_DATA")
    /// liveplay's own warning: recording stopped (`cause`: `not_enough_disk_space`, `disk_full`, `write_failed`,
    /// `queue_overflow`, `unsupported`, `missing_library`; `path`, `errno`). The file is closed and playable;
    /// playback goes on.
    public static let recordFailed = PlayEventCode(9102, "LIVEPLAY_WARNING_RECORD_FAILED")
    /// Media on demand ended short of its metadata's duration, or inside a tag (a file cut short): what was there
    /// played, then 2006; `received_s`, `EVT_PLAY_DURATION` (promised), `cut_inside_tag_bytes`.
    public static let truncated = PlayEventCode(9103, "LIVEPLAY_WARNING_TRUNCATED")

    /// Every code liveplay can emit.
    public static let known: [PlayEventCode] = [
        connectSucceeded, rtmpStreamBegin, receivedFirstKeyframe, playBegin, playProgress, playEnd, playLoading,
        startVideoDecoder, changeResolution, getMessage, streamSwitchSucceeded, getMetadata, videoDecodeFailed, audioDecodeFailed, reconnect,
        receiveDataLag, videoPlayLag, hardwareAccelerationFailed, videoDiscontinuity, firstKeyframeHardwareDecodeFailed, dnsFailed, serverConnectFailed,
        handshakeFailed, serverDisconnected, readWriteFailed, networkDisconnected, fileNotFound, hevcDecodeFailed, streamSwitchFailed,
        serverRefused, catchUpStarted, catchUpEnded, catchUpSkip, latencyChanged, listenerOverflow, sessionSummary,
        paused, resumed, unplayable, seekStarted, seekDone, audioVolume, switched, malformedData, recordBegan,
        recordProgress, recordCompleted, recordFailed, tracksChanged, reconnectRequested, seiMessage, audioDownmix,
        caption, truncated, sourceChanged, renditions, playlistItem, playlistReachLast,
    ]
}

/// A parameter value of an event: what TXLivePlayer puts in its `NSDictionary`, typed.
public enum PlayEventValue: Sendable, Hashable, CustomStringConvertible {
    case int(Int64)
    case double(Double)
    case string(String)
    case bool(Bool)

    public var description: String {
        switch self {
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .string(let value): value
        case .bool(let value): String(value)
        }
    }
}

/// One event delivered to `onPlayEvent`: its code, a message for people, the time, and parameters under
/// TXLivePlayer's keys (`EVT_PARAM1`, `EVT_PARAM2`, …) and liveplay's own (lowercase, documented).
public struct PlayEvent: Sendable, Hashable {
    public var code: PlayEventCode
    /// `EVT_MSG`.
    public var message: String
    /// `EVT_TIME`: milliseconds since `startPlay`.
    public var elapsedMilliseconds: Int64
    public var parameters: [String: PlayEventValue]

    public init(
        _ code: PlayEventCode, _ message: String, elapsedMilliseconds: Int64, parameters: [String: PlayEventValue] = [:]
    ) {
        self.code = code
        self.message = message
        self.elapsedMilliseconds = elapsedMilliseconds
        self.parameters = parameters
    }
}

extension PlayEvent {
    /// The caption a `LIVEPLAY_EVT_CAPTION` (9020) event carries; `nil` for any other event.
    public var caption: Caption? {
        guard code == .caption, case .int(let start)? = parameters["start_ms"], case .int(let end)? = parameters["end_ms"],
            case .string(let text)? = parameters["text"], case .string(let name)? = parameters["channel"],
            let channel = CaptionChannel(rawValue: name)
        else { return nil }
        return Caption(
            start: MediaTimestamp(milliseconds: start), end: MediaTimestamp(milliseconds: end), text: text,
            channel: channel)
    }
}
