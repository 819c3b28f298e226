import Foundation
import LivePlayTesting
import LivePlayTransport
import Logging
import Testing

@testable import LivePlay

@Suite struct PlaybackThreadTests {
    /// A session's thread is kept when it ends and given to the next: a process that plays one stream after
    /// another keeps one playback thread (and its malloc arena), not one per session.
    @Test func aThreadGivenBackIsTheNextOneTaken() async {
        let first = PlaybackThreads.take()
        PlaybackThreads.giveBack(first)
        let second = PlaybackThreads.take()
        #expect(second === first)
        // Work still runs on it, on its named thread.
        let name = await withTaskExecutorPreference(second) { ThreadNames.current() }
        #expect(name == "liveplay-play")
        PlaybackThreads.giveBack(second)
    }

    @Test func atMostTheIdleLimitWait() {
        let threads = (0..<(PlaybackThreads.idleLimit + 4)).map { _ in PlaybackThreads.take() }
        for thread in threads { PlaybackThreads.giveBack(thread) }
        #expect(PlaybackThreads.idleCount == PlaybackThreads.idleLimit, "the rest were stopped")
    }

    @Test func tasksThatPreferItRunOnItsNamedThread() async {
        let thread = PlaybackThread(name: "lp-test-jobs")
        defer { thread.stop() }
        let names = await withTaskExecutorPreference(thread) {
            var names = [ThreadNames.current()]
            await Task.yield()
            names.append(ThreadNames.current())
            async let child = ThreadNames.current()
            names.append(await child)
            try? await thread.sleep(until: .now + .milliseconds(5))
            names.append(ThreadNames.current())
            return names
        }
        #expect(names == Array(repeating: "lp-test-jobs", count: 4))
    }

    @Test func sleepsWakeInDeadlineOrderAndNeverEarly() async {
        let thread = PlaybackThread(name: "lp-test-sleep")
        defer { thread.stop() }
        let woken = await withTaskExecutorPreference(thread) {
            await withTaskGroup(of: (Int, Duration).self) { group in
                for milliseconds in [60, 20, 40] {
                    group.addTask {
                        let start = ContinuousClock.now
                        try? await thread.sleep(until: start + .milliseconds(milliseconds))
                        return (milliseconds, start.duration(to: .now))
                    }
                }
                var woken: [(Int, Duration)] = []
                for await wake in group { woken.append(wake) }
                return woken
            }
        }
        #expect(woken.map(\.0) == [20, 40, 60])
        for (milliseconds, slept) in woken {
            #expect(slept >= .milliseconds(milliseconds))
            #expect(slept < .milliseconds(milliseconds) + .seconds(2))
        }
    }

    /// A cancellation racing the sleep's registration must never leave it asleep.
    @Test func cancellingASleepAlwaysThrowsPromptly() async {
        let thread = PlaybackThread(name: "lp-test-cancel")
        defer { thread.stop() }
        let start = ContinuousClock.now
        var cancelled = 0
        for round in 0..<300 {
            let sleeper = Task(executorPreference: thread) { () -> Bool in
                do {
                    try await thread.sleep(until: .now + .seconds(60))
                    return false
                } catch {
                    return error is CancellationError
                }
            }
            if round % 3 == 0 { await Task.yield() }
            sleeper.cancel()
            if await sleeper.value { cancelled += 1 }
        }
        #expect(cancelled == 300)
        #expect(ContinuousClock.now - start < .seconds(30))
    }

    @Test func stoppingLetsTheThreadExitAfterItsWork() async {
        let name = "lp-test-exit"
        let thread = PlaybackThread(name: name)
        let ran = await withTaskExecutorPreference(thread) { ThreadNames.current() }
        #expect(ran == name)
        #expect(ThreadNames.inProcess().contains(name))
        thread.stop()
        #expect(await eventually { !ThreadNames.inProcess().contains(name) })
        // Work that still turns up runs, on the shared pool.
        let late = await withTaskExecutorPreference(thread) { ThreadNames.current() }
        #expect(late != name)
    }

    /// A callback timer runs on the thread, in deadline order, never early; a cancelled one never runs, however
    /// many others come and go around it.
    @Test func callbackTimersRunInOrderAndCancelledOnesNever() async {
        let thread = PlaybackThread(name: "lp-test-timer")
        defer { thread.stop() }
        let fired = Locked<[(Int, String, Duration)]>([])
        let start = ContinuousClock.now
        var cancelled: [UInt64] = []
        for milliseconds in [50, 10, 30, 20, 40] {
            _ = thread.schedule(at: start + .milliseconds(milliseconds)) {
                fired.withLock { $0.append((milliseconds, ThreadNames.current(), start.duration(to: .now))) }
            }
            cancelled.append(thread.schedule(at: start + .milliseconds(milliseconds - 5)) {
                fired.withLock { $0.append((-milliseconds, ThreadNames.current(), .zero)) }
            })
        }
        for token in cancelled { thread.cancelTimer(token) }
        _ = await eventually { fired.withLock { $0.count } >= 5 }
        // A timer of the same thread due after the cancelled ones (up to 45 ms after the start): the thread runs its
        // timers in the order they fall due, so once this one has run, a cancelled one would have too.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            _ = thread.schedule(at: start + .milliseconds(60)) { done.resume() }
        }
        let all = fired.withLock { $0 }
        #expect(all.map(\.0) == [10, 20, 30, 40, 50])
        #expect(Set(all.map(\.1)) == ["lp-test-timer"])
        for (milliseconds, _, after) in all { #expect(after >= .milliseconds(milliseconds)) }
    }

    /// A cancelled timer does not wake the thread: the play loop cancels its turn's deadline whenever a read comes
    /// first, and each such deadline once woke the thread for nothing.
    @Test func cancelledTimersDoNotWakeTheThread() async throws {
        let thread = PlaybackThread(name: "lp-test-idle")
        defer { thread.stop() }
        await withTaskExecutorPreference(thread) { await Task.yield() }
        let task = try #require(
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").first { tid in
                (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8)) == "lp-test-idle\n"
            })
        let switches: @Sendable () -> Int? = {
            let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8)
            let line = status?.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            return line.flatMap { Int($0.split(separator: "\t").last ?? "") }
        }
        let start = ContinuousClock.now
        let fired = Latch<Int?>()
        // A live timer after the cancelled ones keeps the thread waiting on a deadline, as a playing session's does,
        // and ends the test: its own wake is the one expected.
        _ = thread.schedule(at: start + .milliseconds(150)) { fired.set(switches()) }
        let cancelled = (1...10).map { index in thread.schedule(at: start + .milliseconds(10 * index)) {} }
        for token in cancelled { thread.cancelTimer(token) }
        let before = try #require(switches())
        let after = try #require(await fired.settled)
        #expect(after - before <= 2, "woken \(after - before) times for 10 cancelled timers")
    }

    /// Sessions given one group share its threads in turn; the group's threads are its own, not the per-session
    /// pool's.
    @Test func aGroupHandsOutItsThreadsInTurn() {
        let group = PlaybackThreadGroup(threads: 2)
        let taken = (0..<6).map { _ in group.take() }
        #expect(taken[0] !== taken[1])
        #expect(taken[0] === taken[2] && taken[2] === taken[4])
        #expect(taken[1] === taken[3] && taken[3] === taken[5])
        #expect(PlaybackThreadGroup(threads: 0).count == 1)
    }

    /// Many sessions on one shared thread all play to the end, every picture presented on that thread. (It once
    /// failed about one run in two beside the suite's other tests: the thread had lost its name to a start-up race,
    /// see `nameCurrentThread(_:)` (LivePlayTransport); the work was on it all along.)
    @Test func sessionsShareAGroupsThread() async throws {
        let body = try Fixtures.bytes(try Fixture.h264AAC.path())
        let server = try ScriptedHTTPServer { _, _ in .init(body: body) }
        var configuration = LivePlayConfiguration(connectRetryCount: 0)
        configuration.threads = PlaybackThreadGroup(threads: 1, name: "lp-test-group")
        let sinks = (0..<4).map { _ in ThreadRecordingSink() }
        let url = "http://127.0.0.1:\(server.port)/live.flv"
        let outcomes = await withTaskGroup(of: PlaybackOutcome.self) { [configuration] group in
            for sink in sinks {
                group.addTask {
                    let session = LiveSession(
                        url: url, configuration: configuration,
                        clock: ContinuousClock(), logger: Logger(label: "test"), videoSink: sink)
                    return await session.run { _ in }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes == Array(repeating: .ended, count: 4))
        for sink in sinks { #expect(sink.names.count > 10) }
        #expect(Set(sinks.flatMap(\.names)) == ["lp-test-group"])
    }

    /// The decoders, and so the sinks, run on the session's thread, not on the cooperative pool.
    @Test func aSessionDecodesAndPresentsOnItsOwnThread() async throws {
        let body = try Fixtures.bytes(try Fixture.h264AAC.path())
        let server = try ScriptedHTTPServer { _, _ in .init(body: body) }
        let sink = ThreadRecordingSink()
        let session = LiveSession(
            url: "http://127.0.0.1:\(server.port)/live.flv", configuration: LivePlayConfiguration(connectRetryCount: 0),
            clock: ContinuousClock(), logger: Logger(label: "test"), videoSink: sink)
        let outcome = await session.run { _ in }
        #expect(outcome == .ended)
        #expect(sink.names.count > 10)
        #expect(Set(sink.names) == ["liveplay-play"])
    }
}

/// Records the OS name of the thread each picture arrives on.
///
/// `@unchecked Sendable`: written only by its session's thread, read after the session ended.
private final class ThreadRecordingSink: VideoSink, @unchecked Sendable {
    private(set) var names: [String] = []

    func present(_ frame: VideoFrame, timing: FrameTiming) {
        names.append(ThreadNames.current())
    }
}
