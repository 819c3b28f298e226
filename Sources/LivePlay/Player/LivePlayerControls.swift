import LivePlayBuffering
public import LivePlayCore
import LivePlayDecode

/// TXLivePlayer's calls on the playback running: each goes to its session's ``PlaybackControl`` as a command, and
/// the settings that last (volume, mute, layout) are kept for the playbacks after it.
extension LivePlayer {
    /// Holds the picture; the stream keeps arriving within the buffer's limits.
    public func pause() {
        state.withLock { $0.control }?.pause()
    }

    /// Goes to the live edge now, dropping the buffer to its newest keyframe (reported by
    /// `LIVEPLAY_EVT_CATCH_UP_SKIP`); only while a live stream plays.
    public func goToLiveEdge() {
        state.withLock { $0.control }?.goToLiveEdge()
    }

    /// Back to the live edge of a time-shifted stream (TXLivePlayer's `resumeLive`; ``LivePlayConfiguration/timeShift``).
    public func resumeLive() {
        state.withLock { $0.control }?.resumeLive()
    }

    /// Plays another track of a multitrack stream (``PlaybackControl/selectTrack(_:_:)``); only while playing.
    public func selectTrack(_ kind: MediaKind, _ track: UInt8?) {
        state.withLock { $0.control }?.selectTrack(kind, track)
    }

    /// Resumes at the newest media, as TXLivePlayer does for live streams; media on demand resumes where it
    /// paused.
    public func resume() {
        state.withLock { $0.control }?.resume()
    }

    /// Moves media on demand to `position` from its start (TXLivePlayer's `seek`), or a time-shifted live stream to
    /// `position` from the start of its window: the picture there is shown, decoded from the keyframe at or before
    /// it. Before playing, sets where the next playback starts. A live stream without time-shift ignores it.
    public func seek(to position: Duration) {
        let control = state.withLock {
            if $0.control == nil { $0.configuration.startPosition = position }
            return $0.control
        }
        control?.seek(to: position)
    }

    /// Moves `delta` from where playback is (negative: back), in media on demand or a time-shift window; while
    /// playing only.
    public func seek(by delta: Duration) {
        state.withLock { $0.control }?.seek(by: delta)
    }

    /// Records what arrives, as it arrived, to FLV or fragmented MP4 (TXLivePlayer's `startRecord`; docs/recording.md):
    /// `LIVEPLAY_EVT_RECORD_BEGIN` / `_PROGRESS` / `_COMPLETE` (9013–9015), `LIVEPLAY_WARNING_RECORD_FAILED` (9102).
    /// Before playing, the next playback records from its start.
    public func startRecord(_ options: RecordingOptions) {
        let control = state.withLock {
            if $0.control == nil { $0.configuration.recording = options }
            return $0.control
        }
        control?.startRecording(options)
    }

    /// Finishes the recording (TXLivePlayer's `stopRecord`): its file is closed and reported complete.
    public func stopRecord() {
        let control = state.withLock {
            if $0.control == nil { $0.configuration.recording = nil }
            return $0.control
        }
        control?.stopRecording()
    }

    /// Replaces where pictures go, also while playing: the next picture goes to `sink` (`nil`: nowhere).
    public func setVideoSink(_ sink: (any VideoSink)?) {
        let held = HeldSink(sink)
        replaceSink { $0.videoSink = held } through: { gate, control in
            gate.setVideo(held)
            control.setVideoSink(gate.video)
        }
    }

    /// Replaces where sound goes, also while playing.
    public func setAudioSink(_ sink: (any AudioSink)?) {
        let held = HeldSink(sink)
        replaceSink { $0.audioSink = held } through: { gate, control in
            gate.setAudio(held)
            control.setAudioSink(gate.audio)
        }
    }

    /// Keeps a sink for later playbacks and, while one plays, puts it behind that playback's gate and tells its
    /// control.
    private func replaceSink(_ keep: (inout State) -> Void, through apply: (SinkGate, PlaybackControl) -> Void) {
        let running = state.withLock { state in
            keep(&state)
            return state.gate.flatMap { gate in state.control.map { (gate, $0) } }
        }
        if let (gate, control) = running { apply(gate, control) }
    }

    /// TXLivePlayer's `setVolume`: 0…100, applied to the sound with a short ramp (no click).
    public func setVolume(_ volume: Int) {
        change { $0.volume = min(100, max(0, volume)) }
    }

    /// TXLivePlayer's `enableAudioVolumeEvaluation`: every `interval` (at least 100 ms), the level of the sound
    /// played as `LIVEPLAY_EVT_AUDIO_VOLUME` (9011) with `volume` 0…100; nil turns it off.
    public func enableAudioVolumeEvaluation(_ interval: Duration?) {
        change { $0.volumeEvaluation = interval.map { max($0, .milliseconds(100)) } }
    }

    /// TXLivePlayer's `setMute`: silences the sound and keeps the volume for when it is unmuted.
    public func setMute(_ muted: Bool) {
        change { $0.muted = muted }
    }

    /// TXLivePlayer's `setRenderMode`: carried to the video sink in every ``FrameTiming``.
    public func setRenderMode(_ mode: RenderMode) {
        change { $0.renderMode = mode }
    }

    /// TXLivePlayer's `setRenderRotation`: carried to the video sink in every ``FrameTiming``.
    public func setRenderRotation(_ rotation: RenderRotation) {
        change { $0.rotation = rotation }
    }

    /// Keeps a front end's setting for later playbacks and hands the settings to the one running, if any.
    private func change(_ keep: (inout PlaybackSettings) -> Void) {
        let (settings, control) = state.withLock {
            keep(&$0.settings)
            return ($0.settings, $0.control)
        }
        control?.apply(settings)
    }
}
