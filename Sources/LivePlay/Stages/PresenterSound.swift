import LivePlayBuffering
import LivePlayCore
import LivePlayDecode
import LivePlayLoudness
import Logging

/// The presenter's sound: blocks handed to the sink when due (a real-time sink kept ``Presenter/audioLead`` ahead),
/// downmixed for a stereo device, normalised in loudness, time-stretched to the playback rate, at the volume set.
extension Presenter {
    /// Loudness normalisation to `target` LUFS (``LivePlayConfiguration/loudness``); without libebur128, a warning and
    /// the sound as it is.
    func normalisesLoudness(to target: Double?, logger: Logger) {
        guard let target else { return }
        do {
            try LoudnessMeter.load()
            loudness = LoudnessNormalizer(target: target)
        } catch {
            logger.warning("no loudness normalisation: \(error.message)")
        }
    }

    func presentAudio(at position: MediaTimestamp, rate: Double) {
        guard let sink = audioSink else { return }
        if sink.unplayedDuration != nil {
            feedRealTime(sink, position: position, rate: rate)
            return
        }
        // Input is handed early by what the stretcher holds back, so its output comes out on time.
        let lead = stretcher?.latency ?? .zero
        audio.takeDue(
            at: position + lead.milliseconds, lateBy: Self.audioTolerance,
            duration: { .seconds($0.sampleCount) / max(1, $0.sampleRate) },
            { frame, pts in play(frame, pts: pts, rate: rate, to: sink) })
    }

    /// Keeps a real-time sink ``audioLead`` ahead; blocks the clock has already passed are dropped.
    private func feedRealTime(_ sink: any AudioSink, position: MediaTimestamp, rate: Double) {
        var budget = audio.count
        while budget > 0, let unplayed = sink.unplayedDuration, unplayed < Self.audioLead,
            let next = audio.removeFirst()
        {
            budget -= 1
            let length = Duration.seconds(next.frame.sampleCount) / max(1, next.frame.sampleRate)
            if position - next.pts > length + Self.audioTolerance { continue }
            play(next.frame, pts: next.pts, rate: rate, to: sink)
        }
    }

    private func play(_ frame: AudioFrame, pts: MediaTimestamp, rate: Double, to sink: any AudioSink) {
        var input = frame.interleavedFloat32()
        var channels = frame.channels
        if let limit = sink.maximumChannels, channels > max(2, limit) {
            if downmix?.matches(frame) != true {
                downmix = StereoDownmix(frame)
                presentation.downmixChange = (frame.layoutName, frame.channels)
            }
            input = downmix!.apply(input)
            channels = 2
        }
        if loudness != nil {
            do {
                try loudness?.process(&input, channels: channels, sampleRate: frame.sampleRate)
            } catch {
                // A format libebur128 refuses: the sound plays as it is (the net status has no loudness then).
                loudness = nil
            }
        }
        if stretcher?.sampleRate != frame.sampleRate || stretcher?.channels != channels {
            stretcher = AudioTimeStretcher(sampleRate: frame.sampleRate, channels: channels)
        }
        guard var stretcher else { return }
        let held = stretcher.latency
        stretcher.rate = rate
        var samples = stretcher.process(input)
        self.stretcher = stretcher
        guard !samples.isEmpty else { return }
        applyVolume(to: &samples, channels: channels, sampleRate: frame.sampleRate)
        if measuresLevel { for sample in samples { presentation.audioPeak = max(presentation.audioPeak, abs(sample)) } }
        presentation.playedAudio = pts
        // What the block carries: its input, less what the stretcher held back before and holds back now.
        let end = Double(pts.milliseconds) + Double(frame.sampleCount) * 1000 / Double(max(1, frame.sampleRate))
        handed.handed(
            plays: .seconds(samples.count / max(1, channels)) / frame.sampleRate,
            from: Double(pts.milliseconds) - held / .milliseconds(1), to: end - stretcher.latency / .milliseconds(1))
        sink.play(
            AudioSamples(
                pts: MediaTimestamp(milliseconds: pts.milliseconds - held.milliseconds), sampleRate: frame.sampleRate,
                channels: channels, samples: samples, rate: rate))
    }

    /// Scales by ``volume``, moving the gain there linearly over 10 ms (a step would click).
    private func applyVolume(to samples: inout [Float], channels: Int, sampleRate: Int) {
        // The first sound starts at the volume set (a ramp is for changes while it plays), unless it follows
        // another stream's.
        if !playedAudio {
            gain = fadingIn ? 0 : volume
            playedAudio = true
        }
        guard gain != 1 || volume != 1 else { return }
        let step = 1 / Float(max(1, sampleRate / 100))
        let frames = samples.count / max(1, channels)
        for index in 0..<frames {
            if gain < volume {
                gain = min(volume, gain + step)
            } else if gain > volume {
                gain = max(volume, gain - step)
            }
            for channel in 0..<channels { samples[index * channels + channel] *= gain }
        }
    }
}
