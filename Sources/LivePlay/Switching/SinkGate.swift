import Foundation
import Synchronization
import LivePlayDecode

/// The way from one playback to its player's sinks, closed the moment the player switches to another stream: the
/// old playback stops within a tick, and nothing it presents on that last turn may follow the new stream's first
/// picture. The player's sinks can also be replaced through it while playing.
///
final class SinkGate: Sendable {
    private struct Gate {
        var isOpen = true
        var videoTarget: HeldSink<any VideoSink>
        var audioTarget: HeldSink<any AudioSink>
        /// A rendition switch's cut: nothing stamped at or after it passes, and the first picture that reaches it
        /// (the first sound, without a picture sink) tells the switch waiting for it, once.
        var cut: (at: MediaTimestamp, reached: CheckedContinuation<Bool, Never>)?
    }

    private let gate: Mutex<Gate>

    init(video: HeldSink<any VideoSink>, audio: HeldSink<any AudioSink>) {
        gate = Mutex(Gate(videoTarget: video, audioTarget: audio))
    }

    /// What the playback is given: nil where the player has no sink, so the playback skips that work.
    var video: (any VideoSink)? { videoSink == nil ? nil : GatedVideo(gate: self) }
    var audio: (any AudioSink)? { audioSink == nil ? nil : GatedAudio(gate: self) }

    /// Closes the way: nothing more passes, and a switch waiting for its cut is told it will not come.
    func close() {
        gate.withLock { gate in
            gate.isOpen = false
            defer { gate.cut = nil }
            return gate.cut?.reached
        }?.resume(returning: false)
    }

    deinit {
        close()
    }

    /// Lets through only what is stamped before `pts`; returns `true` when the playback reaches it (the way is
    /// closed then), `false` when the way closes first (the playback ended or switched elsewhere) or the waiting
    /// task is cancelled.
    func reach(_ pts: MediaTimestamp) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let replaced = gate.withLock { gate -> (CheckedContinuation<Bool, Never>?, Bool) in
                    guard gate.isOpen, !Task.isCancelled else { return (nil, false) }
                    defer { gate.cut = (pts, continuation) }
                    return (gate.cut?.reached, true)
                }
                replaced.0?.resume(returning: false)
                if !replaced.1 { continuation.resume(returning: false) }
            }
        } onCancel: {
            gate.withLock { gate in
                defer { gate.cut = nil }
                return gate.cut?.reached
            }?.resume(returning: false)
        }
    }

    /// Where `pts` may go: the target while open and before the cut; at the cut, the way closes and the switch
    /// waiting for it is told (once).
    fileprivate func pass(_ pts: MediaTimestamp, video: Bool) -> Bool {
        let (open, reached): (Bool, CheckedContinuation<Bool, Never>?) = gate.withLock { gate in
            guard gate.isOpen else { return (false, nil) }
            guard let cut = gate.cut, pts >= cut.at else { return (true, nil) }
            // The picture reaches it; or the sound, when there are no pictures to wait for.
            guard video || gate.videoTarget.sink == nil else { return (false, nil) }
            gate.isOpen = false
            gate.cut = nil
            return (false, cut.reached)
        }
        reached?.resume(returning: true)
        return open
    }

    func setVideo(_ sink: HeldSink<any VideoSink>) { gate.withLock { $0.videoTarget = sink } }
    func setAudio(_ sink: HeldSink<any AudioSink>) { gate.withLock { $0.audioTarget = sink } }

    fileprivate var videoSink: (any VideoSink)? { gate.withLock { $0.videoTarget }.sink }
    fileprivate var audioSink: (any AudioSink)? { gate.withLock { $0.audioTarget }.sink }
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

    var unplayedDuration: Duration? { gate.audioSink?.unplayedDuration }

    func fadeOutUnplayed() { gate.audioSink?.fadeOutUnplayed() }
}
