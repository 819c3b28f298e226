public import LivePlayBuffering
public import LivePlayCache
public import LivePlayDecode
public import LivePlayTransport
import LivePlayLoudness

/// How a live stream is played: TXLivePlayConfig's fields under their own names, plus liveplay's.
public struct LivePlayConfiguration: Sendable {
    /// Reconnect attempts after a loss (`connectRetryCount`, default 3).
    public var connectRetryCount: Int
    /// Wait before each attempt (`connectRetryInterval`, default 3 s).
    public var connectRetryInterval: Duration
    /// Deliver `PLAY_EVT_GET_MESSAGE` (2012) for script-data messages (`enableMessage`).
    public var enableMessage: Bool
    /// Deliver `PLAY_EVT_GET_METADATA` (2028) for onMetaData (`enableMetaData`).
    public var enableMetaData: Bool
    /// The H.264 / HEVC SEI payload types delivered as `LIVEPLAY_EVT_SEI_MESSAGE` (9018) and on
    /// ``FrameTiming/seiMessages``, each with the picture it came with (TXLivePlayer V2's
    /// `enableReceiveSeiMessage`): 5 (user data unregistered), 242, 243… Empty: none.
    public var seiPayloadTypes: Set<Int> = []
    /// The CEA-608 caption channel decoded from the pictures' caption data (H.264 / HEVC SEI, ATSC A/53): each
    /// caption goes to the sink with its pictures (``FrameTiming/caption``) and, once it leaves the screen, out as
    /// `LIVEPLAY_EVT_CAPTION` (9020). `nil`: none decoded. A stream without caption data costs nothing.
    public var captionChannel: CaptionChannel? = .cc1
    /// Decode, or only demux (probe mode).
    public var decodes: Bool
    public var decoder: DecoderOptions
    /// Timeouts, request headers, TLS.
    public var transport: TransportOptions
    /// Media arriving slower than this fraction of real time over ``lagWindow`` is reported as
    /// `PLAY_WARNING_RECV_DATA_LAG` (2104).
    public var lagThreshold: Double
    public var lagWindow: Duration
    /// The latency mode's parameters (`LatencyParameters.preset(.auto)` by default; `.speed`, `.smooth`).
    public var latency: LatencyParameters
    /// Hard limits of the jitter buffer.
    public var bufferLimits: JitterBuffer.Limits
    /// The longest the play loop waits between turns. It turns when input or a command arrives and when media
    /// falls due (a picture's or a block of sound's time, a status report); this bounds the wait when nothing
    /// does (loading, paused, a probe that decodes nothing), for the engine's timeouts.
    public var tickInterval: Duration
    /// Media on demand (a file, an HTTP response with a length) starts here, from the keyframe at or before
    /// it; a live stream ignores it. `nil`: from the start.
    public var startPosition: Duration?
    /// Media on demand resumes where it was left (``ResumePositions``): without a ``startPosition``, a playback
    /// started with ``LivePlayer/startPlay(_:type:)`` starts where the last one of the same URL stopped, and each one
    /// keeps where it stopped, or is forgotten once played to its end. `nil`: off (the library's default; the CLI's
    /// is the standard file, `--no-resume` turns it off).
    public var resume: ResumePositions?
    /// A seek (and ``startPosition``) shows the picture at its target: decoded from the keyframe at or before it,
    /// the pictures between not shown and the sound before it not played (TXVodPlayer's `enableAccurateSeek`).
    /// `false`: playback starts at that keyframe, sooner by what lies between.
    public var accurateSeek = true
    /// Time-shift for a live stream (TXLivePlayer's `prepareLiveSeek`): the last ``TimeShiftRing/Options/window``
    /// of it is kept on disk while it plays, and ``PlaybackControl/seek(to:)`` goes back within it (docs/time-shift.md).
    /// `nil`: off. Media on demand ignores it.
    public var timeShift: TimeShiftRing.Options?
    /// Records what arrives from the start of playback (`nil`: not; ``PlaybackControl/startRecording(_:)`` starts
    /// one while playing).
    public var recording: RecordingOptions?
    /// HTTP media on demand plays through this cache (docs/cache.md): a complete entry from disk with no
    /// request, a partial one from disk and then `Range`, a new one written as it plays. `nil`: no cache.
    public var cache: MediaCache?
    /// Where the stream is too, tried in order when the URL's source fails (refuses, answers with an HTTP error, ends,
    /// or its reconnects run out): playback goes on from the next one (``SourceRotation``), told by
    /// `LIVEPLAY_EVT_SOURCE_CHANGED` (9021); −2301 only once every source has had its retries. Live streams only: a
    /// time-shifted one, or media on demand, reads the URL alone.
    public var backupURLs: [String] = []
    /// While a backup plays, how often the URL's source is tried in the background (doubling after each failed try,
    /// up to 12 times this): once it gives a keyframe again, playback moves back to it between two reads (9021).
    public var backupProbeInterval: Duration = .seconds(5)

    /// A LAS manifest's rendition to play, by its `id` (`--rendition`); nil: the manifest's start rendition. A
    /// rendition chosen here (or by ``LivePlayer/selectRendition(_:)``) turns adaptation off.
    public var rendition: Int?
    /// A LAS manifest's rendition follows the network (``RenditionAdaptation``, carried out by ``LivePlayer``):
    /// down before the buffer runs dry, up once the link has shown it carries more.
    public var adaptiveBitrate = true
    /// The highest bitrate a LAS manifest's rendition may have, in kbit/s (`--max-bitrate`, Brightcove's preferred
    /// peak bitrate): playback starts on the start rendition if it is under the cap, else the best one under it (the
    /// lowest, if none is). nil: no cap.
    public var maximumBitrate: Int?

    /// The sources a playback of `url` reads, in order: `url`, then its backups (not with time-shift, whose ring
    /// records the URL's stream alone).
    func sourceURLs(_ url: String) -> [String] {
        timeShift == nil ? [url] + backupURLs : [url]
    }
    /// The video and audio track a multitrack stream plays from the start (Enhanced RTMP v2 track ids); nil:
    /// the lowest id. ``PlaybackControl/selectTrack(_:_:)`` changes them while playing.
    public var videoTrack: UInt8?
    public var audioTrack: UInt8?
    /// Loudness normalisation to this many LUFS (−70…0; TUIPlayer's range; −16 is what streaming services play at),
    /// measured per EBU R 128 and applied to the sound before it reaches the sink (the device, a WAV or PCM file):
    /// the gain moves slowly, holds through pauses, and no sample goes past −1 dBFS (``LoudnessNormalizer``). The net
    /// status carries the loudness measured and the gain. `nil`: off.
    public var loudness: Double?
    /// The threads this session shares with others (many streams in one process, `liveplay monitor`); `nil`: a
    /// thread of its own.
    public var threads: PlaybackThreadGroup?

    public init(
        connectRetryCount: Int = 3, connectRetryInterval: Duration = .seconds(3), enableMessage: Bool = false,
        enableMetaData: Bool = false, decodes: Bool = true, decoder: DecoderOptions = DecoderOptions(),
        transport: TransportOptions = TransportOptions(), lagThreshold: Double = 0.8, lagWindow: Duration = .seconds(3),
        latency: LatencyParameters = .preset(.auto), bufferLimits: JitterBuffer.Limits = JitterBuffer.Limits(),
        tickInterval: Duration = .milliseconds(100)
    ) {
        self.latency = latency
        self.bufferLimits = bufferLimits
        self.tickInterval = tickInterval
        self.connectRetryCount = connectRetryCount
        self.connectRetryInterval = connectRetryInterval
        self.enableMessage = enableMessage
        self.enableMetaData = enableMetaData
        self.decodes = decodes
        self.decoder = decoder
        self.transport = transport
        self.lagThreshold = lagThreshold
        self.lagWindow = lagWindow
    }
}

/// How a play session ended.
public enum PlaybackOutcome: Sendable, Hashable {
    /// The server ended the stream (`PLAY_EVT_PLAY_END`).
    case ended
    /// Stopped by the caller (cancellation, or the requested duration elapsed).
    case stopped
    /// Stopped by an error event (`PLAY_ERR_*`).
    case failed(PlayEventCode)

    /// `ended`, `stopped`, or the error's symbol.
    public var name: String {
        switch self {
        case .ended: "ended"
        case .stopped: "stopped"
        case .failed(let code): code.symbol
        }
    }
}

extension LivePlayConfiguration {
    /// Why ``loudness`` cannot be applied on this machine (libebur128 cannot be loaded: the sentence names its Debian
    /// package), or `nil`. Without it a playback plays its sound as it is, with a warning in the library's log.
    public static var loudnessUnavailableReason: String? {
        do {
            try LoudnessMeter.load()
            return nil
        } catch {
            return error.message
        }
    }
}
