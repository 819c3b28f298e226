public import LivePlayBuffering
public import LivePlayCore

/// Plays packets a caller demuxed or made itself, on the caller's clock: the play-out stage of ``LiveSession``
/// (jitter buffer and latency controller, decoders, presenter, and the same events) without a transport.
///
/// The latency-mode simulator runs its network traces through it, so its figures come from the code that
/// plays real streams. Not thread-safe: one task drives it, like the play loop drives its stages.
public final class PacketPlayback<C: Clock> where C.Duration == Duration {
    private let reporter: SessionReporter
    private let playOut: PlayOut
    private var ended = false

    /// - Parameters:
    ///   - clock: the session's time; events are stamped with how long since this playback was made.
    ///   - onEvent: every event, as it happens.
    public init(
        configuration: LivePlayConfiguration, clock: C, videoSink: (any VideoSink)? = nil,
        audioSink: (any AudioSink)? = nil, onEvent: @escaping (PlayEvent) -> Void
    ) {
        reporter = SessionReporter(time: SessionTime(clock))
        reporter.emit = onEvent
        playOut = PlayOut(
            configuration: configuration, presenter: Presenter(videoSink: videoSink, audioSink: audioSink),
            control: PlaybackControl(), reporter: reporter)
    }

    /// The jitter buffer and latency controller, as they stand.
    public var engine: PlaybackEngine { playOut.engine }

    /// What has been counted so far: stutters, catch-ups, frames shown.
    public var statistics: PlaybackStatistics { reporter.statistics }

    /// A packet arrived now.
    public func receive(_ packet: EncodedPacket) {
        playOut.take(.arrived(packet))
        playOut.take(.play(packet))
    }

    /// A new connection begins: what follows is its media (a stall under way was the connection's loss).
    public func beginConnection() {
        playOut.beginConnection()
    }

    /// No more packets will arrive: what is buffered is played out, then playback ends.
    public func endOfInput() {
        playOut.finish(.ended)
    }

    /// One turn of the play loop at the clock's now: the engine advances, due packets are decoded and due
    /// frames presented. Returns `true` once playback has ended (after ``endOfInput()``).
    public func advance() -> Bool {
        guard !ended else { return true }
        let now = reporter.time.elapsed
        ended = playOut.advance(at: now) != nil || playOut.endIfRanDry(at: now) != nil
        return ended
    }
}
