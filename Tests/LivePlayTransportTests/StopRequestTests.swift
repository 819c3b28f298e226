import LivePlayTransport
import Testing

/// A stop asked of running work: a race says whether the stop came first; a cancelling run keeps what the work
/// returned once cancelled.
@Suite struct StopRequestTests {
    /// Waits until cancelled, then says whether it was.
    @Sendable static func untilCancelled() async -> String {
        await Latch<Void>().wait()
        return Task.isCancelled ? "cancelled" : "not cancelled"
    }

    @Test func aRaceTheWorkWinsGivesItsValue() async {
        let stop = StopRequest<Void>()
        #expect(await stop.race { 7 } == 7)
    }

    @Test func aRaceTheStopWinsGivesNothingAndCancelsTheWork() async {
        let stop = StopRequest<String>()
        stop.request("enough")
        #expect(await stop.race(Self.untilCancelled) == nil)
        #expect(stop.reason == "enough")
    }

    @Test func aCancellingRunGivesWhatTheCancelledWorkReturned() async {
        let stop = StopRequest<Void>()
        stop.request()
        #expect(await stop.cancelling(Self.untilCancelled) == "cancelled")
    }

    @Test func theFirstReasonWins() {
        let stop = StopRequest<String>()
        stop.request("paused")
        stop.request("cancelled")
        #expect(stop.reason == "paused")
    }
}
