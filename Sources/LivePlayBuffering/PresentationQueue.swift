public import LivePlayCore
private import DequeModule

/// Decoded frames waiting for their presentation time, in presentation order, with a hard count limit.
///
/// Decoding runs a little ahead of the clock (the engine's look-ahead), so frames wait here until the
/// position reaches them. Video takes ``nextDue(at:)``: the newest frame that is due, the older due ones
/// being late and dropped (a slow tick or decode shows the right picture, not a backlog). Audio takes
/// ``takeDue(at:lateBy:)``: every due block in order, except blocks so late they would put sound behind
/// the picture. Generic over the frame so it holds libavcodec frames without knowing them.
///
/// A frame leaves the queue, and its memory (a decoder's picture buffer) goes back, the moment it is taken or
/// dropped: the queue never holds more than ``capacity`` frames. Times and frames are kept apart: the times are
/// read on every turn, in code specialised for them, while the frames, of a type only the caller knows, are touched
/// only as they come and go (reading a generic element in place costs an allocation per read where the caller's
/// type is not known, some 370 a second at 720p30).
public struct PresentationQueue<Frame: Sendable>: Sendable {
    /// Frames held at most; past it the oldest is dropped (the decoder outran the clock).
    public let capacity: Int
    /// Presentation times, in order; `frames` holds the frame of each, at the same index.
    private var times: Deque<MediaTimestamp> = []
    private var frames: Deque<Frame> = []
    /// Frames dropped so far: late, over capacity, superseded, or cleared.
    public private(set) var droppedFrames = 0
    /// Frames dropped since the last one returned by ``nextDue(at:lateBy:)``: stale or superseded.
    private var skippedSinceShown = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "a presentation queue holds at least one frame")
        self.capacity = capacity
    }

    public var count: Int { times.count }
    public var isEmpty: Bool { times.isEmpty }
    /// Presentation time of the next frame.
    public var nextPTS: MediaTimestamp? { times.first }

    /// Adds a frame in presentation order (decoders emit in order; a stray one is placed where it belongs).
    public mutating func insert(_ frame: Frame, pts: MediaTimestamp) {
        if times.count >= capacity {
            removeFirst(1)
            droppedFrames += 1
        }
        var index = times.endIndex
        while index > times.startIndex, times[index - 1] > pts { index -= 1 }
        times.insert(pts, at: index)
        frames.insert(frame, at: index)
    }

    /// Drops the due frames older than the newest due one at `position`: ``nextDue(at:lateBy:)`` would skip them
    /// anyway, and a burst decoded at once (a GOP cache at the start, a catch-up) then holds one picture, not a
    /// queue of them. Counted in the `skipped` of the next frame returned.
    public mutating func dropSuperseded(at position: MediaTimestamp) {
        let due = dueCount(at: position)
        guard due > 1 else { return }
        removeFirst(due - 1)
        droppedFrames += due - 1
        skippedSinceShown += due - 1
    }

    /// The newest frame due at `position`, and how many older due frames it replaces (dropped as late).
    ///
    /// - Parameter tolerance: a newest frame further behind `position` than this is stale (a decoder that
    ///   released old pictures late, after an error): it is dropped too, not shown out of time, and counted
    ///   in the `skipped` of the next frame returned.
    public mutating func nextDue(
        at position: MediaTimestamp, lateBy tolerance: Duration? = nil
    ) -> (frame: Frame, pts: MediaTimestamp, skipped: Int)? {
        let due = dueCount(at: position)
        guard due > 0 else { return nil }
        let skipped = due - 1 + skippedSinceShown
        droppedFrames += due - 1
        removeFirst(due - 1)
        let (pts, frame) = (times.removeFirst(), frames.removeFirst())
        if let tolerance, position - pts > tolerance {
            droppedFrames += 1
            skippedSinceShown = skipped + 1
            return nil
        }
        skippedSinceShown = 0
        return (frame, pts, skipped)
    }

    /// Hands every frame due at `position` to `body`, in order, as it leaves the queue; frames ending more than
    /// `lateBy` before it are dropped.
    public mutating func takeDue(
        at position: MediaTimestamp, lateBy tolerance: Duration, duration: (Frame) -> Duration,
        _ body: (Frame, MediaTimestamp) -> Void
    ) {
        while let pts = times.first, pts <= position {
            times.removeFirst()
            let frame = frames.removeFirst()
            if position - pts > duration(frame) + tolerance {
                droppedFrames += 1
            } else {
                body(frame, pts)
            }
        }
    }

    /// Removes the next frame whatever its time (a real-time audio sink asks for more).
    public mutating func removeFirst() -> (frame: Frame, pts: MediaTimestamp)? {
        guard let pts = times.popFirst() else { return nil }
        return (frames.removeFirst(), pts)
    }

    /// Drops everything (a new connection's decoder, a stop).
    public mutating func removeAll() {
        droppedFrames += times.count
        times.removeAll(keepingCapacity: true)
        frames.removeAll(keepingCapacity: true)
    }

    /// How many frames are due at `position`.
    private func dueCount(at position: MediaTimestamp) -> Int {
        var due = 0
        while due < times.count, times[due] <= position { due += 1 }
        return due
    }

    /// Drops the first `count` frames, which the caller has counted.
    private mutating func removeFirst(_ count: Int) {
        times.removeFirst(count)
        frames.removeFirst(count)
    }
}
