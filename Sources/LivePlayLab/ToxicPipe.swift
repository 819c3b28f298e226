import LivePlayCore
public import NIOCore

/// One direction of a proxied connection as a state machine: bytes in, paced segments out.
///
/// It decides and the connection acts (STYLE rule 2): ``receive(_:now:)`` queues a read, and
/// ``next(now:destinationWritable:)`` says what to do now — write a segment, wait until an instant,
/// or nothing. Time is passed in, so tests drive it with made-up instants. Byte order is always kept:
/// segments leave in the order the bytes came in.
public struct ToxicPipe: Sendable {
    public enum Step: Sendable, Equatable {
        /// Write these bytes to the destination now (and ask again).
        case write(ByteBuffer)
        /// Nothing may go out before this instant.
        case wait(until: NIODeadline)
        /// Nothing queued.
        case idle
        /// Bytes are queued but the destination is not writable.
        case blocked
        /// The source has ended and everything has gone out: close the destination.
        case finished
    }

    public private(set) var toxics: ToxicSet
    public private(set) var queuedBytes = 0
    /// The source has closed; once drained the pipe finishes.
    public private(set) var sourceEnded = false
    private var queue = CircularBuffer<(bytes: ByteBuffer, releaseAt: NIODeadline)>()
    private var lastRelease = NIODeadline.uptimeNanoseconds(0)
    private var tokens = 0.0
    private var tokensUpdated: NIODeadline?
    private var nextSliceAt = NIODeadline.uptimeNanoseconds(0)
    private var sliceSize: Int?
    private var random: SplitMix64

    public init(toxics: ToxicSet = ToxicSet(), seed: UInt64 = 0x5EED) {
        self.toxics = toxics
        self.random = SplitMix64(seed: seed)
    }

    /// Replaces the toxics; bytes already queued keep the release time they were given.
    public mutating func setToxics(_ toxics: ToxicSet) {
        if toxics.bytesPerSecond != self.toxics.bytesPerSecond { tokensUpdated = nil }
        if toxics.slicer != self.toxics.slicer { sliceSize = nil }
        self.toxics = toxics
    }

    public mutating func receive(_ bytes: ByteBuffer, now: NIODeadline) {
        guard bytes.readableBytes > 0 else { return }
        var delay = toxics.latency
        if toxics.jitter > .zero {
            let span = toxics.jitter.nanoseconds
            delay += .nanoseconds(Int64(random.next() % UInt64(2 * span + 1)) - span)
        }
        let releaseAt = max(now + TimeAmount(max(delay, .zero)), lastRelease)
        lastRelease = releaseAt
        queue.append((bytes, releaseAt))
        queuedBytes += bytes.readableBytes
    }

    public mutating func endOfSource() {
        sourceEnded = true
    }

    /// Drops everything queued (the destination is gone).
    public mutating func discard() {
        queue.removeAll()
        queuedBytes = 0
    }

    public mutating func next(now: NIODeadline, destinationWritable: Bool) -> Step {
        guard let head = queue.first else { return sourceEnded ? .finished : .idle }
        guard destinationWritable else { return .blocked }
        if let until = toxics.stalledUntil {
            if now < until { return .wait(until: until) }
            toxics.stalledUntil = nil
        }
        if head.releaseAt > now { return .wait(until: head.releaseAt) }
        var size = head.bytes.readableBytes
        if let slicer = toxics.slicer {
            if nextSliceAt > now { return .wait(until: nextSliceAt) }
            let slice = sliceSize ?? nextSliceSize(slicer)
            sliceSize = slice
            size = min(size, slice)
        }
        if let rate = toxics.bytesPerSecond {
            let quantum = max(1, min(64 * 1024, rate / 50))
            refill(rate: rate, burst: Double(2 * quantum), now: now)
            let wanted = min(size, quantum)
            if tokens < Double(wanted) {
                let seconds = (Double(wanted) - tokens) / Double(rate)
                return .wait(until: now + .nanoseconds(max(1, Int64((seconds * 1e9).rounded(.up)))))
            }
            size = min(size, Int(tokens))
            tokens -= Double(size)
        }
        var bytes = queue.removeFirst().bytes
        let segment = bytes.readSlice(length: size)!
        if bytes.readableBytes > 0 { queue.prepend((bytes, head.releaseAt)) }
        queuedBytes -= size
        if let slicer = toxics.slicer {
            sliceSize = nil
            nextSliceAt = now + TimeAmount(slicer.delay)
        }
        return .write(segment)
    }

    private mutating func refill(rate: Int, burst: Double, now: NIODeadline) {
        guard let updated = tokensUpdated else {
            tokensUpdated = now
            tokens = burst / 2
            return
        }
        let elapsed = Double((now - updated).nanoseconds) / 1e9
        tokens = min(burst, tokens + elapsed * Double(rate))
        tokensUpdated = now
    }

    private mutating func nextSliceSize(_ slicer: ToxicSet.Slicer) -> Int {
        guard slicer.sizeVariation > 0 else { return slicer.averageSize }
        let span = UInt64(2 * slicer.sizeVariation + 1)
        return max(1, slicer.averageSize - slicer.sizeVariation + Int(random.next() % span))
    }
}

/// A small seedable generator (Steele, Lea, Flood: "Fast splittable pseudorandom number generators"),
/// so jitter and slice sizes are reproducible.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
