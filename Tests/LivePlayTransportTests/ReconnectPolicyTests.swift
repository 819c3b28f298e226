import LivePlayCore
import LivePlayTransport
import Testing

@Suite struct ReconnectPolicyTests {
    @Test func retriesTheConfiguredNumberOfTimesThenGivesUp() {
        var policy = ReconnectPolicy()
        #expect(policy.connectionLost() == .retry(attempt: 1, after: .seconds(3)))
        #expect(policy.connectionLost() == .retry(attempt: 2, after: .seconds(3)))
        #expect(policy.connectionLost() == .retry(attempt: 3, after: .seconds(3)))
        #expect(policy.connectionLost() == .giveUp(attempts: 3))
        #expect(policy.connectionLost() == .giveUp(attempts: 3))
    }

    @Test func mediaFlowingAgainResetsTheCount() {
        var policy = ReconnectPolicy(retryCount: 2, retryInterval: .milliseconds(200))
        #expect(policy.connectionLost() == .retry(attempt: 1, after: .milliseconds(200)))
        #expect(policy.connectionLost() == .retry(attempt: 2, after: .milliseconds(200)))
        policy.mediaReceived()
        #expect(policy.failedAttempts == 0)
        #expect(policy.connectionLost() == .retry(attempt: 1, after: .milliseconds(200)))
    }

    /// A connection that delivers a little media and is lost (a server that sends a GOP and closes, a trickle) is a
    /// failed attempt: only one that delivered `stableMedia` starts the count again (issue 45).
    @Test func onlyAConnectionThatDeliveredTenSecondsOfMediaResetsTheCount() {
        var policy = ReconnectPolicy(retryCount: 3, retryInterval: .seconds(1))
        #expect(policy.stableMedia == .seconds(10))
        var actions: [ReconnectPolicy.Action] = []
        for _ in 0..<4 {
            policy.connectionDelivered(media: .seconds(2))
            policy.connectionDelivered(media: .milliseconds(9_999))
            actions.append(policy.connectionLost())
        }
        #expect(actions == [
            .retry(attempt: 1, after: .seconds(1)), .retry(attempt: 2, after: .seconds(1)),
            .retry(attempt: 3, after: .seconds(1)), .giveUp(attempts: 3),
        ])
        var recovering = ReconnectPolicy(retryCount: 3, retryInterval: .seconds(1))
        _ = recovering.connectionLost()
        _ = recovering.connectionLost()
        recovering.connectionDelivered(media: .seconds(10))
        #expect(recovering.failedAttempts == 0)
        #expect(recovering.connectionLost() == .retry(attempt: 1, after: .seconds(1)))
    }

    @Test func zeroRetriesGivesUpAtOnce() {
        var policy = ReconnectPolicy(retryCount: 0)
        #expect(policy.connectionLost() == .giveUp(attempts: 0))
    }
}
