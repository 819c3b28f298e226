public import LivePlayCore

/// Decoded frames waiting for their presentation time, in presentation order, with a hard count limit.
///
/// Decoding runs a little ahead of the clock (the engine's look-ahead), so frames wait here until the
/// position reaches them. Video takes ``nextDue(at:)``: the newest frame that is due, the older due ones
/// being late and dropped (a slow tick or decode shows the right picture, not a backlog). Audio takes
/// ``takeDue(at:lateBy:)``: every due block in order, except blocks so late they would put sound behind
/// the picture. Generic over the frame so it holds libavcodec frames without knowing them.
public struct PresentationQueue<Frame: Sendable>: Sendable {
    /// Frames held at most; past it the oldest is dropped (the decoder outran the clock).
    public let capacity: Int
    private var entries: [(pts: MediaTimestamp, frame: Frame)] = []
    private var head = 0
    /// Frames dropped so far: late, over capacity, or cleared.
    public private(set) var droppedFrames = 0
    /// Stale frames dropped since the last one returned by ``nextDue(at:lateBy:)``.
    private var staleDropped = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "a presentation queue holds at least one frame")
        self.capacity = capacity
    }

    public var count: Int { entries.count - head }
    public var isEmpty: Bool { count == 0 }
    /// Presentation time of the next frame.
    public var nextPTS: MediaTimestamp? { head < entries.count ? entries[head].pts : nil }

    /// Adds a frame in presentation order (decoders emit in order; a stray one is placed where it belongs).
    public mutating func insert(_ frame: Frame, pts: MediaTimestamp) {
        if count >= capacity {
            head += 1
            droppedFrames += 1
        }
        var index = entries.endIndex
        while index > head, entries[index - 1].pts > pts { index -= 1 }
        entries.insert((pts, frame), at: index)
        compact()
    }

    /// The newest frame due at `position`, and how many older due frames it replaces (dropped as late).
    ///
    /// - Parameter tolerance: a newest frame further behind `position` than this is stale (a decoder that
    ///   released old pictures late, after an error): it is dropped too, not shown out of time, and counted
    ///   in the `skipped` of the next frame returned.
    public mutating func nextDue(
        at position: MediaTimestamp, lateBy tolerance: Duration? = nil
    ) -> (frame: Frame, pts: MediaTimestamp, skipped: Int)? {
        var newest: Int?
        var index = head
        while index < entries.count, entries[index].pts <= position {
            newest = index
            index += 1
        }
        guard let newest else { return nil }
        let skipped = newest - head + staleDropped
        droppedFrames += newest - head
        let entry = entries[newest]
        head = newest + 1
        compact()
        if let tolerance, position - entry.pts > tolerance {
            droppedFrames += 1
            staleDropped = skipped + 1
            return nil
        }
        staleDropped = 0
        return (entry.frame, entry.pts, skipped)
    }

    /// Every frame due at `position`, in order; frames ending more than `lateBy` before it are dropped.
    public mutating func takeDue(
        at position: MediaTimestamp, lateBy tolerance: Duration, duration: (Frame) -> Duration
    ) -> [(frame: Frame, pts: MediaTimestamp)] {
        var due: [(frame: Frame, pts: MediaTimestamp)] = []
        while head < entries.count, entries[head].pts <= position {
            let entry = entries[head]
            head += 1
            if position - entry.pts > duration(entry.frame) + tolerance {
                droppedFrames += 1
            } else {
                due.append((entry.frame, entry.pts))
            }
        }
        compact()
        return due
    }

    /// Removes the next frame whatever its time (a real-time audio sink asks for more).
    public mutating func removeFirst() -> (frame: Frame, pts: MediaTimestamp)? {
        guard head < entries.count else { return nil }
        let entry = entries[head]
        head += 1
        compact()
        return (entry.frame, entry.pts)
    }

    /// Drops everything (a new connection's decoder, a stop).
    public mutating func removeAll() {
        droppedFrames += count
        entries.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Reclaims consumed slots once they are the larger part, so storage stays within about twice the capacity.
    private mutating func compact() {
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 32, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}
