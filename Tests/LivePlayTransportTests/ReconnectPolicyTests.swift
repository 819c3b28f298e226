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

    /// The one backoff of every retry: the monitor's 2 s doubling to 60 s, the preload pool's 1 s to 30 s, and
    /// TXLivePlayer's fixed interval, all the same value.
    @Test func aBackoffDoublesToItsMaximumAndStartsAgainAfterASuccess() {
        var backoff = Backoff(initial: .seconds(2), maximum: .seconds(60))
        let waits = (0..<7).map { _ in backoff.failed() }
        #expect(waits == [2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) })
        backoff.succeeded()
        #expect(backoff.failed() == .seconds(2))
        var fixed = Backoff(fixed: .seconds(3))
        #expect([fixed.failed(), fixed.failed()] == [.seconds(3), .seconds(3)])
    }
}
