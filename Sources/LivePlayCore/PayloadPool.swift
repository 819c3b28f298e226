import Synchronization

/// Packet payloads given back once decoded, for the demuxer's next packets: steady playback then allocates no
/// array per packet (issue 50).
///
/// Safe whoever else still holds a payload given back (a recording's queue, a device decoder's replay): arrays are
/// values, so the demuxer writing into a shared one copies it first, as any array would. A payload's storage is
/// kept only up to ``largestKept`` bytes (a keyframe's goes), and one is reused only for a payload of at least half
/// its capacity: a small packet does not hold a big one's storage through the jitter buffer. Shared by a session's
/// transport task, which takes, and its play loop, which gives back; hence the `Mutex`.
public final class PayloadPool: Sendable {
    /// More than the packets decoded between two reads.
    public static let capacity = 16
    public static let largestKept = 64 << 10
    private let arrays = Mutex<[[UInt8]]>([])

    public init() {
        arrays.withLock { $0.reserveCapacity(Self.capacity) }
    }

    /// How many arrays are kept now.
    public var count: Int { arrays.withLock(\.count) }

    /// `bytes` in an array given back, when one fits them; else in a new one.
    public func payload(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        let count = bytes.count
        // Bound straight to a `var`: a second binding would hold the storage too, and emptying it would copy.
        guard
            var array = arrays.withLock({ arrays -> [UInt8]? in
                // The oldest given back first: the likeliest to be held by nobody now.
                guard let index = Self.fitting(count, in: arrays) else { return nil }
                return arrays.remove(at: index)
            })
        else { return Array(bytes) }
        array.removeAll(keepingCapacity: true)
        array.append(contentsOf: bytes)
        return array
    }

    /// The oldest array given back that fits `count` bytes. A plain loop over the buffer: a collection's
    /// generic iteration allocates on each step in a debug build, which `AllocationCountTests` counts.
    private static func fitting(_ count: Int, in arrays: [[UInt8]]) -> Int? {
        arrays.withUnsafeBufferPointer { arrays in
            var index = 0
            while index < arrays.count {
                let capacity = arrays[index].capacity
                if count <= capacity, capacity <= 2 * count + 64 { return index }
                index += 1
            }
            return nil
        }
    }

    /// Keeps `payload`'s storage for a later ``payload(_:)`` if it is small enough, in place of the oldest kept
    /// when the pool is full.
    public func giveBack(_ payload: [UInt8]) {
        guard payload.capacity <= Self.largestKept, payload.capacity > 0 else { return }
        // The array is emptied when reused, not here: emptying a payload the caller still holds would copy it.
        arrays.withLock { arrays in
            // Full, the oldest goes: what is kept follows the sizes the stream has now.
            if arrays.count == Self.capacity { arrays.removeFirst() }
            arrays.append(payload)
        }
    }
}
