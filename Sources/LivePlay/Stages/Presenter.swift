import LivePlayBuffering
import LivePlayCore
import LivePlayDecode
import LivePlayLoudness

/// What one call of the presenter did, for the play-out stage to pass on: the picture it showed, the sound it handed
/// over, and what went with them. The presenter keeps none of it after the call.
struct Presentation {
    var picture: VideoFrame?
    /// Stream time of the last block of sound handed to the sink.
    var playedAudio: MediaTimestamp?
    /// The loudest sample handed over (after the volume), 0…1, while the level is measured.
    var audioPeak: Float = 0
    /// A down-mix to stereo began, for this layout (its name and channel count).
    var downmixChange: (layout: String, channels: Int)?
    /// SEI messages that went out with pictures, with their pictures' times.
    var shownSEI: [(SEIMessage, MediaTimestamp)] = []
    /// Captions that left the screen (with a picture shown, a seek, or the end).
    var endedCaptions: [Caption] = []
}

/// The last stage of the play loop: decoded frames wait for their time on the playback clock, then go
/// to the sinks; audio is time-stretched to the playback rate so catch-up keeps its pitch. Each call returns
/// what it did (``Presentation``).
///
/// The clock is the engine's position. With an ``AudioSink`` that plays in real time, the position
/// follows what the sink has played (``audioClock()``) and audio is handed over as the sink drains;
/// otherwise audio is handed over when due, like video. Either way a picture and the sound of the same
/// instant leave within a tick of each other.
final class Presenter {
    /// Sound a real-time sink is kept fed ahead of what it plays.
    static let audioLead = Duration.milliseconds(120)
    /// Audio later than this behind the clock is dropped rather than played out of sync.
    static let audioTolerance = Duration.milliseconds(40)
    /// A picture this far behind the clock is stale (a decoder released it late, after an error): dropped
    /// and counted, never shown out of time. Far above a late tick, so only such pictures are.
    static let staleVideo = Duration.milliseconds(250)

    /// Replaceable while playing (``PlaybackControl``); a new sink starts with the next picture or sound.
    var videoSink: (any VideoSink)?
    var audioSink: (any AudioSink)?
    /// Gain for the sound, 0…1 (TXLivePlayer's `setVolume` / `setMute`); reached by a short ramp, never a
    /// step, so a change makes no click.
    var volume: Float = 1
    var gain: Float = 1
    var playedAudio = false
    var fadingIn = false
    var renderMode = RenderMode.fillEdge
    var rotation = RenderRotation.rotation0
    /// The stream said its sound is silent (an empty audio message, SequenceEnd) and no sound came since.
    private var silent = false
    /// What may be left unheard in a real-time sink when the clock is handed over to the wall clock in a silence.
    static let silenceHandOver = Duration.milliseconds(10)

    /// The stream's sound goes silent: what is queued plays out, then the sound no longer paces the picture.
    func silenceBegan() {
        silent = true
    }

    /// The down-mix for a sink that takes fewer channels than the stream has, for the layout it was made for.
    var downmix: StereoDownmix?
    /// Loudness normalisation (``LivePlayConfiguration/loudness``), before the time-stretch: it measures and scales
    /// the programme at its own rate.
    var loudness: LoudnessNormalizer?
    /// What the call under way did, returned at its end.
    var presentation = Presentation()
    /// What goes to the video sink with each picture: `colorInfo`, SEI messages, the caption on screen.
    private var attachments = PictureAttachments()
    /// The last picture shown (``LivePlayer/snapshot()``).
    private(set) var lastShown: VideoFrame?
    private var video = PresentationQueue<VideoFrame>(capacity: 16)
    var audio = PresentationQueue<AudioFrame>(capacity: 64)
    var stretcher: AudioTimeStretcher?
    /// The sound handed to the sink, for what a real-time one is playing (``audioClock()``).
    var handed = HandedSound()
    private(set) var framesShown = 0
    /// The poster's presentation time, until the playing decoder's copy of it has been skipped.
    private var posterPTS: MediaTimestamp?
    /// An exact seek's target, until the first picture after it is decoded: what comes before is decoded only
    /// for the pictures that follow (``startAt(_:)``).
    private var startTarget: MediaTimestamp?
    /// The newest picture decoded before ``startTarget``: the one on screen at the target, unless a picture
    /// falls exactly there.
    private var pictureBeforeStart: VideoFrame?

    init(videoSink: (any VideoSink)?, audioSink: (any AudioSink)?) {
        self.videoSink = videoSink
        self.audioSink = audioSink
    }

    /// Video frames dropped: late, or over the queue's bound.
    var droppedVideoFrames: Int { video.droppedFrames }
    var queuedVideoFrames: Int { video.count }
    var queuedAudioFrames: Int { audio.count }

    /// The sound's level is being evaluated (`enableAudioVolumeEvaluation`).
    var measuresLevel = false

    /// Forgets every frame waiting (a seek): what is decoded next starts a new stretch of the timeline.
    func reset() {
        video.removeAll()
        audio.removeAll()
        stretcher = nil
        handed.removeAll()
        posterPTS = nil
        startTarget = nil
        pictureBeforeStart = nil
        attachments.reset(lastShown: lastShown?.pts)
    }

    /// Playback starts at `target`, after the keyframe it was decoded from (an exact seek): the first picture
    /// shown is the one on screen at the target, and no sound before it is played.
    func startAt(_ target: MediaTimestamp) {
        startTarget = target
        pictureBeforeStart = nil
    }


    /// - Parameter isPoster: the first keyframe decoded on its own (``LiveSession``); the playing decoder's
    ///   copy of the same picture is then not shown a second time.
    func enqueue(_ frame: VideoFrame, isPoster: Bool = false) {
        if let target = startTarget {
            // Decoders give pictures in presentation order: the newest before the target waits for the next.
            guard frame.pts >= target else { return pictureBeforeStart = frame }
            if let before = pictureBeforeStart, frame.pts > target { video.insert(before, pts: before.pts) }
            startTarget = nil
            pictureBeforeStart = nil
        }
        if isPoster {
            posterPTS = frame.pts
        } else if frame.pts == posterPTS {
            posterPTS = nil
            return
        }
        video.insert(frame, pts: frame.pts)
    }

    /// Lets go at once of the queued pictures a newer due one supersedes at `position` (a burst decoded in one
    /// turn: the GOP cache at the start, a catch-up), so the decoder's buffers return to its pool instead of
    /// waiting in the queue to be skipped. Not before the first picture, which is shown whatever its time.
    func dropSupersededPictures(at position: MediaTimestamp) {
        guard framesShown > 0 else { return }
        video.dropSuperseded(at: position)
    }

    /// The sound this session plays first follows another stream's on the same sink (a switch): it ramps up from
    /// silence like a volume change.
    func fadesIn() {
        fadingIn = true
        if playedAudio { gain = 0 }
    }

    /// A preloaded stream's poster: its newest keyframe's picture, in place of the one before (nothing is
    /// presented while preloading; the first picture after the switch is this one).
    func replacePoster(_ frame: VideoFrame) {
        video.removeAll()
        enqueue(frame, isPoster: true)
    }

    /// Audio is converted and stretched only for a sink: with none, decoded audio goes no further (but for its
    /// level, when ``measuresLevel``: what would be played, at the volume set).
    func enqueue(_ frame: AudioFrame) {
        silent = false
        if let target = startTarget,
            frame.pts + (Duration.seconds(frame.sampleCount) / max(1, frame.sampleRate)).milliseconds <= target
        {
            return
        }
        guard audioSink != nil else {
            if measuresLevel {
                for sample in frame.interleavedFloat32() {
                    presentation.audioPeak = max(presentation.audioPeak, abs(sample) * volume)
                }
            }
            return
        }
        audio.insert(frame, pts: frame.pts)
    }

    /// Where the listener of a real-time audio sink is: the stream time of what it has not played yet, read back
    /// block by block at the rate each was stretched with (``HandedSound``). `nil` without such a sink.
    func audioClock() -> MediaTimestamp? {
        guard handed.end != nil, let unplayed = audioSink?.unplayedDuration else { return nil }
        // Enhanced RTMP's silence: once what was buffered has been heard, the picture runs on the wall clock
        // (the play loop's own) instead of waiting for sound, until sound comes back.
        if silent, audio.isEmpty, unplayed < Self.silenceHandOver { return nil }
        return handed.heard(unplayed: unplayed)
    }

    /// How long until the next picture or block of sound falls due at `position` (playing at `rate`), or until a
    /// real-time sink needs more sound; `nil` when nothing waits. The play loop sleeps until then.
    func timeToNextDue(at position: MediaTimestamp, rate: Double) -> Duration? {
        let ahead = { (pts: MediaTimestamp) -> Duration? in pts > position ? (pts - position) / max(rate, 0.01) : nil }
        var next = video.nextPTS.flatMap(ahead)
        if let sink = audioSink, !audio.isEmpty {
            let sound: Duration?
            if let unplayed = sink.unplayedDuration {
                // Topped up while half the lead is left, so the sink never runs dry between two turns.
                sound = max(.zero, unplayed - Self.audioLead / 2)
            } else {
                sound = audio.nextPTS.flatMap { ahead($0 - (stretcher?.latency ?? .zero)) }
            }
            if let sound { next = min(next ?? sound, sound) }
        }
        return next
    }

    /// Shows the first picture as soon as it is decoded, before playback begins (a poster, not a start).
    func showFirstPicture(at position: MediaTimestamp) -> Presentation {
        if framesShown == 0, let next = video.removeFirst() {
            presentation.picture = show(next.frame, pts: next.pts, position: position, rate: 1, droppedBefore: 0)
        }
        return finish()
    }

    /// Presents what is due at `position`: the newest due picture, and every due block of sound.
    func present(at position: MediaTimestamp, rate: Double) -> Presentation {
        presentAudio(at: position, rate: rate)
        if let due = video.nextDue(at: position, lateBy: Self.staleVideo) {
            presentation.picture = show(due.frame, pts: due.pts, position: position, rate: rate, droppedBefore: due.skipped)
        }
        return finish()
    }

    /// What this call did, with what went out with its pictures; the next call starts afresh.
    private func finish() -> Presentation {
        presentation.shownSEI = attachments.takeShownSEI()
        presentation.endedCaptions = attachments.takeEndedCaptions()
        defer { presentation = Presentation() }
        return presentation
    }

    private func show(
        _ frame: VideoFrame, pts: MediaTimestamp, position: MediaTimestamp, rate: Double, droppedBefore: Int
    ) -> VideoFrame {
        framesShown += 1
        lastShown = frame
        var timing = FrameTiming(
            pts: pts, position: position, rate: rate, droppedBefore: droppedBefore, renderMode: renderMode,
            rotation: rotation)
        attachments.attach(to: &timing)
        videoSink?.present(frame, timing: timing)
        return frame
    }

    /// SEI messages for the picture stamped `pts` (``PictureAttachments``).
    func seiArrived(_ messages: [SEIMessage], pts: MediaTimestamp) {
        attachments.seiArrived(messages, pts: pts)
    }

    /// A caption channel's screen changes from the picture at `change.at` on.
    func captionChanged(_ change: CaptionScreen) {
        attachments.captionChanged(change)
    }

    /// The stream's `colorInfo` for the pictures from `from` on.
    func colorChanged(to info: VideoColorInfo?, from: MediaTimestamp) {
        attachments.colorChanged(to: info, from: from)
    }

    /// No picture follows the last one shown (the end of the stream, a stop): the caption on screen ends with it.
    func picturesEnded() -> Presentation {
        attachments.reset(lastShown: lastShown?.pts)
        return finish()
    }
}
