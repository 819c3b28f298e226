/// One replica's part of a stream list, chosen without a coordinator by rendezvous (highest random weight) hashing:
/// a stream belongs to the shard whose weight for its ID is highest. N replicas given the same list split it with
/// no overlap and no gap, and going from N to N+1 replicas moves only the streams the new shard wins (about 1/(N+1)
/// of them), none between the old ones (docs/monitoring.md).
///
/// The weight of stream `id` for shard `i` is SplitMix64's finalizer applied to FNV-1a 64 of the UTF-8 bytes of
/// `id`, a 0 byte, and `i` in decimal: stable across machines, processes and Swift versions.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    public init?(index: Int, count: Int) {
        guard count >= 1, (0..<count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// `I/N`, as `--shard` takes it.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else { return nil }
        self.init(index: index, count: count)
    }

    public static let whole = Shard(index: 0, count: 1)!

    public var description: String { "\(index)/\(count)" }

    /// Whether this shard keeps the stream `id`.
    public func owns(_ id: String) -> Bool {
        Self.owner(of: id, among: count) == index
    }

    /// The shard of `count` that keeps `id`.
    public static func owner(of id: String, among count: Int) -> Int {
        var best = 0
        var bestWeight: UInt64 = 0
        for shard in 0..<max(count, 1) {
            let weight = Self.weight(id, shard)
            if shard == 0 || weight > bestWeight {
                best = shard
                bestWeight = weight
            }
        }
        return best
    }

    static func weight(_ id: String, _ shard: Int) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array(id.utf8) + [0] + Array(String(shard).utf8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        hash = (hash ^ (hash >> 30)) &* 0xbf58_476d_1ce4_e5b9
        hash = (hash ^ (hash >> 27)) &* 0x94d0_49bb_1331_11eb
        return hash ^ (hash >> 31)
    }
}
