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

    @Test func zeroRetriesGivesUpAtOnce() {
        var policy = ReconnectPolicy(retryCount: 0)
        #expect(policy.connectionLost() == .giveUp(attempts: 0))
    }
}
