import LivePlayCore

/// Decides when `PLAY_EVT_PLAY_BEGIN` may be told: playback has begun only once something was presented — a
/// picture, or sound for a stream that carries no video. The engine may be ready to play a stream that cannot be
/// shown (video without its sequence header, a decoder that gives nothing); then the begin is held, the net
/// status says why, and after a second a warning names the cause once. A value that decides; ``PlayOut`` acts.
struct BeginGate {
    /// What to do this turn.
    enum Step: Equatable {
        case none
        /// Tell the first begin now, with what was buffered when the engine began.
        case begin(buffered: Duration)
        /// Nothing has been presented for ``warnAfter``: say why, once.
        case warn(video: Bool)
    }

    /// How long the engine may play with nothing presented before that is told: a first picture normally follows
    /// its begin within the same turn.
    static var warnAfter: Duration { .seconds(1) }

    /// The engine began, but nothing was presented yet: since when, and what was buffered.
    private var held: (buffered: Duration, since: Duration)?
    private var warned = false
    /// A video packet arrived on this connection.
    private(set) var receivedVideo = false
    /// Sound was decoded on this connection.
    private var decodedSound = false

    /// A new connection: what it carries is learned again.
    mutating func connectionBegan() {
        receivedVideo = false
        decodedSound = false
        warned = false
    }

    /// Playback starts over (a seek): no begin is pending.
    mutating func restart() {
        held = nil
    }

    mutating func received(_ kind: MediaKind) {
        if kind == .video { receivedVideo = true }
    }

    mutating func soundDecoded() {
        decodedSound = true
    }

    /// Whether the first begin may be told now. In probe mode nothing is decoded: media received is enough.
    /// - Parameter framesShown: pictures handed to the video sink so far.
    func allows(decodes: Bool, framesShown: Int) -> Bool {
        !decodes || framesShown > 0 || !receivedVideo && decodedSound
    }

    /// The engine began at `now` with nothing presented: the begin waits.
    mutating func hold(buffered: Duration, at now: Duration) {
        held = (buffered, now)
    }

    /// Why a stream the engine plays is not playing yet (``NetStatus/reason``), while the begin is held.
    var reason: String? {
        guard held != nil else { return nil }
        return receivedVideo ? "no_decodable_video" : "no_decodable_audio"
    }

    /// What to do at the end of a turn: tell a held begin once something was presented, or warn once it has
    /// waited ``warnAfter``. A held begin is dropped when the engine stopped playing (it will begin again).
    mutating func step(at now: Duration, enginePlaying: Bool, decodes: Bool, framesShown: Int) -> Step {
        guard let pending = held else { return .none }
        guard enginePlaying else {
            held = nil
            return .none
        }
        if allows(decodes: decodes, framesShown: framesShown) {
            held = nil
            return .begin(buffered: pending.buffered)
        }
        guard !warned, now - pending.since >= Self.warnAfter else { return .none }
        warned = true
        return .warn(video: receivedVideo)
    }
}
