import LivePlayTesting
import Synchronization
import Testing

@testable import LivePlayTransport

/// A value set once, awaited by many: what a stop request and a player's owned task are made of.
@Suite struct LatchTests {
    @Test func theFirstValueWinsAndWakesEveryWaiter() async {
        let latch = Latch<Int>()
        async let first = latch.settled
        async let second = latch.settled
        latch.set(1)
        latch.set(2)
        #expect(await first == 1)
        #expect(await second == 1)
        #expect(latch.value == 1)
    }

    @Test func aCancelledWaitReturnsWithoutAValue() async {
        let latch = Latch<Int>()
        let waiter = Task { await latch.wait() }
        waiter.cancel()
        await waiter.value
        #expect(latch.value == nil)
    }

    @Test func oneWaitersCancellationWakesNoOtherWaiter() async {
        let latch = Latch<Int>()
        let woken = Mutex(false)
        let settled = Task {
            let value = await latch.settled
            woken.withLock { $0 = true }
            return value
        }
        let cancelled = Task { await latch.wait() }
        // Both waiting, then one gives up: the other still waits for the value.
        #expect(await eventually { latch.waiting == 2 })
        cancelled.cancel()
        await cancelled.value
        #expect(woken.withLock { $0 } == false)
        latch.set(7)
        #expect(await settled.value == 7)
    }
}
