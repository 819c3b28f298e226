internal import CSDL2
import Foundation
public import LivePlay
import Synchronization

/// Plays sound through the sound device with SDL2's audio (PulseAudio, PipeWire or ALSA, whichever SDL finds;
/// `SDL_AUDIODRIVER=disk` writes what the device was given to `SDL_DISKAUDIOFILE` instead).
///
/// It reports what it holds unplayed (``unplayedDuration``), so the player follows the device: the sound is the
/// master clock and pictures are shown against what is heard, and the time-stretched sound of a catch-up is what
/// the device plays. Only while the device follows real time (``DeviceClockCheck``): a device that does not open,
/// or takes the sound faster than real time (ALSA with no card) or not at all, is given up once, told through
/// `onFallback`, and from then on the sink reports `nil` (the player's own clock leads, as with no sound). Volume and mute are applied by the player to the samples (with a ramp, no click) before they
/// arrive here. The device opens at the first sound's rate and channel count and reopens if they change.
public final class DeviceAudioSink: AudioSink, Sendable {
    /// Stereo: multichannel sound is down-mixed before it reaches the device (``StereoDownmix``).
    public var maximumChannels: Int? { 2 }

    /// The device and its format. SDL is called under it (the play loop queues, ``close()`` may come from another
    /// thread), so the device cannot close between reading its id and queueing; SDL's own audio thread pulls from
    /// the queue under the device's lock and calls nothing of ours.
    private let state = Mutex(State())

    private struct State {
        var device: SDL_AudioDeviceID = 0
        var format: (sampleRate: Int, channels: Int)?
        /// The device's own buffer, in frames: sound already taken from the queue but not yet heard.
        var deviceFrames = 0
        /// The newest samples queued (a little more than the player keeps queued), for ``fadeOutUnplayed()``.
        var recent: [Float] = []
        /// The device plays: unpaused at the first sound queued after it opened.
        var started = false
        /// Frames queued since the device opened, to tell how many it has taken.
        var queuedTotal = 0
        var check: DeviceClockCheck?
        /// Why the device was given up; nil while it plays in real time.
        var gaveUp: String?
        var told = false

        mutating func open(_ sampleRate: Int, _ channels: Int) {
            if device != 0 { SDL_CloseAudioDevice(device) }
            var wanted = SDL_AudioSpec()
            wanted.freq = Int32(sampleRate)
            wanted.format = liveplay_sdl_audio_f32()
            wanted.channels = UInt8(clamping: channels)
            // About 23 ms at 44.1 kHz: small, so the queue (which the player keeps short) is most of what is held.
            wanted.samples = 1024
            var obtained = SDL_AudioSpec()
            device = SDL_OpenAudioDevice(nil, 0, &wanted, &obtained, 0)
            format = (sampleRate, channels)
            deviceFrames = device == 0 ? 0 : Int(obtained.samples)
            started = false
            queuedTotal = 0
            check = DeviceClockCheck(sampleRate: Int(obtained.freq > 0 ? obtained.freq : Int32(sampleRate)))
            if device == 0 { gaveUp = "the sound device did not open (\(String(cString: SDL_GetError())))" }
        }

        /// Looks at the device now; the reason it is given up, the first time it is.
        mutating func judge(at now: Duration) -> String? {
            guard gaveUp == nil, device != 0, let format, started else { return nil }
            let queued = Int(SDL_GetQueuedAudioSize(device)) / (format.channels * MemoryLayout<Float>.size)
            let verdict = check?.observe(at: now, consumedFrames: queuedTotal - queued, queuedFrames: queued)
            guard case .notRealTime(let rate)? = verdict else { return nil }
            SDL_CloseAudioDevice(device)
            device = 0
            let shown = String(format: "%.1f", rate)
            gaveUp = "the sound device takes the sound at \(shown)× real time (\(rate > 1 ? "no card behind it?" : "stuck?"))"
            return tellOnce()
        }

        /// Why the device was given up, the first time it is asked.
        mutating func tellOnce() -> String? {
            guard let gaveUp, !told else { return nil }
            told = true
            return gaveUp
        }
    }

    private let onFallback: @Sendable (String) -> Void
    private let origin = ContinuousClock.now

    /// Initialises SDL's audio; the device opens with the first sound.
    /// - Parameter onFallback: told once, with a sentence, when the device is given up (it did not open, or does
    ///   not play in real time) and the player's own clock takes over.
    public init(onFallback: @escaping @Sendable (String) -> Void = { _ in }) throws(WindowError) {
        self.onFallback = onFallback
        try WindowError.loadSDL()
        guard SDL_InitSubSystem(SDL_INIT_AUDIO) == 0 else { throw .sdl(.sound, "cannot use the sound system") }
    }

    private var now: Duration { ContinuousClock.now - origin }

    deinit { close() }

    public func play(_ audio: AudioSamples) {
        let now = now
        let gaveUp: String? = state.withLock { state in
            guard state.gaveUp == nil else { return nil }
            if state.format.map({ $0 != (audio.sampleRate, audio.channels) }) ?? true {
                state.open(audio.sampleRate, audio.channels)
            }
            guard state.device != 0 else { return state.tellOnce() }
            audio.samples.withUnsafeBytes { bytes in
                _ = SDL_QueueAudio(state.device, bytes.baseAddress, UInt32(bytes.count))
            }
            state.queuedTotal += audio.samples.count / max(1, audio.channels)
            // Started once the first sound is queued: started empty, its first callbacks would play silence first.
            // (SDL2 runs a paused device's thread too, playing silence: if it gets in between the opening and this,
            // one device buffer of silence, 23 ms, comes before the first sound; the clock counts from the queue.)
            if !state.started {
                SDL_PauseAudioDevice(state.device, 0)
                state.started = true
            }
            state.recent += audio.samples
            let kept = audio.sampleRate * audio.channels / 2
            if state.recent.count > 2 * kept { state.recent.removeFirst(state.recent.count - kept) }
            return state.judge(at: now)
        }
        if let gaveUp { onFallback(gaveUp) }
    }

    /// Lets go of the sound queued and not yet heard, fading out over its first 10 ms (the device's own buffer,
    /// about 23 ms, plays out first): a switch to another stream is heard at once, without a click.
    public func fadeOutUnplayed() {
        state.withLock { state in
            guard state.device != 0, let format = state.format else { return }
            let device = state.device
            SDL_LockAudioDevice(device)
            defer { SDL_UnlockAudioDevice(device) }
            let queued = min(state.recent.count, Int(SDL_GetQueuedAudioSize(device)) / MemoryLayout<Float>.size)
            // What is let go was never taken by the device: not counted as taken (``DeviceClockCheck``).
            state.queuedTotal -= Int(SDL_GetQueuedAudioSize(device)) / (MemoryLayout<Float>.size * format.channels)
            SDL_ClearQueuedAudio(device)
            let channels = format.channels
            let frames = min(queued / max(1, channels), format.sampleRate / 100)
            guard frames > 0 else { return }
            let start = state.recent.count - queued
            var tail = Array(state.recent[start..<(start + frames * channels)])
            for frame in 0..<frames {
                let gain = Float(frames - frame) / Float(frames + 1)
                for channel in 0..<channels { tail[frame * channels + channel] *= gain }
            }
            tail.withUnsafeBytes { bytes in _ = SDL_QueueAudio(device, bytes.baseAddress, UInt32(bytes.count)) }
            state.queuedTotal += frames
            state.recent.removeAll(keepingCapacity: true)
        }
    }

    /// nil once the device was given up: the player's clock leads.
    public var unplayedDuration: Duration? {
        let now = now
        let (unplayed, gaveUp): (Duration?, String?) = state.withLock { state in
            if state.gaveUp != nil { return (nil, nil) }
            guard state.device != 0, let format = state.format else { return (.zero, nil) }
            if let reason = state.judge(at: now) { return (nil, reason) }
            let bytesPerFrame = format.channels * MemoryLayout<Float>.size
            let frames = Int(SDL_GetQueuedAudioSize(state.device)) / bytesPerFrame + state.deviceFrames
            return (.seconds(Double(frames) / Double(format.sampleRate)), nil)
        }
        if let gaveUp { onFallback(gaveUp) }
        return unplayed
    }

    /// Stops the sound and closes the device.
    public func close() {
        state.withLock { state in
            if state.device != 0 { SDL_CloseAudioDevice(state.device) }
            state.device = 0
            state.format = nil
        }
    }
}
