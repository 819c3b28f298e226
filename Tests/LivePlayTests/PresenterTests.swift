@testable import LivePlay
import LivePlayCore
import LivePlayTesting
import Testing

/// The presentation stage on real decoded frames, with a position the test moves: no clock, no sleeping.
@Suite struct PresenterTests {
    final class RecordingVideoSink: VideoSink {
        var shown: [FrameTiming] = []
        func present(_ frame: VideoFrame, timing: FrameTiming) { shown.append(timing) }
    }

    /// A sink that records blocks; as a real-time device it plays `speed` seconds of sound per second.
    final class RecordingAudioSink: AudioSink {
        var blocks: [(audio: AudioSamples, position: MediaTimestamp)] = []
        var position = MediaTimestamp.zero
        let realTime: Bool
        let speed: Double
        var handed = Duration.zero
        var played = Duration.zero

        init(realTime: Bool = false, speed: Double = 1) {
            self.realTime = realTime
            self.speed = speed
        }

        func play(_ audio: AudioSamples) {
            blocks.append((audio, position))
            handed += audio.duration
        }

        var unplayedDuration: Duration? { realTime ? max(.zero, handed - played) : nil }

        func advance(by wall: Duration) { played = min(handed, played + wall * speed) }
    }

    static func decoded() throws -> (video: [VideoFrame], audio: [AudioFrame]) {
        let reader = try MediaReader(path: try Fixture.h264AAC.path(), options: .init(decodes: true))
        var video: [VideoFrame] = []
        var audio: [AudioFrame] = []
        while let event = try reader.next() {
            if case .videoFrame(let frame) = event { video.append(frame) }
            if case .audioFrame(let frame) = event { audio.append(frame) }
        }
        return (video, audio)
    }

    /// Enqueues the frames within the engine's 150 ms look-ahead of `position`, as decoding would.
    static func decodeAhead(
        of position: MediaTimestamp, into presenter: Presenter, _ video: inout ArraySlice<VideoFrame>,
        _ audio: inout ArraySlice<AudioFrame>
    ) {
        while let next = video.first, next.pts.milliseconds <= position.milliseconds + 150 {
            presenter.enqueue(next)
            video = video.dropFirst()
        }
        while let next = audio.first, next.pts.milliseconds <= position.milliseconds + 150 {
            presenter.enqueue(next)
            audio = audio.dropFirst()
        }
    }

    /// Moves the position `step × rate` per 10 ms tick, decoding (enqueueing) 150 ms ahead as the engine does.
    static func run(
        _ presenter: Presenter, _ frames: (video: [VideoFrame], audio: [AudioFrame]), rate: Double,
        audioSink: RecordingAudioSink
    ) {
        var video = frames.video[...]
        var audio = frames.audio[...]
        var position = 0.0
        let end = Double(frames.video.last!.pts.milliseconds) + 100
        while position <= end {
            let now = MediaTimestamp(milliseconds: Int64(position))
            decodeAhead(of: now, into: presenter, &video, &audio)
            audioSink.position = now
            _ = presenter.present(at: now, rate: rate)
            position += 10 * rate
        }
    }

    @Test(arguments: [1.0, 1.2])
    func pictureAndSoundLeaveWithinATickOfTheirTime(rate: Double) throws {
        let frames = try Self.decoded()
        let videoSink = RecordingVideoSink()
        let audioSink = RecordingAudioSink()
        let presenter = Presenter(videoSink: videoSink, audioSink: audioSink)
        Self.run(presenter, frames, rate: rate, audioSink: audioSink)

        #expect(videoSink.shown.count == frames.video.count, "every picture shown")
        #expect(presenter.droppedVideoFrames == 0)
        let tick = Int64(10 * rate) + 1
        for timing in videoSink.shown {
            #expect((0...tick).contains(timing.position.milliseconds - timing.pts.milliseconds), "\(timing)")
            #expect(timing.rate == rate)
        }
        // Sound: each block leaves when its time comes, so it is within ±40 ms of the picture of that instant.
        #expect(!audioSink.blocks.isEmpty)
        for (block, position) in audioSink.blocks {
            #expect(abs(position.milliseconds - block.pts.milliseconds) <= 40, "audio at \(block.pts), clock \(position)")
            #expect(block.rate == rate)
        }
        // Time-stretched, not resampled: the same sample rate, 1 / rate as many samples.
        let input = frames.audio.reduce(0) { $0 + $1.sampleCount }
        let output = audioSink.blocks.reduce(0) { $0 + $1.audio.samples.count / $1.audio.channels }
        #expect(audioSink.blocks.allSatisfy { $0.audio.sampleRate == frames.audio[0].sampleRate })
        let expected = Double(input) / rate
        #expect(abs(Double(output) - expected) < 0.03 * expected, "\(output) samples out of \(input) at \(rate)×")
    }

    @Test func aRealTimeAudioSinkIsTheMasterClock() throws {
        let frames = try Self.decoded()
        let videoSink = RecordingVideoSink()
        // The device plays 3 % slow: pictures must follow what is heard, not the wall clock.
        let audioSink = RecordingAudioSink(realTime: true, speed: 0.97)
        let presenter = Presenter(videoSink: videoSink, audioSink: audioSink)
        var video = frames.video[...]
        var audio = frames.audio[...]
        var fallback = MediaTimestamp.zero
        var wall = Duration.zero
        var offsets: [Int64] = []
        while wall < .milliseconds(2500) {
            let position = presenter.audioClock() ?? fallback
            Self.decodeAhead(of: position, into: presenter, &video, &audio)
            let before = videoSink.shown.count
            _ = presenter.present(at: position, rate: 1)
            if videoSink.shown.count > before, let heard = presenter.audioClock() {
                offsets.append(videoSink.shown.last!.pts.milliseconds - heard.milliseconds)
            }
            wall += .milliseconds(10)
            audioSink.advance(by: .milliseconds(10))
            fallback = MediaTimestamp(milliseconds: wall.milliseconds)
        }
        let heard = try #require(presenter.audioClock())
        // 2.5 s of wall time at 0.97: about 2425 ms of media heard, not 2500.
        #expect(abs(heard.milliseconds - 2425) <= 60, "audio clock at \(heard)")
        #expect(offsets.count > 40)
        #expect(offsets.allSatisfy { abs($0) <= 40 }, "picture vs sound: \(offsets.filter { abs($0) > 40 })")
        #expect(audioSink.unplayedDuration! <= Presenter.audioLead + .milliseconds(30), "fed a little ahead, no more")
    }

    /// A real-time sink that keeps the sound it was given, and the output frames where each beep begins.
    final class ListeningSink: AudioSink {
        var handedFrames = 0
        var playedFrames = 0.0
        var sampleRate = 44_100
        var onsets: [Int] = []
        private var lastLoud: Int?

        func play(_ audio: AudioSamples) {
            sampleRate = audio.sampleRate
            let channels = max(1, audio.channels)
            for index in stride(from: 0, to: audio.samples.count, by: channels) where abs(audio.samples[index]) > 0.05 {
                let frame = handedFrames + index / channels
                if lastLoud.map({ frame - $0 > sampleRate / 2 }) ?? true { onsets.append(frame) }
                lastLoud = frame
            }
            handedFrames += audio.samples.count / channels
        }

        var unplayedDuration: Duration? { .seconds(Double(handedFrames) - playedFrames) / sampleRate }
    }

    /// The sound's clock is the stream time of what is heard, also while the sound is time-stretched and across
    /// changes of rate: each beep of `flashBeep` (one near the start of every second) is heard when the clock says
    /// its time. At 1×, then 1.2×, then easing back to 1× (speed's catch-up), the clock is within the
    /// stretcher's search (±7.5 ms) of the beep; the stretcher's held-back input and the rate each block was
    /// stretched at are the clock's to account for.
    @Test func theSoundClockSaysWhatIsHeardWhileTimeStretched() throws {
        let reader = try MediaReader(path: try Fixture.flashBeep.path(), options: .init(decodes: true))
        var audio: [AudioFrame] = []
        while let event = try reader.next() { if case .audioFrame(let frame) = event { audio.append(frame) } }
        // Where each beep begins in the stream, from the decoded sound itself (the encoder's frames move it off the
        // second by up to 45 ms).
        let beeps = ListeningSink()
        for frame in audio {
            beeps.play(AudioSamples(
                pts: frame.pts, sampleRate: frame.sampleRate, channels: frame.channels,
                samples: frame.interleavedFloat32(), rate: 1))
        }
        let beepTimes = beeps.onsets.map { Int64((Double($0) / Double(beeps.sampleRate) * 1000).rounded()) }
        var pending = audio[...]
        let sink = ListeningSink()
        let presenter = Presenter(videoSink: nil, audioSink: sink)
        var wall = Duration.zero
        var position = MediaTimestamp.zero
        var errors: [(second: Int64, milliseconds: Int64, rate: Double)] = []
        var heard = 0
        while let last = audio.last, position.milliseconds < last.pts.milliseconds - 500 {
            // 1× for 2 s, 1.2× until 8 s, then back to 1× by 0.02 every 200 ms of wall time.
            let rate = wall < .seconds(2) ? 1 : wall < .seconds(8) ? 1.2 : max(1, 1.2 - 0.02 * ((wall - .seconds(8)) / .milliseconds(200)).rounded(.down))
            while let next = pending.first, next.pts.milliseconds <= position.milliseconds + 150 {
                presenter.enqueue(next)
                pending = pending.dropFirst()
            }
            _ = presenter.present(at: position, rate: rate)
            // Played on, in steps of at most 10 ms, stopping exactly where a beep begins to be heard.
            var step = 0.01 * Double(sink.sampleRate)
            if heard < sink.onsets.count, Double(sink.onsets[heard]) - sink.playedFrames <= step {
                step = max(0, Double(sink.onsets[heard]) - sink.playedFrames)
            }
            sink.playedFrames = min(Double(sink.handedFrames), sink.playedFrames + step)
            wall += .seconds(step / Double(sink.sampleRate))
            position = presenter.audioClock() ?? position
            if heard < sink.onsets.count, sink.playedFrames >= Double(sink.onsets[heard]) {
                heard += 1
                let beep = try #require(beepTimes.min { abs($0 - position.milliseconds) < abs($1 - position.milliseconds) })
                errors.append((beep / 1000, position.milliseconds - beep, rate))
            }
        }
        #expect(beepTimes.count == 20 && errors.count >= 15, "\(beepTimes) \(errors)")
        #expect(errors.contains { $0.rate == 1.2 } && errors.contains { $0.rate > 1 && $0.rate < 1.2 })
        #expect(errors.allSatisfy { abs($0.milliseconds) <= 8 }, "beep heard vs the clock: \(errors)")
    }

    /// Enhanced RTMP's silence: once the sound queued before it has been heard, the audio clock lets go and the
    /// picture runs on the play loop's own clock; sound coming back takes the clock again. Without the signal, a
    /// real-time sink that runs dry holds the clock where the sound stopped.
    @Test(arguments: [true, false])
    func aSilenceHandsTheClockOverOnceTheSoundIsHeard(_ signalled: Bool) throws {
        let frames = try Self.decoded()
        let audioSink = RecordingAudioSink(realTime: true)
        let presenter = Presenter(videoSink: RecordingVideoSink(), audioSink: audioSink)
        for frame in frames.audio where frame.pts.milliseconds < 1000 { presenter.enqueue(frame) }
        if signalled { presenter.silenceBegan() }
        var position = MediaTimestamp.zero
        var wall = Duration.zero
        while wall < .milliseconds(2000) {
            // The engine's rule: the audio clock when there is one, else its own, moving on by the time passed.
            position = presenter.audioClock() ?? MediaTimestamp(milliseconds: position.milliseconds + 10)
            _ = presenter.present(at: position, rate: 1)
            wall += .milliseconds(10)
            audioSink.advance(by: .milliseconds(10))
        }
        if signalled {
            #expect(presenter.audioClock() == nil)
            #expect(position.milliseconds >= 1900, "the picture's clock ran on: \(position)")
            for frame in frames.audio where frame.pts >= position { presenter.enqueue(frame) }
            _ = presenter.present(at: position, rate: 1)
            let resumed = try #require(presenter.audioClock(), "the sound is the clock again")
            #expect(abs(resumed.milliseconds - position.milliseconds) <= 100)
        } else {
            let held = try #require(presenter.audioClock())
            #expect(abs(held.milliseconds - 1000) <= 50, "the dry sink held the clock: \(held)")
        }
    }

    @Test func theFirstPictureShowsBeforePlaybackBeginsAndOnlyOnce() throws {
        let frames = try Self.decoded()
        let videoSink = RecordingVideoSink()
        let presenter = Presenter(videoSink: videoSink, audioSink: nil)
        #expect(presenter.showFirstPicture(at: .zero).picture == nil)
        presenter.enqueue(frames.video[0])
        presenter.enqueue(frames.video[1])
        #expect(presenter.showFirstPicture(at: .zero).picture != nil)
        #expect(presenter.showFirstPicture(at: .zero).picture == nil, "a poster, not playback")
        #expect(videoSink.shown.count == 1)
        // Decoded audio goes nowhere without a sink.
        presenter.enqueue(frames.audio[0])
        #expect(presenter.audioClock() == nil)
    }

    /// SEI messages go out with their picture, or with the next one shown; a seek's reset forgets those whose
    /// pictures were dropped, and at most 256 wait.
    @Test func seiMessagesGoWithTheirPictureAndAResetForgetsThem() throws {
        let frames = try Self.decoded()
        let videoSink = RecordingVideoSink()
        let presenter = Presenter(videoSink: videoSink, audioSink: nil)
        let first = frames.video[0].pts, second = frames.video[1].pts
        let message = { (text: String) in SEIMessage(payloadType: 242, payload: Array(text.utf8)) }
        // Arriving in decode order: the later picture's first.
        presenter.seiArrived([message("second")], pts: second)
        presenter.seiArrived([message("first")], pts: first)
        presenter.enqueue(frames.video[0])
        presenter.enqueue(frames.video[1])
        let shownFirst = presenter.present(at: first, rate: 1)
        let shownSecond = presenter.present(at: second, rate: 1)
        #expect(videoSink.shown.map(\.seiMessages) == [[message("first")], [message("second")]])
        #expect(shownFirst.shownSEI.map(\.1) == [first] && shownSecond.shownSEI.map(\.1) == [second], "each call's own")
        #expect(presenter.present(at: second, rate: 1).shownSEI.isEmpty)
        // A seek drops the waiting pictures, and their messages with them.
        presenter.seiArrived([message("dropped")], pts: frames.video[2].pts)
        presenter.reset()
        presenter.enqueue(frames.video[3])
        _ = presenter.present(at: frames.video[3].pts, rate: 1)
        #expect(videoSink.shown.last?.seiMessages == [])
        // Without pictures, the oldest go past the bound.
        for index in 0..<300 { presenter.seiArrived([message("\(index)")], pts: frames.video[4].pts) }
        presenter.enqueue(frames.video[4])
        _ = presenter.present(at: frames.video[4].pts, rate: 1)
        let kept = videoSink.shown.last?.seiMessages ?? []
        #expect(kept.count == PictureAttachments.maximumPending)
        #expect(kept.first == message("44") && kept.last == message("299"))
    }

    /// A caption shows from the picture that brought it until the one that changed it, and leaves the screen as a
    /// whole caption with those two times; a seek's reset ends the one on screen at the last picture shown.
    @Test func captionsShowWithTheirPicturesAndEndWhenTheScreenChanges() throws {
        let frames = try Self.decoded()
        let videoSink = RecordingVideoSink()
        let presenter = Presenter(videoSink: videoSink, audioSink: nil)
        let pts = frames.video.prefix(6).map(\.pts)
        // Script-data text arrives in stream order, ahead of a 608 change decoded earlier in time: kept in order.
        presenter.captionChanged(CaptionScreen(at: pts[3], text: "", channel: .cc1))
        presenter.captionChanged(CaptionScreen(at: pts[1], text: "HELLO", channel: .cc1))
        var ended: [Caption] = []
        for index in 0..<4 {
            presenter.enqueue(frames.video[index])
            ended += presenter.present(at: pts[index], rate: 1).endedCaptions
        }
        #expect(videoSink.shown.map(\.caption) == [nil, "HELLO", "HELLO", nil])
        #expect(ended == [Caption(start: pts[1], end: pts[3], text: "HELLO", channel: .cc1)])
        #expect(presenter.present(at: pts[3], rate: 1).endedCaptions.isEmpty)
        // Shown with two pictures, then a seek: it ends with the last picture shown, and what waited is forgotten.
        presenter.captionChanged(CaptionScreen(at: pts[4], text: "AGAIN", channel: .text))
        presenter.captionChanged(CaptionScreen(at: pts[5] + 1, text: "NEVER SHOWN", channel: .text))
        ended = []
        for index in 4..<6 {
            presenter.enqueue(frames.video[index])
            ended += presenter.present(at: pts[index], rate: 1).endedCaptions
        }
        #expect(ended.isEmpty)
        presenter.reset()
        presenter.enqueue(frames.video[6])
        // The caption the seek ended goes out with the next call.
        let next = presenter.present(at: frames.video[6].pts, rate: 1)
        #expect(next.endedCaptions == [Caption(start: pts[4], end: pts[5], text: "AGAIN", channel: .text)])
        #expect(videoSink.shown.last?.caption == nil)
    }
}
