import LivePlayCore
import LivePlayTransport
import Testing

/// The choice of source after a loss, as values (``SourceRotation``).
@Suite struct SourceRotationTests {
    static let refused = TransportError(.connectFailed, "refused")
    static let reset = TransportError(.readFailed, "reset")
    static let notFound = TransportError(.httpStatus, "404", httpStatus: 404)

    @Test func oneSourceIsTheReconnectPolicyAlone() {
        var rotation = SourceRotation(policy: ReconnectPolicy(retryCount: 2, retryInterval: .seconds(1)), sources: 1)
        var policy = ReconnectPolicy(retryCount: 2, retryInterval: .seconds(1))
        for error in [Self.refused, Self.reset, Self.notFound, Self.reset] {
            #expect(rotation.connectionLost(error) == policy.connectionLost())
        }
        #expect(rotation.current == 0)
    }

    @Test func aRefusalOr404EndsTheTurnAtOnceAndALossIsRetriedFirst() {
        let policy = ReconnectPolicy(retryCount: 2, retryInterval: .seconds(1))
        var rotation = SourceRotation(policy: policy, sources: 3)
        #expect(rotation.connectionLost(Self.refused) == .nextSource(1, after: .zero))
        // A reset is retried on the same source, with the interval.
        #expect(rotation.connectionLost(Self.reset) == .retry(attempt: 1, after: .seconds(1)))
        #expect(rotation.connectionLost(Self.notFound) == .nextSource(2, after: .zero))
        // A live stream that ends moves on too; back to the first, which failed before: after the interval.
        #expect(rotation.connectionLost(Self.reset, ended: true) == .nextSource(0, after: .seconds(1)))
        #expect(rotation.current == 0)
    }

    /// Each source has its own retries; a spent one is passed over; −2301 once every one is spent.
    @Test func everySourceHasItsRetriesBeforeGivingUp() {
        var rotation = SourceRotation(policy: ReconnectPolicy(retryCount: 1, retryInterval: .seconds(1)), sources: 2)
        var actions: [ReconnectPolicy.Action] = []
        for _ in 0..<5 {
            let action = rotation.connectionLost(Self.refused)
            actions.append(action)
            if case .giveUp = action { break }
        }
        #expect(actions == [
            .nextSource(1, after: .zero), .nextSource(0, after: .seconds(1)), .nextSource(1, after: .seconds(1)),
            .giveUp(attempts: 2),
        ])
    }

    @Test func aSourceThatPlaysGivesEverySourceItsBudgetBack() {
        var rotation = SourceRotation(policy: ReconnectPolicy(retryCount: 1, retryInterval: .seconds(1)), sources: 2)
        _ = rotation.connectionLost(Self.refused)
        _ = rotation.connectionLost(Self.reset)
        #expect(rotation.current == 1)
        rotation.connectionDelivered(media: .seconds(9))
        #expect(rotation.connectionLost(Self.reset) == .nextSource(0, after: .seconds(1)), "the backup's retry spent")
        rotation.connectionDelivered(media: .seconds(10))
        // Playing again: the first source's next loss is its first, and the backup is fresh.
        #expect(rotation.connectionLost(Self.reset) == .retry(attempt: 1, after: .seconds(1)))
        #expect(rotation.connectionLost(Self.refused) == .nextSource(1, after: .zero))
    }
}
