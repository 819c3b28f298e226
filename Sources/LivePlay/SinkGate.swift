import Foundation
import LivePlayDecode

/// The way from one playback to its player's sinks, closed the moment the player switches to another stream: the
/// old playback stops within a tick, and nothing it presents on that last turn may follow the new stream's first
/// picture. The player's sinks can also be replaced through it while playing.
///
/// `@unchecked Sendable`: the targets and `isOpen` are read and written under `lock`.
final class SinkGate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = true
    private var videoTarget: (any VideoSink)?
    private var audioTarget: (any AudioSink)?
    /// A rendition switch's cut: nothing stamped at or after it passes, and the first picture that reaches it
    /// (the first sound, without a picture sink) runs `then`, once, on the play loop.
    private var cut: (at: MediaTimestamp, then: @Sendable () -> Void)?

    init(video: (any VideoSink)?, audio: (any AudioSink)?) {
        videoTarget = video
        audioTarget = audio
    }

    /// What the playback is given: nil where the player has no sink, so the playback skips that work.
    var video: (any VideoSink)? { lock.withLock { videoTarget } == nil ? nil : GatedVideo(gate: self) }
    var audio: (any AudioSink)? { lock.withLock { audioTarget } == nil ? nil : GatedAudio(gate: self) }

    func close() { lock.withLock { isOpen = false } }

    /// Lets through only what is stamped before `pts`, and runs `then` when the playback reaches it.
    func cut(at pts: MediaTimestamp, then: @escaping @Sendable () -> Void) {
        lock.withLock { cut = (pts, then) }
    }

    /// Where `pts` may go: the target while open and before the cut; at the cut, the cut's action runs (once).
    fileprivate func pass(_ pts: MediaTimestamp, video: Bool) -> Bool {
        let (open, action): (Bool, (@Sendable () -> Void)?) = lock.withLock {
            guard isOpen else { return (false, nil) }
            guard let cut, pts >= cut.at else { return (true, nil) }
            // The picture reaches it; or the sound, when there are no pictures to wait for.
            guard video || videoTarget == nil else { return (false, nil) }
            isOpen = false
            return (false, cut.then)
        }
        action?()
        return open
    }

    func setVideo(_ sink: (any VideoSink)?) { lock.withLock { videoTarget = sink } }
    func setAudio(_ sink: (any AudioSink)?) { lock.withLock { audioTarget = sink } }

    fileprivate var videoSink: (any VideoSink)? { lock.withLock { videoTarget } }
    fileprivate var audioSink: (any AudioSink)? { lock.withLock { audioTarget } }
    fileprivate var anyAudio: (any AudioSink)? { lock.withLock { audioTarget } }
}

private final class GatedVideo: VideoSink {
    let gate: SinkGate
    init(gate: SinkGate) { self.gate = gate }

    func present(_ frame: VideoFrame, timing: FrameTiming) {
        guard gate.pass(timing.pts, video: true) else { return }
        gate.videoSink?.present(frame, timing: timing)
    }
}

private final class GatedAudio: AudioSink {
    let gate: SinkGate
    init(gate: SinkGate) { self.gate = gate }

    func play(_ audio: AudioSamples) {
        guard gate.pass(audio.pts, video: false) else { return }
        gate.audioSink?.play(audio)
    }

    var unplayedDuration: Duration? { gate.anyAudio?.unplayedDuration }

    func fadeOutUnplayed() { gate.anyAudio?.fadeOutUnplayed() }
}
