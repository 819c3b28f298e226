import LivePlayTesting
import Testing

@testable import LivePlay

@Suite struct TransportHandoffTests {
    @Test func itemsArriveInOrderAndAFullQueueHoldsTheSender() async {
        let handoff = TransportHandoff<Int>(capacity: 2)
        #expect(await handoff.send(1))
        #expect(await handoff.send(2))
        let third = Task { await handoff.send(3) }
        #expect(await eventually { handoff.waiting.senders == 1 }, "the third send waits: the queue is full")
        #expect(handoff.takeAll() == [1, 2])
        #expect(await third.value)
        #expect(handoff.takeAll() == [3])
    }

    /// A sender held by a full queue and a receiver waiting on an empty one both wake when their hand-off closes
    /// (one queue cannot have both: a full one does not make its receiver wait).
    @Test func closingWakesEveryoneAndRefusesMore() async {
        let full = TransportHandoff<Int>(capacity: 1)
        #expect(await full.send(1))
        let blocked = Task { await full.send(2) }
        let empty = TransportHandoff<Int>(capacity: 1)
        // The waiter's own clock never moves: only `close` can end its wait.
        let clock = VirtualClock()
        let waiter = Task { await empty.wait { await clock.wait(until: clock.now.advanced(by: .seconds(60))) } }
        #expect(await eventually { full.waiting.senders == 1 && empty.waiting.receiver }, "both wait")
        full.close()
        empty.close()
        #expect(await blocked.value == false)
        await waiter.value
        #expect(await full.send(3) == false)
    }

    /// A cancellation racing the waiter's registration must never leave it asleep (a hang seen in the suite).
    @Test func cancellingAWaitAlwaysReturnsPromptly() async {
        let handoff = TransportHandoff<Int>(capacity: 4)
        let start = ContinuousClock.now
        // A clock that never moves: only the cancellation can end a wait.
        let clock = VirtualClock()
        for round in 0..<300 {
            let waiter = Task { await handoff.wait { await clock.wait(until: clock.now.advanced(by: .seconds(60))) } }
            if round % 3 == 0 { await Task.yield() }
            waiter.cancel()
            await waiter.value
            let sender = Task { () -> Bool in
                while await handoff.send(round) {}
                return false
            }
            sender.cancel()
            _ = await sender.value
            _ = handoff.takeAll()
        }
        #expect(ContinuousClock.now - start < .seconds(30))
    }
}
