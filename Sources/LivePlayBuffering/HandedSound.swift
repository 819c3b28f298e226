public import LivePlayCore

/// The sound a real-time sink was given, newest block last: how long each block plays, and the stretch of stream
/// time it carries. A block time-stretched at 1.2× plays for 1 / 1.2 of what it carries, and a stretcher holds back
/// some input (its latency), so what the sink still holds unplayed is read back as stream time block by block, each
/// at its own rate, never at the rate of the moment.
///
/// Kept in a ring of fixed size: the sink holds a few blocks (the player keeps ~120 ms queued), and a block older
/// than the ring is read at 1× from the oldest kept. Nothing is allocated per block.
public struct HandedSound: Sendable {
    private struct Block {
        var plays: Duration
        var from: Double
        var to: Double
    }

    public static let capacity = 32
    private var blocks: [Block] = []
    /// Where the next block goes once the ring is full.
    private var next = 0

    public init() {
        blocks.reserveCapacity(Self.capacity)
    }

    /// The newest block's end: stream time where what was handed ends.
    public private(set) var end: MediaTimestamp?

    /// A block given to the sink: it plays for `plays` and carries stream time from `from` to `to` (in milliseconds,
    /// fractional, as the stretcher's input and latency give them).
    public mutating func handed(plays: Duration, from: Double, to: Double) {
        let block = Block(plays: plays, from: from, to: max(from, to))
        if blocks.count < Self.capacity {
            blocks.append(block)
        } else {
            blocks[next] = block
            next = (next + 1) % Self.capacity
        }
        end = MediaTimestamp(milliseconds: Int64(block.to.rounded()))
    }

    /// Forgets every block (a seek, a reset).
    public mutating func removeAll() {
        blocks.removeAll(keepingCapacity: true)
        next = 0
        end = nil
    }

    /// Stream time being heard while `unplayed` of what was handed is still to play; nil before the first block.
    public func heard(unplayed: Duration) -> MediaTimestamp? {
        guard !blocks.isEmpty else { return nil }
        var left = unplayed / .milliseconds(1)
        var oldest = blocks[next]
        for offset in 1...blocks.count {
            let block = blocks[(next - offset + blocks.count) % blocks.count]
            let plays = block.plays / .milliseconds(1)
            if left <= plays {
                let carried = plays > 0 ? (block.to - block.from) * left / plays : 0
                return MediaTimestamp(milliseconds: Int64((block.to - carried).rounded()))
            }
            left -= plays
            oldest = block
        }
        return MediaTimestamp(milliseconds: Int64((oldest.from - left).rounded()))
    }
}
