import DequeModule
import LivePlayCore
import LivePlayRecording

/// The play-loop half of a recording, a tap on the packets the session takes: decides where each file begins
/// and ends and what its timeline is, and hands the writing to ``RecordingOutput`` on a thread of its own
/// through a bounded queue, so a slow disk never holds up playback (docs/recording.md).
///
/// The rules: a file begins at a keyframe (sound alone: at its first packet) and its timestamps start at 0;
/// the session's timeline runs on across reconnects, so a reconnect is a gap in the file, not a jump. A new file
/// begins at the first keyframe after the codec configuration changes (codec, resolution, parameter sets), and,
/// with a segment duration, at the first keyframe that long after the file began.
final class Recorder: PacketTap {
    let options: RecordingOptions
    private let writer: SinkWriter<RecordingOutput>
    private let journal = RecordingJournal()
    private var video: VideoCodecConfiguration?
    private var audio: AudioCodecConfiguration?
    /// The open file: its index, where it began on the session's timeline, and the configurations it has.
    private var file: (index: Int, start: Int64, video: VideoCodecConfiguration?, audio: AudioCodecConfiguration?)?
    private var nextIndex = 0
    private var lastDTS: [MediaKind: Int64] = [:]
    private var progressAt: Duration?
    private var pending: [Report] = []
    /// No more packets are taken: stopped, or the writer failed.
    private(set) var isStopped = false
    /// Media on demand: the packets taken wait here, with the configurations they came under, until playback
    /// reaches them, so the recording holds what was played and not the read-ahead (up to 10 s of it). Live, a
    /// packet is recorded as it arrives.
    private var held: Deque<(packet: EncodedPacket, expectsVideo: Bool, video: VideoCodecConfiguration?,
        audio: AudioCodecConfiguration?)> = []
    private var holdsUntilPlayed = false

    init(options: RecordingOptions, video: VideoCodecConfiguration?, audio: AudioCodecConfiguration?) {
        self.options = options
        self.video = video
        self.audio = audio
        writer = SinkWriter(
            name: "liveplay-record", output: RecordingOutput(options: options, journal: journal),
            limits: options.queueLimits)
    }

    deinit {
        writer.stopTaking()
    }

    func configure(video: VideoCodecConfiguration) { self.video = video }
    func configure(audio: AudioCodecConfiguration) { self.audio = audio }

    /// From now on, packets are recorded as playback reaches them (``played(upTo:)``).
    func holdUntilPlayed() {
        holdsUntilPlayed = true
    }

    /// A packet the session took to play (on its timeline, after a reconnect's duplicates are dropped).
    func take(_ packet: EncodedPacket, expectsVideo: Bool) {
        guard !isStopped else { return }
        guard !holdsUntilPlayed else {
            held.append((packet, expectsVideo, video, audio))
            return
        }
        record(packet, expectsVideo: expectsVideo, video: video, audio: audio)
    }

    /// Playback has reached `position` (nil: the end of everything taken): the held packets up to it are recorded.
    func played(upTo position: MediaTimestamp?) {
        while let first = held.first, position.map({ first.packet.dts <= $0 }) ?? true {
            held.removeFirst()
            guard !isStopped else { continue }
            record(first.packet, expectsVideo: first.expectsVideo, video: first.video, audio: first.audio)
        }
    }

    /// The held packets were read ahead and will not be played (a seek reads elsewhere).
    func dropUnplayed() {
        held.removeAll()
    }

    private func record(
        _ packet: EncodedPacket, expectsVideo: Bool, video: VideoCodecConfiguration?, audio: AudioCodecConfiguration?
    ) {
        let hasVideo = video != nil || expectsVideo
        let begins = packet.kind == .video ? packet.isKeyframe && video != nil : !hasVideo
        if let open = file, begins {
            let changed = open.video != video || open.audio != audio
            let long = options.segmentDuration.map { packet.dts.milliseconds - open.start >= $0.milliseconds } ?? false
            if changed || long {
                submit(.close)
                file = nil
            }
        }
        if file == nil {
            guard begins else { return }
            file = (nextIndex, packet.dts.milliseconds, video, audio)
            lastDTS.removeAll()
            submit(.open(path: options.path(ofFile: nextIndex), video: video, audio: audio))
            nextIndex += 1
        }
        guard let open = file, packet.kind == .audio ? open.audio != nil : open.video != nil else { return }
        let dts = packet.dts.milliseconds - open.start
        // Sound from before the file's first keyframe, or a timestamp that went back, is not written.
        guard dts >= 0, dts >= lastDTS[packet.kind] ?? 0 else { return }
        lastDTS[packet.kind] = dts
        submit(.packet(packet, dts: dts, pts: packet.pts.milliseconds - open.start), bytes: packet.payload.count)
    }

    /// A recording takes packets, not reads.
    func readTaken(at: Duration, bytes: Int, connection: Int, turn: Int) {}

    /// Stops recording: the open file is finished on the writer thread and reported complete.
    func stop() {
        guard !isStopped else { return }
        isStopped = true
        writer.stopTaking()
    }

    /// What to report on this turn: files begun, completed or failed, and the progress that is due.
    func reports(at now: Duration) -> [Report] {
        var reports = pending
        pending.removeAll()
        for event in journal.takeEvents() {
            reports.append(Reports.recording(event))
            if case .failed = event { isStopped = true }
        }
        if file != nil, !isStopped {
            if let at = progressAt, now - at >= options.progressInterval {
                let (milliseconds, bytes) = journal.progress
                reports.append(Reports.recordingProgress(path: options.path(ofFile: nextIndex - 1), milliseconds, bytes))
                progressAt = now
            } else if progressAt == nil {
                progressAt = now
            }
        }
        return reports
    }

    /// Whether every file is closed and reported (after ``stop()``).
    var isFinished: Bool { writer.isFinished }

    var isDone: Bool { isStopped && isFinished }

    /// At the session's end: stops, waits for the writer to close the file (up to 10 s), and says what happened.
    /// Packets still held were never played: they are not recorded.
    func finish(at now: Duration) -> [Report] {
        dropUnplayed()
        stop()
        _ = writer.finish(timeout: .seconds(10))
        return reports(at: now)
    }

    private func submit(_ item: RecordingItem, bytes: Int = 64) {
        switch writer.submit(item, bytes: bytes) {
        case .accepted: return
        case .dropped:
            pending.append(
                Reports.recordingFailed(
                    path: options.path(ofFile: nextIndex - 1),
                    RecordingError(.queueOverflow, "the disk fell behind: \(options.queueLimits.bytes >> 20) MiB waited")))
            stop()
        case .stopped:
            isStopped = true
        }
    }
}
