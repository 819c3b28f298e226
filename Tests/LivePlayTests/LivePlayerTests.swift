import Foundation
@testable import LivePlay
import LivePlayLab
import LivePlayTesting
import Testing

/// The front-end API: TXLivePlayer-shaped calls, the listener off the playback path, the async face.
@Suite struct LivePlayerTests {
    /// Records what a listener gets; can block on the first event to play a listener that hangs.
    final class Listener: LivePlayListener, @unchecked Sendable {
        private let lock = NSLock()
        private var storedEvents: [PlayEvent] = []
        private var storedStatuses: [NetStatus] = []
        private let blockFirstEventFor: Duration?

        init(blockFirstEventFor: Duration? = nil) {
            self.blockFirstEventFor = blockFirstEventFor
        }

        var events: [PlayEvent] { lock.withLock { storedEvents } }
        var statuses: [NetStatus] { lock.withLock { storedStatuses } }

        func onPlayEvent(_ event: PlayEvent) {
            let first = lock.withLock {
                storedEvents.append(event)
                return storedEvents.count == 1
            }
            // The behaviour under test: a listener that blocks its thread.
            if first, let blockFirstEventFor { Thread.sleep(forTimeInterval: blockFirstEventFor.seconds) }
        }

        func onNetStatus(_ status: NetStatus) {
            lock.withLock { storedStatuses.append(status) }
        }

        func wait(for code: PlayEventCode, count: Int = 1, timeout: Duration = .seconds(10)) async -> Bool {
            await eventually(within: timeout) { events.filter { $0.code == code }.count >= count }
        }
    }

    @Test func startPlayStopPlayAndTheListener() async throws {
        let (server, port) = try await LabSessionTests.server()
        let listener = Listener()
        let player = LivePlayer(configuration: LabSessionTests.configuration(retries: 0))
        player.listener = listener
        #expect(!player.isPlaying)
        try player.startPlay("http://127.0.0.1:\(port)/live.flv", type: .flv)
        #expect(player.isPlaying)
        #expect(await listener.wait(for: .playBegin))
        #expect(await eventually { listener.statuses.count >= 2 }, "once a second")
        await player.stopPlay()
        await server.stop()
        #expect(!player.isPlaying)
        #expect(listener.events.last?.code == .sessionSummary, "stopPlay returns once the summary is delivered")
        #expect(listener.statuses.count >= 2, "once a second")
        #expect(listener.statuses.allSatisfy { $0.serverAddress == "127.0.0.1:\(port)" })
    }

    @Test func aURLOfTheWrongKindIsRefusedAtOnce() {
        let player = LivePlayer()
        // Files are media on demand now, but not RTMP; and a port out of range is refused before anything runs.
        #expect(throws: LivePlayError.self) { try player.startPlay("file:///etc/passwd", type: .rtmp) }
        #expect(throws: LivePlayError.self) { try player.startPlay("http://127.0.0.1:99999/live.flv") }
        #expect(throws: LivePlayError.self) { try player.startPlay("http://127.0.0.1:1/live.flv", type: .rtmp) }
        #expect(throws: LivePlayError.self) { try player.startPlay("gopher://127.0.0.1/x") }
        #expect(!player.isPlaying)
    }

    @Test func aBlockingListenerNeverStallsPlayback() async throws {
        let (server, port) = try await LabSessionTests.server()
        // The listener hangs for 5 s on its first event; pictures must keep coming meanwhile.
        let listener = Listener(blockFirstEventFor: .seconds(5))
        let sink = RecordingSink()
        let player = LivePlayer(configuration: LabSessionTests.configuration(retries: 0), videoSink: sink, audioSink: sink)
        player.listener = listener
        try player.startPlay("http://127.0.0.1:\(port)/live.flv")
        #expect(await eventually(within: .seconds(20)) { !listener.events.isEmpty })
        let blockedAt = ContinuousClock.now
        // Playback begins after about 1 s of cache and runs at 25 fps while the listener sleeps: 15 pictures come
        // well inside the 5 s it blocks.
        _ = await eventually(within: .seconds(4)) { sink.pictures.count >= 15 }
        let shownWhileBlocked = sink.pictures.count
        let stillBlocked = listener.events.count == 1 && ContinuousClock.now - blockedAt < .seconds(5)
        #expect(await listener.wait(for: .playBegin, timeout: .seconds(10)))
        await player.stopPlay()
        await server.stop()
        #expect(stillBlocked, "still inside the first callback")
        // Playback began after about 1 s of cache and ran at 25 fps while the listener slept.
        #expect(shownWhileBlocked >= 15, "\(shownWhileBlocked) pictures while it was blocked")
        let codes = listener.events.map(\.code)
        #expect(codes.first == .connectSucceeded && codes.contains(.playBegin), "delivered late but in order: \(codes)")
    }

    @Test func aListenerThatFallsBehindIsToldHowMuchItMissed() async {
        let listener = GatedListener()
        defer { listener.thread.stop() }
        let delivery = listener.delivery
        // The delivery thread takes at most a full queue (capacity) as its first batch, however late it starts,
        // and the queue then holds at most capacity more: posting 2 × capacity + 100 always overflows.
        let posted = 2 * UpdateDelivery.capacity + 100
        let start = ContinuousClock.now
        for index in 0..<posted {
            delivery.post(.event(PlayEvent(.playProgress, "\(index)", elapsedMilliseconds: Int64(index))))
        }
        #expect(ContinuousClock.now - start < .seconds(1), "posting never waits for the listener")
        listener.open()
        await delivery.finish()
        let events = listener.delivered.value.compactMap { update -> PlayEvent? in
            if case .event(let event) = update { event } else { nil }
        }
        // One overflow event per batch that followed drops: one or two here, their counts adding up.
        let overflows = events.filter { $0.code == .listenerOverflow }
        #expect((1...2).contains(overflows.count))
        let dropped = overflows.reduce(Int64(0)) { total, event in
            if case .int(let value)? = event.parameters["dropped_updates"] { total + value } else { total }
        }
        #expect(dropped >= 100)
        // Every update posted was either delivered or counted as dropped.
        #expect(Int64(events.count - overflows.count) + dropped == Int64(posted))
        #expect(events.last?.message == "\(posted - 1)", "the newest survive")
    }

    /// A full queue drops the oldest state (or net status) before any event: a later state tells the same, an event
    /// lost is lost.
    @Test func aFullQueueDropsStatesBeforeEvents() async {
        let listener = GatedListener()
        defer { listener.thread.stop() }
        let delivery = listener.delivery
        // Three states to an event, and fewer events than the queue holds: a full queue always holds a state to drop.
        // (Events alone past the capacity are dropped too, oldest first: they cannot all be kept.)
        let count = UpdateDelivery.capacity - 10
        for index in 0..<count {
            for _ in 0..<3 {
                var state = PlaybackState()
                state.volume = index % 101
                delivery.post(.state(state))
            }
            delivery.post(.event(PlayEvent(.playProgress, "\(index)", elapsedMilliseconds: Int64(index))))
        }
        listener.open()
        await delivery.finish()
        let events = listener.delivered.value.compactMap { update -> PlayEvent? in
            if case .event(let event) = update, event.code == .playProgress { event } else { nil }
        }
        let states = listener.delivered.value.filter { if case .state = $0 { true } else { false } }
        #expect(events.map(\.message) == (0..<count).map { "\($0)" }, "every event delivered, in order")
        // At most a first batch and a full queue are delivered: the rest of the 3 × count states made room.
        #expect(states.count <= 2 * UpdateDelivery.capacity, "\(states.count) of \(3 * count) states delivered")
    }

    @Test func theAsyncFaceStreamsUpdatesAndCancellationStops() async throws {
        let (server, port) = try await LabSessionTests.server()
        let player = LivePlayer(configuration: LabSessionTests.configuration(retries: 0))
        let updates = player.updates()
        let playing = Task { await player.run(url: "http://127.0.0.1:\(port)/live.flv") }
        var sawBegin = false
        var statuses = 0
        for await update in updates {
            switch update {
            case .event(let event) where event.code == .playBegin: sawBegin = true
            case .netStatus: statuses += 1
            default: break
            }
            if sawBegin && statuses >= 2 { break }
        }
        playing.cancel()
        #expect(await playing.value == .stopped)
        await server.stop()
        #expect(sawBegin)
    }

    @Test func pauseHoldsAndResumeJumpsToTheLiveEdge() async throws {
        let (server, port) = try await LabSessionTests.server()
        let listener = Listener()
        let player = LivePlayer(configuration: LabSessionTests.configuration(retries: 0))
        player.listener = listener
        try player.startPlay("http://127.0.0.1:\(port)/live.flv")
        #expect(await listener.wait(for: .playBegin))
        player.pause()
        #expect(await listener.wait(for: .paused))
        // The stream keeps arriving while paused: the status says so once 2.5 s more are buffered.
        _ = await eventually { (listener.statuses.last { $0.state == "paused" }?.cacheMilliseconds ?? 0) > 2500 }
        let paused = listener.statuses.last
        player.resume()
        #expect(await listener.wait(for: .resumed))
        #expect(await listener.wait(for: .playBegin, count: 2))
        await player.stopPlay()
        await server.stop()
        #expect(paused?.state == "paused")
        #expect((paused?.cacheMilliseconds ?? 0) > 2500, "the stream kept arriving while paused")
        let resumed = try #require(listener.events.first { $0.code == .resumed })
        if case .int(let latency)? = resumed.parameters["latency_ms"] {
            #expect(latency < 2500, "resumed near the live edge, not where it paused")
        }
    }
}

/// A value behind a lock, for test closures.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}

/// A listener that blocks until ``open()``: what it was delivered then, through an ``UpdateDelivery`` on a thread of its
/// own; each delivery passes the opened gate on to the next.
final class GatedListener: Sendable {
    private let gate = DispatchSemaphore(value: 0)
    let delivered = LockedBox<[PlayerUpdate]>([])
    let thread = PlaybackThread(name: "test-listener")
    let delivery: UpdateDelivery

    init() {
        delivery = UpdateDelivery(on: thread) { [gate, delivered] update in
            gate.wait()
            gate.signal()
            delivered.mutate { $0.append(update) }
        }
    }

    func open() { gate.signal() }
}
