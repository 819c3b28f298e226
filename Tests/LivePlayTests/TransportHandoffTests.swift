import Testing

@testable import LivePlay

@Suite struct TransportHandoffTests {
    @Test func itemsArriveInOrderAndAFullQueueHoldsTheSender() async {
        let handoff = TransportHandoff<Int>(capacity: 2)
        #expect(await handoff.send(1))
        #expect(await handoff.send(2))
        let third = Task { await handoff.send(3) }
        // Time for the third send to find the queue full and wait (nothing to observe that it does).
        try? await Task.sleep(for: .milliseconds(50))
        #expect(handoff.takeAll() == [1, 2])
        #expect(await third.value)
        #expect(handoff.takeAll() == [3])
    }

    @Test func closingWakesEveryoneAndRefusesMore() async {
        let handoff = TransportHandoff<Int>(capacity: 1)
        #expect(await handoff.send(1))
        let blocked = Task { await handoff.send(2) }
        // The waiter's own sleep is what `close` must cut short.
        let waiter = Task { await handoff.wait { try? await Task.sleep(for: .seconds(60)) } }
        // Time for both to block (nothing to observe that they do).
        try? await Task.sleep(for: .milliseconds(20))
        handoff.close()
        #expect(await blocked.value == false)
        await waiter.value
        #expect(await handoff.send(3) == false)
    }

    /// A cancellation racing the waiter's registration must never leave it asleep (a hang seen in the suite).
    @Test func cancellingAWaitAlwaysReturnsPromptly() async {
        let handoff = TransportHandoff<Int>(capacity: 4)
        let start = ContinuousClock.now
        for round in 0..<300 {
            let waiter = Task { await handoff.wait { try? await Task.sleep(for: .seconds(60)) } }
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
