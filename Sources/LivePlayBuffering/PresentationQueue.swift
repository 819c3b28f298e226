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
/// dropped: the queue never holds more than ``capacity`` frames.
public struct PresentationQueue<Frame: Sendable>: Sendable {
    /// Frames held at most; past it the oldest is dropped (the decoder outran the clock).
    public let capacity: Int
    private var entries: Deque<(pts: MediaTimestamp, frame: Frame)> = []
    /// Frames dropped so far: late, over capacity, superseded, or cleared.
    public private(set) var droppedFrames = 0
    /// Frames dropped since the last one returned by ``nextDue(at:lateBy:)``: stale or superseded.
    private var skippedSinceShown = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "a presentation queue holds at least one frame")
        self.capacity = capacity
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    /// Presentation time of the next frame.
    public var nextPTS: MediaTimestamp? { entries.first?.pts }

    /// Adds a frame in presentation order (decoders emit in order; a stray one is placed where it belongs).
    public mutating func insert(_ frame: Frame, pts: MediaTimestamp) {
        if entries.count >= capacity {
            entries.removeFirst()
            droppedFrames += 1
        }
        var index = entries.endIndex
        while index > entries.startIndex, entries[index - 1].pts > pts { index -= 1 }
        entries.insert((pts, frame), at: index)
    }

    /// Drops the due frames older than the newest due one at `position`: ``nextDue(at:lateBy:)`` would skip them
    /// anyway, and a burst decoded at once (a GOP cache at the start, a catch-up) then holds one picture, not a
    /// queue of them. Counted in the `skipped` of the next frame returned.
    public mutating func dropSuperseded(at position: MediaTimestamp) {
        var due = 0
        while due < entries.count, entries[due].pts <= position { due += 1 }
        guard due > 1 else { return }
        entries.removeFirst(due - 1)
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
        var due = 0
        while due < entries.count, entries[due].pts <= position { due += 1 }
        guard due > 0 else { return nil }
        let skipped = due - 1 + skippedSinceShown
        droppedFrames += due - 1
        entries.removeFirst(due - 1)
        let entry = entries.removeFirst()
        if let tolerance, position - entry.pts > tolerance {
            droppedFrames += 1
            skippedSinceShown = skipped + 1
            return nil
        }
        skippedSinceShown = 0
        return (entry.frame, entry.pts, skipped)
    }

    /// Every frame due at `position`, in order; frames ending more than `lateBy` before it are dropped.
    public mutating func takeDue(
        at position: MediaTimestamp, lateBy tolerance: Duration, duration: (Frame) -> Duration
    ) -> [(frame: Frame, pts: MediaTimestamp)] {
        var due: [(frame: Frame, pts: MediaTimestamp)] = []
        while let entry = entries.first, entry.pts <= position {
            entries.removeFirst()
            if position - entry.pts > duration(entry.frame) + tolerance {
                droppedFrames += 1
            } else {
                due.append((entry.frame, entry.pts))
            }
        }
        return due
    }

    /// Removes the next frame whatever its time (a real-time audio sink asks for more).
    public mutating func removeFirst() -> (frame: Frame, pts: MediaTimestamp)? {
        entries.popFirst().map { ($0.frame, $0.pts) }
    }

    /// Drops everything (a new connection's decoder, a stop).
    public mutating func removeAll() {
        droppedFrames += entries.count
        entries.removeAll(keepingCapacity: true)
    }
}
