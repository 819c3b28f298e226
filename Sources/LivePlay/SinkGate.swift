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

    init(video: (any VideoSink)?, audio: (any AudioSink)?) {
        videoTarget = video
        audioTarget = audio
    }

    /// What the playback is given: nil where the player has no sink, so the playback skips that work.
    var video: (any VideoSink)? { lock.withLock { videoTarget } == nil ? nil : GatedVideo(gate: self) }
    var audio: (any AudioSink)? { lock.withLock { audioTarget } == nil ? nil : GatedAudio(gate: self) }

    func close() { lock.withLock { isOpen = false } }

    func setVideo(_ sink: (any VideoSink)?) { lock.withLock { videoTarget = sink } }
    func setAudio(_ sink: (any AudioSink)?) { lock.withLock { audioTarget = sink } }

    fileprivate var openVideo: (any VideoSink)? { lock.withLock { isOpen ? videoTarget : nil } }
    fileprivate var openAudio: (any AudioSink)? { lock.withLock { isOpen ? audioTarget : nil } }
    fileprivate var anyAudio: (any AudioSink)? { lock.withLock { audioTarget } }
}

private final class GatedVideo: VideoSink {
    let gate: SinkGate
    init(gate: SinkGate) { self.gate = gate }

    func present(_ frame: VideoFrame, timing: FrameTiming) {
        gate.openVideo?.present(frame, timing: timing)
    }
}

private final class GatedAudio: AudioSink {
    let gate: SinkGate
    init(gate: SinkGate) { self.gate = gate }

    func play(_ audio: AudioSamples) {
        gate.openAudio?.play(audio)
    }

    var unplayedDuration: Duration? { gate.anyAudio?.unplayedDuration }
}
