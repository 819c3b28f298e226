public import LivePlayCore
public import LivePlayDecode

/// Where decoded pictures go: a window, an encoder, a file, a test.
///
/// Called on the play loop (the session's thread, named `liveplay-play`) at each frame's presentation time,
/// so an implementation returns quickly (hand the frame to another thread if showing it is slow). The frame
/// shares libavcodec's buffers: no pixel is copied unless the sink asks for bytes.
public protocol VideoSink: AnyObject {
    func present(_ frame: VideoFrame, timing: FrameTiming)
}

/// Where decoded sound goes, as interleaved 32-bit float PCM already time-stretched to the playback rate.
public protocol AudioSink: AnyObject {
    func play(_ audio: AudioSamples)

    /// For a sink that plays in real time (a sound device): how much audio it holds that has not been
    /// heard yet. The player then follows the audio clock (audio is the master; video is shown against
    /// what is heard) and keeps the sink fed a little ahead. `nil`: the sink does not play in real time
    /// (a file, a pipe), so the player's monotonic clock is the master and audio is handed over on time.
    var unplayedDuration: Duration? { get }

    /// The sound stops here (the player switched to another stream): a sink still holding sound not yet heard
    /// lets it go, fading out over a few milliseconds so the cut does not click. Nothing by default.
    func fadeOutUnplayed()

    /// The most channels the sink takes: more are down-mixed to stereo (``StereoDownmix``) before it gets them.
    /// `nil` (the default): the stream's channels, however many.
    var maximumChannels: Int? { get }
}

extension AudioSink {
    public func fadeOutUnplayed() {}
    public var maximumChannels: Int? { nil }
}

/// When and how a frame was presented.
public struct FrameTiming: Sendable, Hashable {
    /// The frame's presentation timestamp (stream time, after reconnect stitching).
    public var pts: MediaTimestamp
    /// The playback position when it was presented: `position - pts` is how late it is.
    public var position: MediaTimestamp
    /// The playback rate at that moment.
    public var rate: Double
    /// Late frames dropped just before this one (a slow tick or decode).
    public var droppedBefore: Int
    /// How the player is asked to render now (TXLivePlayer's `setRenderMode` / `setRenderRotation`), for a
    /// sink that draws: the player itself never scales or rotates the frame.
    public var renderMode: RenderMode
    public var rotation: RenderRotation
    /// The stream's `colorInfo` (Enhanced RTMP) in effect for this picture, when it sent one.
    public var colorInfo: VideoColorInfo?
    /// The SEI messages of ``LivePlayConfiguration/seiPayloadTypes`` this picture carried (and those of pictures
    /// before it that were never shown).
    public var seiMessages: [SEIMessage] = []
    /// The caption on screen with this picture (``LivePlayConfiguration/captionChannel``), lines separated by
    /// `\n`; `nil` when none shows. A sink that draws shows it when its viewer asked for captions.
    public var caption: String?

    public init(
        pts: MediaTimestamp, position: MediaTimestamp, rate: Double, droppedBefore: Int,
        renderMode: RenderMode = .fillEdge, rotation: RenderRotation = .rotation0
    ) {
        self.pts = pts
        self.position = position
        self.rate = rate
        self.droppedBefore = droppedBefore
        self.renderMode = renderMode
        self.rotation = rotation
    }
}

/// A block of sound for an ``AudioSink``.
public struct AudioSamples: Sendable {
    /// Stream time of the first sample.
    public var pts: MediaTimestamp
    public var sampleRate: Int
    public var channels: Int
    /// Interleaved 32-bit float samples.
    public var samples: [Float]
    /// The playback rate these samples were stretched for (1.2: the media they carry lasted 1.2× longer).
    public var rate: Double

    public init(pts: MediaTimestamp, sampleRate: Int, channels: Int, samples: [Float], rate: Double) {
        self.pts = pts
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
        self.rate = rate
    }

    /// How long the samples play.
    public var duration: Duration {
        guard sampleRate > 0, channels > 0 else { return .zero }
        return .seconds(samples.count / channels) / sampleRate
    }
}

/// A sink as a player holds it on its way to a playback's play loop (set on one thread, called on another).
///
/// `@unchecked Sendable`: a sink is called only on the play loop of the one playback it is given to (the contract
/// above); the player and its control only keep it and hand it on, never call it.
struct HeldSink<Sink>: @unchecked Sendable {
    let sink: Sink?

    init(_ sink: Sink?) {
        self.sink = sink
    }
}
