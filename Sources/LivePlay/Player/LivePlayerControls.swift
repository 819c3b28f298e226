public import LivePlayBuffering
public import LivePlayCore
public import LivePlayDecode

/// The player's one control surface: ``send(_:)`` takes a ``PlayerCommand`` (which says what each does) and the calls
/// after it, TXLivePlayer's names, are conveniences for it. What lasts from one playback to the next (volume, mute,
/// layout) is kept here and given to each playback; what a playback is comes back as its ``PlaybackState``.
extension LivePlayer {
    /// Pictures for a seek bar's hover over the time-shift window (``LivePlayConfiguration/timeShift``): for a time
    /// from the window's start, the keyframe at or before it, read from the playing session's ring. Each request
    /// asks for the ring anew, so the reader follows a switch to another stream; without time-shift it delivers
    /// no picture. Stop it when done.
    public func timeShiftThumbnails(deliver: @escaping ThumbnailReader.Delivery) -> ThumbnailReader {
        ThumbnailReader(
            timeShiftRing: { [weak self] in self?.state.withLock { $0.control?.published.timeShiftRing } },
            deliver: deliver)
    }

    /// Switches to a latency mode's preset, also while playing.
    public func setMode(_ mode: LatencyMode) {
        configuration.latency = .preset(mode)
    }

    /// Carries out `command`: the settings that last change here and go to the playback running; a seek or a
    /// recording asked for before playing applies to the next playback; the rest goes to the playback running (a
    /// command with none running is dropped).
    public func send(_ command: PlayerCommand) {
        switch command {
        case .volume(let volume): change { $0.volume = min(100, max(0, volume)) }
        case .changeVolume(let delta): change { $0.volume = min(100, max(0, $0.volume + delta)) }
        case .mute(let muted): change { $0.muted = muted }
        case .toggleMute: change { $0.muted.toggle() }
        case .volumeEvaluation(let interval): change { $0.volumeEvaluation = interval.map { max($0, .milliseconds(100)) } }
        case .renderMode(let mode): change { $0.renderMode = mode }
        case .rotation(let rotation): change { $0.rotation = rotation }
        case .rotateClockwise: change { $0.rotation = $0.rotation.turnedClockwise }
        case .latency(let parameters): configuration.latency = parameters
        case .hardwareDecoding(let hardware):
            let control = state.withLock { state in
                state.configuration.decoder.hardware = hardware
                return state.control
            }
            control?.send(command)
        case .seek(to: let position): beforePlaying(command) { $0.startPosition = position }
        case .startRecording(let options): beforePlaying(command) { $0.recording = options }
        case .stopRecording: beforePlaying(command) { $0.recording = nil }
        default: state.withLock { $0.control }?.send(command)
        }
    }

    /// `PlayerCommand.pause`.
    public func pause() { send(.pause) }
    /// `PlayerCommand.resume`.
    public func resume() { send(.resume) }
    /// `PlayerCommand.goToLiveEdge`.
    public func goToLiveEdge() { send(.goToLiveEdge) }
    /// `PlayerCommand.goToLiveEdge`, TXLivePlayer's `resumeLive` for a time-shifted stream.
    public func resumeLive() { send(.goToLiveEdge) }
    /// `PlayerCommand.selectTrack(_:_:)`.
    public func selectTrack(_ kind: MediaKind, _ track: UInt8?) { send(.selectTrack(kind, track)) }
    /// `PlayerCommand.seek(to:)`; before playing, where the next playback starts.
    public func seek(to position: Duration) { send(.seek(to: position)) }
    /// `PlayerCommand.seekBy(_:)`.
    public func seek(by delta: Duration) { send(.seekBy(delta)) }
    /// `PlayerCommand.startRecording(_:)`; before playing, the next playback records from its start.
    public func startRecord(_ options: RecordingOptions) { send(.startRecording(options)) }
    /// `PlayerCommand.stopRecording`.
    public func stopRecord() { send(.stopRecording) }
    /// `PlayerCommand.volume(_:)`.
    public func setVolume(_ volume: Int) { send(.volume(volume)) }
    /// `PlayerCommand.mute(_:)`.
    public func setMute(_ muted: Bool) { send(.mute(muted)) }
    /// `PlayerCommand.volumeEvaluation(_:)`.
    public func enableAudioVolumeEvaluation(_ interval: Duration?) { send(.volumeEvaluation(interval)) }
    /// `PlayerCommand.renderMode(_:)`.
    public func setRenderMode(_ mode: RenderMode) { send(.renderMode(mode)) }
    /// `PlayerCommand.rotation(_:)`.
    public func setRenderRotation(_ rotation: RenderRotation) { send(.rotation(rotation)) }

    /// Whether video decodes on a device (`PlayerCommand.hardwareDecoding(_:)`): for the next playback, and for the
    /// one playing from its next keyframe.
    public var hardwareDecoding: HardwareDecoding {
        get { configuration.decoder.hardware }
        set { send(.hardwareDecoding(newValue)) }
    }

    /// TXLivePlayer's `enableHWAcceleration`: `auto` (what the machine has, software otherwise) or software. Unlike
    /// TXLivePlayer's, it also takes effect while playing, at the next keyframe. Returns `true`.
    @discardableResult
    public func enableHWAcceleration(_ enabled: Bool) -> Bool {
        send(.hardwareDecoding(enabled ? .auto : .off))
        return true
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

    /// Keeps a front end's setting for later playbacks and hands the settings to the one running, if any.
    private func change(_ keep: (inout PlaybackSettings) -> Void) {
        let (settings, control) = state.withLock {
            keep(&$0.settings)
            return ($0.settings, $0.control)
        }
        control?.apply(settings)
    }

    /// `command` to the playback running, or, with none, what it asks kept in the configuration for the next one.
    private func beforePlaying(_ command: PlayerCommand, keep: (inout LivePlayConfiguration) -> Void) {
        let control = state.withLock {
            if $0.control == nil { keep(&$0.configuration) }
            return $0.control
        }
        control?.send(command)
    }
}
