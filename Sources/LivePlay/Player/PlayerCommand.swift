public import LivePlayManifest
public import LivePlayBuffering
public import LivePlayCore
public import LivePlayDecode
public import LivePlayFLV

/// One thing a front end asks of a playback: what ``LivePlayer/send(_:)`` (and a session's
/// ``PlaybackControl/send(_:)``) take. The relative ones (`togglePause`, `changeVolume(by:)`, `toggleMute`,
/// `rotateClockwise`) are carried out against what the player holds when they arrive, so a front end keeps no copy
/// of the state to compute them from: two quick presses of a key act twice.
public enum PlayerCommand: Sendable, Hashable {
    /// Holds the picture (TXLivePlayer's `pause`, `LIVEPLAY_EVT_PAUSED`, 9007); the stream keeps arriving within the
    /// buffer's limits.
    case pause
    /// Resumes (`LIVEPLAY_EVT_RESUMED`, 9008): a live stream at its newest media, as TXLivePlayer does; media on
    /// demand where it paused.
    case resume
    /// Pauses when playing, resumes when paused.
    case togglePause
    /// Moves media on demand to a position from its start (TXLivePlayer's `seek`), or a time-shifted live stream to a
    /// position from the start of its window: the picture there is shown, decoded from the keyframe at or before it
    /// (`LIVEPLAY_EVT_SEEK_START`, 9009). A live stream without time-shift ignores it.
    case seek(to: Duration)
    /// Moves by an offset (negative: back) from where playback is, or from the target of a seek still under way:
    /// two quick seeks by −10 s go 20 s back, in a file and in a time-shift window alike, as mpv's relative seeks do.
    case seekBy(Duration)
    /// A live stream to its live edge now: the buffer is dropped to its newest keyframe (`LIVEPLAY_EVT_CATCH_UP_SKIP`,
    /// 9003); a time-shifted one back to the live edge (TXLivePlayer's `resumeLive`).
    case goToLiveEdge
    /// New latency parameters (a mode's preset, or `cacheTime` and the rest), at once (`LIVEPLAY_EVT_LATENCY_CHANGED`,
    /// 9004).
    case latency(LatencyParameters)
    /// Another track of a multitrack stream (nil: the default, the lowest id): video from that track's next keyframe,
    /// sound from its next packet, with no reconnect (`LIVEPLAY_EVT_TRACKS_CHANGED`, 9016).
    case selectTrack(MediaKind, UInt8?)
    /// Records what arrives, as it arrived (TXLivePlayer's `startRecord`; a recording running is finished first):
    /// `LIVEPLAY_EVT_RECORD_BEGIN` / `_PROGRESS` / `_COMPLETE` (9013–9015), `LIVEPLAY_WARNING_RECORD_FAILED` (9102).
    case startRecording(RecordingOptions)
    /// Finishes the recording (TXLivePlayer's `stopRecord`): its file is closed and reported complete.
    case stopRecording
    /// TXLivePlayer's `setVolume`: 0…100 (clamped), applied with a 10 ms ramp.
    case volume(Int)
    /// The volume up or down by an amount, within 0…100.
    case changeVolume(by: Int)
    /// TXLivePlayer's `setMute`: silence, keeping the volume for when it is unmuted.
    case mute(Bool)
    case toggleMute
    /// TXLivePlayer's `enableAudioVolumeEvaluation`: every interval (at least 100 ms; nil stops it), the level of the
    /// sound played as `LIVEPLAY_EVT_AUDIO_VOLUME` (9011).
    case volumeEvaluation(Duration?)
    /// TXLivePlayer's `setRenderMode` / `setRenderRotation`: carried to the video sink in every ``FrameTiming``.
    case renderMode(RenderMode)
    case rotation(RenderRotation)
    /// The rotation a quarter turn further.
    case rotateClockwise
    /// Decodes video on a device, or in software (TXLivePlayer's `enableHWAcceleration`, ``HardwareDecoding``): from
    /// the next keyframe, with no reconnect and no gap; where the device cannot, software goes on (2106, 2108).
    case hardwareDecoding(HardwareDecoding)
}

/// What a playback is, as its play loop last made it known: typed, for a front end to render (a control bar's button
/// and slider, the tracks to step through, the seek bar) rather than to keep copies of what it asked for or to parse
/// events. Delivered to ``LivePlayListener/onStateChange(_:)`` (and ``LivePlayer/updates()``) when it changes, and
/// kept as ``LivePlayer/playbackState``; the ``timeline`` moves once a second, with the net status.
public struct PlaybackState: Sendable, Hashable {
    /// What playback is doing, as the net status's `state` says it (``NetStatus/state``).
    public enum Phase: String, Sendable, Hashable {
        /// Connecting, or connecting again after the connection was lost (then ``startup`` is known).
        case connecting
        /// Connected, filling the buffer before playing, or again after a stall.
        case loading
        /// Presenting: pictures are shown (or, for a stream without video, sound is heard).
        case playing
        case paused
    }

    /// Where playback is, for a seek bar: seconds.
    public enum Timeline: Sendable, Hashable {
        /// A live stream, played at its latency mode's target behind the live edge.
        case live
        /// Media on demand: the position from its start, and its length when known.
        case onDemand(position: Double, duration: Double?)
        /// A time-shifted live stream: the position from the window's start, the window's length, and whether
        /// playback follows the live edge (rather than playing behind it).
        case timeShift(position: Double, length: Double, atLiveEdge: Bool)
    }

    public var phase = Phase.connecting
    public var paused = false
    /// 0…100.
    public var volume = 100
    public var muted = false
    public var renderMode = RenderMode.fillEdge
    public var rotation = RenderRotation.rotation0
    /// A multitrack stream's tracks, the ones playing marked (``FLVTrack/isActive``); empty for one of a track each.
    public var tracks: [FLVTrack] = []
    public var timeline = Timeline.live
    /// The session's startup milestones, once its first picture (or sound) was presented: what the first
    /// `PLAY_EVT_PLAY_BEGIN` tells as `startup_*_ms`.
    public var startup: StartupTimeline?
    /// The reconnects of this playback so far, by what broke the connection (`PLAY_WARNING_RECONNECT`'s `reason`):
    /// counts that only grow, so a front end that sees two states knows how many came between them.
    public var reconnects: [TransportErrorCode: Int] = [:]
    /// The LAS manifest this playback was started from, and the id of the rendition it plays (``LASManifest``).
    public var manifest: LASManifest?
    public var rendition: Int?
    /// Adaptation chooses the rendition (``LivePlayer/RenditionChoice/auto``), not the viewer.
    public var adaptsRendition = false

    public init() {}

    /// What the viewer's next choice of rendition is (a window's key, a quality button): after adaptation, the lowest
    /// rendition not `hidden`, then each one up by bitrate, then adaptation again; nil without a manifest.
    public var nextRendition: LivePlayer.RenditionChoice? {
        guard let manifest else { return nil }
        let shown = manifest.renditions.filter { !$0.hidden }.sorted { $0.maxBitrate < $1.maxBitrate }
        guard !adaptsRendition, let playing = shown.firstIndex(where: { $0.id == rendition }) else {
            return shown.first.map { .rendition($0.id) } ?? .auto
        }
        return playing + 1 < shown.count ? .rendition(shown[playing + 1].id) : .auto
    }

    /// The rendition playing, as a quality button says it: `AUTO 240P` while adaptation chooses, `720P` (or the
    /// rendition's bitrate when the manifest gives no height) when the viewer chose; nil without a manifest.
    public var renditionLabel: String? {
        guard let manifest else { return nil }
        let playing = manifest.renditions.first { $0.id == rendition }
        let name = playing.map { $0.height.map { "\($0)P" } ?? "\($0.maxBitrate)K" } ?? "?"
        return adaptsRendition ? "AUTO \(name)" : name
    }

    /// The track of `kind` after the one playing, round the list; nil when there is no other.
    public func nextTrack(_ kind: MediaKind) -> UInt8? {
        let ids = tracks.filter { $0.kind == kind }.map(\.id)
        guard ids.count > 1 else { return nil }
        let playing = tracks.first { $0.kind == kind && $0.isActive }.flatMap { ids.firstIndex(of: $0.id) } ?? -1
        return ids[(playing + 1) % ids.count]
    }
}
