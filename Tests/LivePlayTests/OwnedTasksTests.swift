import LivePlayTesting
import LivePlayTransport
import Synchronization
import Testing

@testable import LivePlay

/// The run of a player or a pool: its jobs are children of one task, stopped through their handles, and a job taken
/// by someone else runs on after its owner is gone.
@Suite struct OwnedTasksTests {
    /// Waits until cancelled, then says so: as a playback ends `.stopped`.
    @Sendable static func untilCancelled() async -> String {
        await Latch<Void>().wait()
        return Task.isCancelled ? "stopped" : "not cancelled"
    }

    @Test func aJobEndsAsItsWorkDoesAndIsAwaitedByAnyNumber() async {
        let tasks = OwnedTasks()
        let job = tasks.start { 42 }
        async let first = job.value
        async let second = job.value
        #expect(await first == 42)
        #expect(await second == 42)
    }

    @Test func aCancelledJobEndsWithWhatItsWorkReturnsWhenCancelled() async {
        let tasks = OwnedTasks()
        let job = tasks.start(Self.untilCancelled)
        job.cancel()
        #expect(await job.value == "stopped")
    }

    @Test func aJobRunsOnAfterItsOwnerIsReleased() async {
        var tasks: OwnedTasks? = OwnedTasks()
        let release = Latch<Void>()
        let job = tasks!.start {
            await release.settled
            return Task.isCancelled ? "cancelled" : "ran on"
        }
        tasks = nil
        release.set(())
        #expect(await job.value == "ran on")
    }

    @Test func aCallerThatIsCancelledWaitsOnForTheJob() async {
        let tasks = OwnedTasks()
        let release = Latch<Void>()
        let job = tasks.start {
            await release.settled
            return "ended"
        }
        let caller = Task { await job.value }
        caller.cancel()
        release.set(())
        #expect(await caller.value == "ended")
    }
}
