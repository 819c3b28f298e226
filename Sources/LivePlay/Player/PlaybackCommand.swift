public import LivePlayBuffering
import LivePlayCore
import LivePlayDecode
import LivePlayTransport

/// What the play loop makes known about its session as of its last turn, for its owner: the one state another
/// thread reads of a playing session.
struct PublishedPlayback: Sendable {
    /// The newest media received (the live edge, decode time).
    var liveEdge: MediaTimestamp?
    /// While preloading: what the buffer holds in bytes, its keyframes' presentation times and the poster's.
    var standbyBytes = 0
    var standbyKeyframes: [MediaTimestamp] = []
    var posterPTS: MediaTimestamp?
    /// The last picture shown.
    var lastPicture: VideoFrame?
    /// The presentation times of the newest keyframes received, oldest first (``JitterBuffer/recentKeyframes``).
    var recentKeyframes: [MediaTimestamp] = []
    /// The first keyframe received more than ``keyframeLead`` ahead of the last picture shown: where a LAS rendition
    /// switch asks the other rendition to start (`startPts`), and the soonest it can cut.
    var nextKeyframe: MediaTimestamp? {
        lastPicture.flatMap { shown in recentKeyframes.first { $0 > shown.pts + Self.keyframeLead } }
    }
    /// How far ahead of the picture shown a keyframe must be for a switch to cut there: the cut is set before the
    /// playback passes it.
    static let keyframeLead = Duration.milliseconds(100)
    /// Playback waits for media after it began (a stall), and the media buffered ahead of what plays: a rendition
    /// switch waiting for a cut the stream playing will not reach in time goes ahead.
    var stalled = false
    var buffered = Duration.zero

    /// The stream playing runs dry before `cut`: it stalled, or what it holds ends before the cut and is about to be
    /// played out.
    func runsDry(before cut: MediaTimestamp) -> Bool {
        stalled || liveEdge.map { $0 < cut } == true && buffered < .milliseconds(150)
    }
    /// The session's time-shift ring while it keeps one: a front end's thumbnails of the window read its segments.
    var timeShiftRing: TimeShiftRing?
}

/// What a front end sets that lasts from one playback to the next: kept by a ``LivePlayer`` and given to each
/// playback it starts, and kept by the play-out stage as its control's commands change it.
struct PlaybackSettings: Sendable {
    /// 0…100.
    var volume = 100
    var muted = false
    /// How often the level of the sound played is reported; nil: never.
    var volumeEvaluation: Duration?
    var renderMode = RenderMode.fillEdge
    var rotation = RenderRotation.rotation0

    /// The gain the sound is played at.
    var gain: Float { muted ? 0 : Float(volume) / 100 }
}

extension PlaybackState {
    /// A playback's state before its loop has told anything: the player's settings, playing, live.
    init(_ settings: PlaybackSettings) {
        self.init()
        present(settings)
    }

    /// The settings a front end sees.
    mutating func present(_ settings: PlaybackSettings) {
        volume = settings.volume
        muted = settings.muted
        renderMode = settings.renderMode
        rotation = settings.rotation
    }
}

/// What a session's mailbox carries: a front end's command, or what a player and a preload pool tell a session of
/// theirs (its settings, its sinks, its standby, the switch to it).
enum PlaybackCommand: Sendable {
    case player(PlayerCommand)
    case videoSink(HeldSink<any VideoSink>)
    case audioSink(HeldSink<any AudioSink>)
    /// All of a player's settings at once, as the player keeps them for its playbacks.
    case settings(PlaybackSettings)
    case standbyBudget(PreloadBudget?)
    case standbyStart(MediaTimestamp)
    case switched(SwitchRequest)
}

extension LatencyMode {
    /// The mode whose preset `parameters` are, or `nil` for a custom set.
    public init?(matching parameters: LatencyParameters) {
        guard let mode = Self.allCases.first(where: { LatencyParameters.preset($0) == parameters }) else { return nil }
        self = mode
    }
}

/// A player's switch to a session: when it was asked for, on the player's stopwatch, and whether the session was
/// preloaded.
struct SwitchRequest: Sendable {
    var at: Duration
    var time: Stopwatch
    var preloaded: Bool
    /// A switch between renditions of the same content (`switchStream`): reported as
    /// `PLAY_EVT_STREAM_SWITCH_SUCC` (2015).
    var rendition = false

    /// How long since the switch was asked for.
    var waited: Duration { time.elapsed() - at }
}
