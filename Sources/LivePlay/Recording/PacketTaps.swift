import LivePlayCore

/// Something that sees what a session takes, in order, on its play loop: the packets it plays (after a
/// reconnect's duplicates are dropped, payloads intact even in probe mode), the codec configurations, and the end of
/// each read of the transport. A tap never changes playback; what it has to say comes back as reports on each turn.
protocol PacketTap: AnyObject {
    func configure(video: VideoCodecConfiguration)
    func configure(audio: AudioCodecConfiguration)
    func take(_ packet: EncodedPacket, expectsVideo: Bool)
    /// The read of `bytes` media bytes taken at `at`, on connection `connection` (from 1), in the play loop's turn
    /// `turn` (from 1), has been taken.
    func readTaken(at: Duration, bytes: Int, connection: Int, turn: Int)
    /// What to report on this turn.
    func reports(at now: Duration) -> [Report]
    /// The session ends: what the tap still has to do is done (a file closed), and said.
    func finish(at now: Duration) -> [Report]
    /// Nothing more will come of it: it may be let go.
    var isDone: Bool { get }
}

/// A session's taps: the list its loop calls, and nothing else. Recordings join it as the control starts them (a
/// ``Recorder`` from its start until its file is closed); an ``ArrivalTap`` the session was given is on it from the
/// start.
final class PacketTaps {
    private var taps: [any PacketTap] = []
    /// The recording that takes packets now, unless stopped; earlier ones may still be finishing their files.
    private var recording: Recorder?
    /// Media on demand: recordings take packets as playback reaches them (``played(upTo:)``).
    private var holdsUntilPlayed = false

    init(arrivalTap: (any ArrivalTap)?) {
        if let arrivalTap { taps.append(ArrivalReads(arrivalTap)) }
    }

    func configure(video: VideoCodecConfiguration) {
        for tap in taps { tap.configure(video: video) }
    }

    func configure(audio: AudioCodecConfiguration) {
        for tap in taps { tap.configure(audio: audio) }
    }

    func take(_ packet: EncodedPacket, expectsVideo: Bool) {
        for tap in taps { tap.take(packet, expectsVideo: expectsVideo) }
    }

    func readTaken(at: Duration, bytes: Int, connection: Int, turn: Int) {
        for tap in taps { tap.readTaken(at: at, bytes: bytes, connection: connection, turn: turn) }
    }

    /// Starts a recording as the control asked (nil: stops it): a new one stops the one before, which finishes its
    /// file.
    func record(_ options: RecordingOptions?, video: VideoCodecConfiguration?, audio: AudioCodecConfiguration?) {
        recording?.stop()
        guard let options else { return }
        let recorder = Recorder(options: options, video: video, audio: audio)
        if holdsUntilPlayed { recorder.holdUntilPlayed() }
        recording = recorder
        taps.append(recorder)
    }

    /// The source is media on demand, read ahead of playback: a recording holds what was played, so its packets
    /// wait until playback reaches them.
    func holdUntilPlayed() {
        holdsUntilPlayed = true
        recording?.holdUntilPlayed()
    }

    /// Playback has reached `position` (nil: everything taken was played, the media's end).
    func played(upTo position: MediaTimestamp?) {
        recording?.played(upTo: position)
    }

    /// The source is read again from elsewhere (a seek): what was read ahead and not played is not recorded.
    func readAgain() {
        recording?.dropUnplayed()
    }

    /// What the taps report on this turn; those that are done are let go.
    func reports(at now: Duration) -> [Report] {
        guard !taps.isEmpty else { return [] }
        let reports = taps.flatMap { $0.reports(at: now) }
        taps.removeAll { $0.isDone && $0 !== recording }
        return reports
    }

    func finish(at now: Duration) -> [Report] {
        defer {
            taps.removeAll()
            recording = nil
        }
        return taps.flatMap { $0.finish(at: now) }
    }
}

/// An ``ArrivalTap`` as a session's tap: the packets of each read, handed over as one ``ArrivalRead`` when the read
/// has been taken.
private final class ArrivalReads: PacketTap {
    private let tap: any ArrivalTap
    private var packets: [ArrivalRead.Packet] = []

    init(_ tap: any ArrivalTap) {
        self.tap = tap
    }

    func take(_ packet: EncodedPacket, expectsVideo: Bool) {
        packets.append(ArrivalRead.Packet(packet))
    }

    func readTaken(at: Duration, bytes: Int, connection: Int, turn: Int) {
        tap.arrived(
            ArrivalRead(milliseconds: at.milliseconds, bytes: bytes, packets: packets, connection: connection, turn: turn))
        packets.removeAll(keepingCapacity: true)
    }

    // An arrival trace records packets and reads only; it has nothing to report, and its file is the caller's.
    func configure(video: VideoCodecConfiguration) {}
    func configure(audio: AudioCodecConfiguration) {}
    func reports(at now: Duration) -> [Report] { [] }
    func finish(at now: Duration) -> [Report] { [] }
    var isDone: Bool { false }
}
