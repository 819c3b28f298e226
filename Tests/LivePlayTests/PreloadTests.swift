import Foundation
@testable import LivePlay
import LivePlayLab
import LivePlayTesting
import Testing

@testable import LivePlay

/// Preloaded streams (``PreloadPool``) and ``LivePlayer/switch(to:from:)`` against the lab's live servers: the
/// poster reaches the sink within a tick of the call, nothing of the old stream follows it, the bytes a waiting
/// stream costs follow its budget, and a stream whose server fails is retried and still plays once it is back.
@Suite(.serialized) struct PreloadTests {
    /// A live server looping `fixture`, with or without a GOP cache.
    static func server(_ fixture: Fixture, gopCache: Bool = true, port: Int = 0) async throws -> (LiveFLVServer, String) {
        let server = try LiveFLVServer(
            path: try fixture.path(), configuration: .init(port: port, gopCache: gopCache, threads: 1),
            logger: LabSessionTests.quiet())
        return (server, "http://127.0.0.1:\(try await server.start())/live.flv")
    }

    /// A player recording what it shows (and hears, with `sound`) and what it reports.
    static func player(
        _ configuration: LivePlayConfiguration = LabSessionTests.configuration(retries: 0), sound: Bool = false
    ) -> (LivePlayer, RecordingSink, LivePlayerTests.Listener) {
        let sink = RecordingSink()
        let listener = LivePlayerTests.Listener()
        let player = LivePlayer(configuration: configuration, videoSink: sink, audioSink: sound ? sink : nil)
        player.listener = listener
        return (player, sink, listener)
    }

    static func state(_ pool: PreloadPool, _ url: String) -> PreloadPool.State? {
        pool.statuses.first { $0.url == url }?.state
    }

    @Test(arguments: [true, false]) func aPreloadedStreamShowsItsPosterWithinATickOfTheSwitch(gopCache: Bool) async throws {
        // A: 320×240 with sound; B: 318×238, so every picture says which stream it is.
        let (serverA, urlA) = try await Self.server(.longH264AAC)
        let (serverB, urlB) = try await Self.server(.videoOnly, gopCache: gopCache)
        let pool = PreloadPool(configuration: LabSessionTests.configuration(retries: 3))
        pool.preload(urlB)
        let (player, sink, listener) = Self.player(sound: true)
        try player.startPlay(urlA)
        #expect(await listener.wait(for: .playBegin))
        // Without a GOP cache B is ready at its next keyframe (1 s GOP).
        #expect(await eventually { Self.state(pool, urlB) == .ready }, "B is ready: \(pool.statuses)")
        // A is on screen (its 320×240 pictures), so B's first picture is told apart from what came before.
        #expect(await eventually { sink.pictures.suffix(10).count == 10 && sink.pictures.last?.width == 320 })
        let before = sink.pictures.count
        let called = ContinuousClock.now
        try player.switch(to: urlB, from: pool)
        #expect(pool.statuses.isEmpty, "B left the pool")
        #expect(await listener.wait(for: .switched))
        // B plays on from its poster: 2 s of it at 30 fps, and a net status after the switch.
        let statusesAtSwitch = listener.statuses.count
        _ = await eventually {
            sink.pictures.dropFirst(before).filter { $0.width == 318 }.count >= 60
                && listener.statuses.count > statusesAtSwitch + 1
        }
        await player.stopPlay()
        await pool.removeAll()
        await serverA.stop()
        await serverB.stop()

        let after = sink.pictures.dropFirst(before).drop { $0.width == 320 }
        let first = try #require(after.first, "B's pictures reached the sink")
        let switchTime = first.at - called
        let event = try #require(listener.events.first { $0.code == .switched })
        print("preloaded switch (GOP cache \(gopCache)): first picture \(switchTime.milliseconds) ms after the call; \(event.parameters)")
        #expect(event.parameters["preloaded"] == .bool(true))
        #expect(switchTime < .milliseconds(100), "the poster within a tick or two: \(switchTime)")
        #expect(after.allSatisfy { $0.width == 318 }, "nothing of A after B's first picture")
        #expect(after.count >= 40, "B plays on from its poster (30 fps for 2 s): \(after.count)")
        // Live latency is B's own: at most its 1 s GOP above the 1 s target, no stale media shown as live.
        let latency = try #require(listener.statuses.last?.latencyMilliseconds)
        #expect(latency < 2_100, "B's latency after the switch: \(latency) ms")
        let pts = after.map(\.timing.pts.milliseconds)
        #expect(Set(pts).count == pts.count, "no picture twice (the poster is not shown again when decoded)")
    }

    /// The same through nginx-rtmp with ffmpeg publishing (no GOP cache: B is ready at its next keyframe).
    @Test func rtmpStreamsFromNginxPreloadAndSwitchAsHTTPOnesDo() async throws {
        if let reason = NginxRTMPServer.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("nginx-rtmp is required under CI: \(reason)") }
            return
        }
        let server = try NginxRTMPServer()
        let (urlA, urlB) = (server.url(stream: "a"), server.url(stream: "b"))
        let publishers = [
            try FFmpegPublisher(file: try Fixture.longH264AAC.path(), url: urlA),
            try FFmpegPublisher(file: try Fixture.videoOnly.path(), url: urlB),
        ]
        defer {
            for publisher in publishers { publisher.stop() }
            server.stop()
        }
        let pool = PreloadPool(configuration: RTMPSessionTests.configuration)
        pool.preload(urlB)
        let (player, sink, listener) = Self.player(RTMPSessionTests.configuration)
        try player.startPlay(urlA)
        #expect(await listener.wait(for: .playBegin, timeout: .seconds(15)))
        #expect(await eventually(within: .seconds(15)) { Self.state(pool, urlB) == .ready }, "\(pool.statuses)")
        let before = sink.pictures.count
        let called = ContinuousClock.now
        try player.switch(to: urlB, from: pool)
        #expect(await listener.wait(for: .switched))
        _ = await eventually { sink.pictures.dropFirst(before).filter { $0.width == 318 }.count >= 45 }
        await player.stopPlay()
        await pool.removeAll()
        let after = sink.pictures.dropFirst(before).drop { $0.width == 320 }
        let first = try #require(after.first, "B's pictures reached the sink")
        print("preloaded switch over RTMP: first picture \((first.at - called).milliseconds) ms after the call")
        #expect(first.at - called < .milliseconds(100))
        #expect(after.allSatisfy { $0.width == 318 } && after.count >= 30)
    }

    @Test func aColdSwitchStartsTheStreamAndSaysSo() async throws {
        let (serverA, urlA) = try await Self.server(.longH264AAC)
        let (serverB, urlB) = try await Self.server(.videoOnly)
        let (player, sink, listener) = Self.player()
        try player.startPlay(urlA)
        #expect(await listener.wait(for: .playBegin))
        try player.switch(to: urlB)
        #expect(await listener.wait(for: .switched))
        _ = await eventually { sink.pictures.last?.width == 318 }
        await player.stopPlay()
        await serverA.stop()
        await serverB.stop()
        let event = try #require(listener.events.first { $0.code == .switched })
        #expect(event.parameters["preloaded"] == .bool(false))
        #expect(sink.pictures.last?.width == 318, "B plays")
        print("cold switch: \(event.parameters)")
    }

    /// What waiting costs: `newest-gop` keeps receiving the stream's bitrate; `pause` receives next to nothing
    /// once its first keyframe is in.
    @Test(arguments: PreloadBudget.Reading.allCases) func theBudgetDecidesWhatAWaitingStreamReads(
        reading: PreloadBudget.Reading
    ) async throws {
        let (server, url) = try await Self.server(.longH264AAC)
        let pool = PreloadPool(
            configuration: LabSessionTests.configuration(retries: 3), budget: PreloadBudget(reading: reading))
        pool.preload(url)
        #expect(await eventually { Self.state(pool, url) == .ready })
        // What it reads over five seconds of waiting.
        _ = await eventually(within: .seconds(15)) { (pool.statuses.first?.secondsSinceReady ?? 0) >= 5 }
        let status = try #require(pool.statuses.first)
        await pool.removeAll()
        await server.stop()
        let perSecond = Double(status.bytesSinceReady) / Double(max(1, status.secondsSinceReady))
        print("preloading with \(reading.rawValue): \(Int(perSecond)) bytes/s over \(status.secondsSinceReady) s")
        #expect(status.state == .ready, "still ready: \(status)")
        #expect(status.secondsSinceReady >= 4)
        // The fixture is about 40 kB/s (testsrc2 at 320×240 plus 64 kbit/s AAC).
        switch reading {
        case .newestGroup: #expect(perSecond > 5_000, "it keeps reading the stream")
        case .pauseAfterFirstGroup: #expect(perSecond < 1_000, "it stopped reading")
        }
    }

    /// A byte budget smaller than a GOP: reading stops at it, and what the stream holds stays within it and one
    /// read (the fixture's largest tag is a keyframe of about 10 kB).
    @Test func aSmallBudgetBoundsWhatAWaitingStreamHolds() async throws {
        let (server, url) = try await Self.server(.longH264AAC)
        let budget = PreloadBudget(bytesPerStream: 100_000, totalBytes: 60_000)
        let pool = PreloadPool(configuration: LabSessionTests.configuration(retries: 3), budget: budget)
        pool.preload(url)
        #expect(await eventually { Self.state(pool, url) == .ready })
        var held: [Int] = []
        // What the waiting session holds at the end of every turn of its loop for 3 s: the bound must hold at each,
        // not only at one instant.
        let control = try #require(pool.entry(url)?.control)
        let until = ContinuousClock.now + .seconds(3)
        for await published in control.publications() {
            held.append(published.standbyBytes)
            if ContinuousClock.now >= until { break }
        }
        await pool.removeAll()
        await server.stop()
        print("held with a 60 kB total budget: max \(held.max() ?? -1) bytes")
        #expect(held.max() ?? 0 > 20_000, "it buffers up to its share: \(held)")
        #expect(held.allSatisfy { $0 <= 60_000 + 32_000 }, "the total budget (the one stream's share) holds: \(held)")
    }

    /// A preloaded stream whose server dies, and one whose server stalls: the pool says so (through `onChange`,
    /// never to a player), keeps trying, and a switch to it plays once it is back.
    @Test(arguments: ["dies", "stalls"]) func aFailingPreloadedStreamIsReportedAndPlaysOnceBack(fault: String) async throws {
        var (server, url) = try await Self.server(.longH264AAC)
        let port = try #require(URL(string: url)?.port)
        var proxy: ImpairmentProxy?
        if fault == "stalls" {
            let stalled = ImpairmentProxy(
                upstreamPort: port, timeline: try .parse("at=3s stall=4s"), logger: LabSessionTests.quiet())
            url = "http://127.0.0.1:\(try await stalled.start())/live.flv"
            proxy = stalled
        }
        let pool = PreloadPool(configuration: LabSessionTests.configuration(retries: 1))
        let changes = Locked<[PreloadPool.State]>([])
        pool.onChange = { status in changes.set(changes.get() + [status.state]) }
        pool.preload(url)
        #expect(await eventually { Self.state(pool, url) == .ready })
        if fault == "dies" {
            await server.stop()
            #expect(await eventually { changes.get().contains(.failed) }, "reported: \(changes.get())")
            (server, _) = try await Self.server(.longH264AAC, port: port)
        } else {
            #expect(await eventually { changes.get().contains(.reconnecting) }, "reported: \(changes.get())")
        }
        #expect(await eventually(within: .seconds(20)) { Self.state(pool, url) == .ready }, "ready again: \(changes.get())")
        print("preloaded stream that \(fault): \(changes.get().map(\.rawValue))")
        let (player, sink, listener) = Self.player()
        try player.switch(to: url, from: pool)
        #expect(await listener.wait(for: .playBegin))
        _ = await eventually { sink.pictures.count >= 20 }
        await player.stopPlay()
        await pool.removeAll()
        await proxy?.stop()
        await server.stop()
        #expect(sink.pictures.count >= 20, "it plays once back: \(sink.pictures.count) pictures")
        #expect(!listener.events.contains { $0.code.rawValue < 0 }, "no error reached the player")
    }
}
