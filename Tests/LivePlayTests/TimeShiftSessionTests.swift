import Foundation
import LivePlay
import LivePlayLab
import LivePlayTesting
import Testing

/// Time-shift against the lab's live stream in real time, measured with its wall-clock stamps: how far behind the
/// server's clock the picture shown is (`e2e_latency_ms` of each progress event).
@Suite struct TimeShiftSessionTests {
    static func latency(_ event: PlayEvent) -> Int64? {
        if case .int(let value) = event.parameters["e2e_latency_ms"] { value } else { nil }
    }

    static func double(_ event: PlayEvent, _ key: String) -> Double? {
        switch event.parameters[key] {
        case .double(let value)?: value
        case .int(let value)?: Double(value)
        default: nil
        }
    }

    /// Plays `before` of the stream, goes back `back`, plays `behind` there, goes live, then seeks to before the
    /// window's start; the window is `window`.
    static func run(before: Int64, back: Int64, behind: Int64, window: Int64) async throws {
        let (server, port) = try await LabSessionTests.server()
        let parent = FileManager.default.temporaryDirectory.path + "/timeshift-test-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        var configuration = LatencyModeSessionTests.configuration(.preset(.speed))
        configuration.timeShift = TimeShiftRing.Options(window: .seconds(window), directory: parent, minimumFreeSpace: 0)
        let marks = Locked<[String: Int64]>([:])
        let largestRing = Locked<Int>(0)
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: configuration,
            limit: .milliseconds(before + behind + 30_000),
            script: { probe in
                func now() -> Int64 { probe.events.last?.elapsedMilliseconds ?? 0 }
                func mark(_ name: String) { marks.withLock { $0[name] = now() } }
                func progressAfter(_ ms: Int64) -> Bool {
                    probe.events.contains { $0.code == .playProgress && $0.elapsedMilliseconds > ms }
                }
                func ringFiles() -> Int {
                    let ring = (try? FileManager.default.contentsOfDirectory(atPath: parent))?.first
                    let files = ring.flatMap { try? FileManager.default.contentsOfDirectory(atPath: parent + "/" + $0) }
                    return files?.count ?? 0
                }
                await probe.wait(for: .playBegin)
                mark("began")
                let began = now()
                _ = await eventually(within: .milliseconds(before + 10_000)) {
                    largestRing.withLock { $0 = max($0, ringFiles()) }
                    return progressAfter(began + before)
                }
                mark("seek")
                probe.control.send(.seekBy(.milliseconds(-back)))
                await probe.wait(for: .seekDone)
                let landed = now()
                _ = await eventually(within: .milliseconds(behind + 10_000)) {
                    largestRing.withLock { $0 = max($0, ringFiles()) }
                    return progressAfter(landed + behind)
                }
                mark("live")
                probe.control.send(.goToLiveEdge)
                let live = now()
                _ = await eventually(within: .seconds(10)) { progressAfter(live + 4_000) }
                mark("clamp")
                probe.control.send(.seekBy(.seconds(-100_000)))
                await probe.wait(for: .seekDone, count: 2)
                let clamped = now()
                _ = await eventually(within: .seconds(10)) { progressAfter(clamped + 3_000) }
                probe.stop()
            })
        await server.stop()
        let marked = marks.withLock { $0 }
        let (seek, live, clamp) = (try #require(marked["seek"]), try #require(marked["live"]), try #require(marked["clamp"]))
        let progress = recording.events.filter { $0.code == .playProgress }
        func latencies(_ range: Range<Int64>) -> [Int64] {
            progress.filter { range.contains($0.elapsedMilliseconds) }.compactMap(Self.latency)
        }
        let atLive = latencies((seek - 5_000)..<seek)
        #expect(atLive.count >= 3, "e2e latency comes from the lab's wall-clock stamps")
        let baseline = atLive.sorted()[atLive.count / 2]
        #expect(baseline < 2_000, "speed plays about 1 s behind: \(atLive)")

        // Behind: the picture is `back` older (± 0.5 s), and stays so (1.0×) until going live.
        let done = try #require(recording.events.first { $0.code == .seekDone })
        let behindLatencies = latencies((done.elapsedMilliseconds + 1_500)..<live)
        #expect(behindLatencies.count >= Int(behind / 1000) - 3, "\(behindLatencies)")
        #expect(behindLatencies.allSatisfy { abs($0 - baseline - back) <= 500 }, "baseline \(baseline): \(behindLatencies)")
        let rates = progress.filter { (done.elapsedMilliseconds + 1_500..<live).contains($0.elapsedMilliseconds) }
            .compactMap { Self.double($0, "rate") }
        #expect(!rates.isEmpty && rates.allSatisfy { $0 == 1.0 }, "1.0× behind: \(rates)")
        let behindLive = progress.filter { (done.elapsedMilliseconds + 1_500..<live).contains($0.elapsedMilliseconds) }
            .compactMap { Self.double($0, "behind_live_ms") }
        #expect(behindLive.allSatisfy { abs($0 - Double(back)) <= 2_000 }, "\(behindLive)")

        // Go live: back to the target within 2 s, told as a skip.
        let skip = try #require(recording.events.first { $0.code == .catchUpSkip && $0.elapsedMilliseconds >= live })
        #expect(skip.elapsedMilliseconds - live < 2_000)
        let afterLive = latencies((live + 2_000)..<clamp)
        #expect(!afterLive.isEmpty && afterLive.allSatisfy { $0 <= baseline + 700 }, "baseline \(baseline): \(afterLive)")

        // A seek to before the window's start lands at its start: at least the window behind, at most a segment more.
        let segment = TimeShiftRing.Options(window: .seconds(window)).segmentLength.milliseconds
        let clamped = latencies((clamp + 2_000)..<Int64.max)
        #expect(!clamped.isEmpty, "progress after the clamped seek")
        #expect(
            clamped.allSatisfy { $0 >= window * 1000 - 1_000 && $0 <= window * 1000 + segment + 2_500 },
            "window \(window) s: \(clamped)")
        print(
            "time-shift: e2e at live \(baseline) ms; back \(back) ms: \(behindLatencies); live: \(afterLive);"
                + " clamped: \(clamped); ring files at most \(largestRing.withLock { $0 })")
        #expect(!recording.codes.contains(-2301))
        // The ring: never more segment files than the window and two segments hold; removed at the end.
        #expect(largestRing.withLock { $0 } <= Int(window * 1000 / segment) + 2, "\(largestRing.withLock { $0 }) files")
        #expect((try FileManager.default.contentsOfDirectory(atPath: parent)).isEmpty, "the ring is removed at the end")
    }

    /// The bound on a real stream: three minutes of the lab's live stream through the recorder into a ring
    /// with a one-minute window. The lab sends it at 4×, so the run takes 45 s, not 3 minutes; the ring sees the
    /// same tags, timestamps and segment cuts as at 1×. Sampled every 10 ms, the ring's directory never holds more
    /// files than the window and two segments, nor more bytes than 75 s of the stream; the window the progress
    /// events report reaches the minute and never passes it by more than a segment (and the keyframe interval a
    /// segment's cut may wait: the unit test's stream has keyframes on the segment boundaries, this one does not).
    @Test func threeMinutesOfALiveStreamKeepAOneMinuteRingBounded() async throws {
        let path = try Fixture.h264AAC.path()
        var lab = LiveFLVServer.Configuration(port: 0, threads: 1, wallClockInterval: nil)
        lab.speed = 4
        let server = try LiveFLVServer(path: path, configuration: lab, logger: LabSessionTests.quiet())
        let port = try await server.start()
        let parent = FileManager.default.temporaryDirectory.path + "/timeshift-bound-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        var configuration = LatencyModeSessionTests.configuration(.preset(.speed))
        let window: Int64 = 60
        configuration.timeShift = TimeShiftRing.Options(
            window: .seconds(window), directory: parent, minimumFreeSpace: 0)
        let loopPeriod = Int64(server.program.loopPeriod)
        let largest = Locked<(files: Int, bytes: Int64)>((0, 0))
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: configuration, limit: .seconds(90),
            script: { probe in
                await probe.wait(for: .playBegin)
                // Until three minutes of stream have gone out (the loops the lab has played).
                _ = await eventually(within: .seconds(75)) {
                    let ring = (try? FileManager.default.contentsOfDirectory(atPath: parent))?.first
                        .map { parent + "/" + $0 }
                    let files = ring.flatMap { try? FileManager.default.contentsOfDirectory(atPath: $0) } ?? []
                    let bytes = files.reduce(Int64(0)) { total, file in
                        let size = (try? FileManager.default.attributesOfItem(atPath: ring! + "/" + file))?[.size]
                        return total + ((size as? NSNumber)?.int64Value ?? 0)
                    }
                    largest.withLock { $0 = (max($0.files, files.count), max($0.bytes, bytes)) }
                    return server.statistics.completedLoops * loopPeriod >= 180_000
                }
                probe.stop()
            })
        await server.stop()
        let sent = server.statistics.completedLoops * loopPeriod
        #expect(sent >= 180_000, "three minutes of stream went out: \(sent) ms")
        let windows = recording.events.filter { $0.code == .playProgress }
            .compactMap { Self.double($0, "EVT_PLAY_DURATION") }
        let segment = TimeShiftRing.Options(window: .seconds(window)).segmentLength.milliseconds
        let fileSize = try #require((try FileManager.default.attributesOfItem(atPath: path))[.size] as? NSNumber)
        let bytesPerSecond = fileSize.doubleValue * 1000 / Double(loopPeriod)
        let (files, bytes) = largest.withLock { $0 }
        print(
            "time-shift bound: \(sent / 1000) s of stream; ring at most \(files) files, \(bytes) bytes "
                + "(\(Int(Double(bytes) / bytesPerSecond)) s of stream); windows up to \(windows.max() ?? 0) s")
        #expect(recording.first(.playBegin) != nil && !recording.codes.contains(-2301), "\(recording.codes)")
        #expect(files >= 2 && files <= Int(window * 1000 / segment) + 2, "\(files) files")
        #expect(Double(bytes) <= bytesPerSecond * 75, "\(bytes) bytes")
        // A segment is cut at the first keyframe a segment length in: up to a keyframe interval longer (the
        // fixture's are 1 s apart, a little more across its loop).
        let longest = windows.max() ?? 0
        let bound = Double(window * 1000 + segment + 1_100) / 1000
        #expect(longest >= Double(window) - 5 && longest <= bound, "\(windows)")
        #expect((try FileManager.default.contentsOfDirectory(atPath: parent)).isEmpty, "the ring is removed at the end")
    }

    /// A pause at the live edge resumes where it paused, the pause's length behind, at 1.0×: what came meanwhile
    /// waited in the ring.
    @Test func aPauseResumesWhereItPausedNotAtTheNewestMedia() async throws {
        let (server, port) = try await LabSessionTests.server()
        var configuration = LatencyModeSessionTests.configuration(.preset(.speed))
        configuration.timeShift = TimeShiftRing.Options(window: .seconds(30), minimumFreeSpace: 0)
        let resumedAt = Locked<Int64>(0)
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: configuration, limit: .seconds(30),
            script: { probe in
                await probe.wait(for: .playBegin)
                await probe.wait(for: .playProgress, count: 5)
                probe.control.send(.pause)
                await probe.wait(for: .paused)
                let paused = probe.events.last?.elapsedMilliseconds ?? 0
                // Four seconds of the session clock, read from the net status it reports each second.
                _ = await eventually(within: .seconds(8)) { (probe.statuses.last?.elapsedMilliseconds ?? 0) >= paused + 4_000 }
                probe.control.send(.resume)
                await probe.wait(for: .resumed)
                resumedAt.withLock { $0 = probe.events.last?.elapsedMilliseconds ?? 0 }
                let resumed = resumedAt.withLock { $0 }
                _ = await eventually(within: .seconds(10)) {
                    probe.events.contains { $0.code == .playProgress && $0.elapsedMilliseconds > resumed + 5_000 }
                }
                probe.stop()
            })
        await server.stop()
        let paused = try #require(recording.first(.paused))
        let resumed = try #require(recording.first(.resumed))
        let pause = resumed.elapsedMilliseconds - paused.elapsedMilliseconds
        let progress = recording.events.filter { $0.code == .playProgress }
        let before = progress.filter { $0.elapsedMilliseconds < paused.elapsedMilliseconds }.compactMap(Self.latency)
        let after = progress.filter { $0.elapsedMilliseconds > resumed.elapsedMilliseconds + 2_000 }.compactMap(Self.latency)
        let baseline = try #require(before.last)
        #expect(!after.isEmpty && after.allSatisfy { abs($0 - baseline - pause) <= 700 }, "paused \(pause) ms: \(before) → \(after)")
        #expect(!recording.codes.contains(9003), "nothing skipped: \(recording.codes)")
    }

    /// The run: 90 s, back 60 s for 20 s, live, then to before the window's start.
    @Test func goingBackSixtySecondsShowsThePictureSixtySecondsOlderAtNormalSpeedAndGoLiveReturns() async throws {
        try await Self.run(before: 90_000, back: 60_000, behind: 20_000, window: 70)
    }
}
