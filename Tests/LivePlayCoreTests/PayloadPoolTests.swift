import LivePlayCore
import Testing

/// The payloads the decoder gives back: reused without an allocation, never shared with a holder.
@Suite struct PayloadPoolTests {
    static func address(_ array: [UInt8]) -> UnsafeRawPointer? {
        array.withUnsafeBytes { $0.baseAddress }
    }

    /// A payload of `count` bytes from `pool`, given back with no one else holding it: its storage's address.
    static func givenBack(_ count: Int, to pool: PayloadPool) -> UnsafeRawPointer? {
        let payload = pool.payload(Array(repeating: 1, count: count)[...])
        pool.giveBack(payload)
        return address(payload)
    }

    @Test func aPayloadGivenBackIsReusedForOneOfItsSize() {
        let pool = PayloadPool()
        let storage = Self.givenBack(1000, to: pool)
        let second = pool.payload(Array(repeating: 2, count: 900)[...])
        #expect(Self.address(second) == storage, "the same storage")
        #expect(second == Array(repeating: 2, count: 900))
    }

    /// A small packet does not hold a big one's storage through the jitter buffer; a keyframe's is not kept.
    @Test func storageMuchLargerThanThePayloadOrTooLargeIsNotUsed() {
        let pool = PayloadPool()
        let storage = Self.givenBack(10_000, to: pool)
        _ = pool.payload(Array(repeating: 2, count: 100)[...])
        #expect(pool.count == 1, "not taken for 100 bytes")
        #expect(Self.address(pool.payload(Array(repeating: 3, count: 9_000)[...])) == storage)
        #expect(pool.count == 0)
        pool.giveBack(Array(repeating: 4, count: PayloadPool.largestKept + 1))
        #expect(pool.count == 0, "a keyframe's storage is not kept")
    }

    /// Someone still holding a payload given back (a recording's queue) keeps its bytes: the reuse copies first.
    @Test func aHolderKeepsItsBytes() {
        let pool = PayloadPool()
        let held = pool.payload(Array(repeating: 7, count: 500)[...])
        pool.giveBack(held)
        let reused = pool.payload(Array(repeating: 8, count: 500)[...])
        #expect(held == Array(repeating: 7, count: 500))
        #expect(reused == Array(repeating: 8, count: 500))
        #expect(Self.address(held) != Self.address(reused))
    }

    /// Full, the oldest goes: what is kept follows the sizes the stream has now.
    @Test func thePoolKeepsAtMostItsCapacityTheNewest() {
        let pool = PayloadPool()
        pool.giveBack(Array(repeating: 0, count: 5_000))
        for _ in 0..<PayloadPool.capacity { pool.giveBack(Array(repeating: 0, count: 256)) }
        #expect(pool.count == PayloadPool.capacity)
        _ = pool.payload(Array(repeating: 1, count: 5_000)[...])
        #expect(pool.count == PayloadPool.capacity, "the 5,000-byte array, the oldest, was let go")
        _ = pool.payload(Array(repeating: 1, count: 256)[...])
        #expect(pool.count == PayloadPool.capacity - 1)
    }
}
