import Foundation
import LivePlay
import Synchronization

// The video sinks `liveplay URL` puts in front of the outputs it opens (PlayCommand.swift).

/// Counts presented pictures for `--frames`, and traces them for `--trace-frames`.
final class PresentedFrames: VideoSink, Sendable {
    private let limit: Int?
    private let log: EventLog?
    private let stop: StopSignal
    /// Changed only by `present`, on the play loop's thread: the lock is never contended.
    private let count = Mutex(0)

    init(limit: Int?, log: EventLog?, stop: StopSignal) {
        self.limit = limit
        self.log = log
        self.stop = stop
    }

    func present(_ frame: VideoFrame, timing: FrameTiming) {
        log?.frame(timing, shownAt: Date())
        let presented = count.withLock {
            $0 += 1
            return $0
        }
        if let limit, presented == limit { stop.fire(.frames) }
    }
}

/// Hands each picture to several sinks, in order.
final class VideoFanOut: VideoSink {
    private let sinks: [any VideoSink]

    init(_ sinks: [any VideoSink]) {
        self.sinks = sinks
    }

    func present(_ frame: VideoFrame, timing: FrameTiming) {
        for sink in sinks { sink.present(frame, timing: timing) }
    }
}
