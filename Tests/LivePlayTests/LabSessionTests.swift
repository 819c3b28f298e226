import Foundation
import LivePlay
import LivePlayLab
import LivePlayTesting
import Logging
import Testing

/// HTTP-FLV through the stream lab: a live server with a GOP cache, and faults made by stopping it or by
/// the impairment proxy.
@Suite struct LabSessionTests {
    static func quiet() -> Logger {
        var logger = Logger(label: "lab")
        logger.logLevel = .critical
        return logger
    }

    static func server(port: Int = 0) async throws -> (LiveFLVServer, Int) {
        let server = try LiveFLVServer(
            path: try Fixture.h264AAC.path(), configuration: .init(port: port, threads: 1), logger: quiet())
        return (server, try await server.start())
    }

    static func configuration(retries: Int) -> LivePlayConfiguration {
        LivePlayConfiguration(
            connectRetryCount: retries, connectRetryInterval: .milliseconds(300),
            transport: TransportOptions(connectTimeout: .seconds(2), handshakeTimeout: .seconds(2), noDataTimeout: .seconds(1)))
    }

    @Test func aGOPCachedServerGivesAKeyframeAtOnce() async throws {
        let (server, port) = try await Self.server()
        defer { Task { await server.stop() } }
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: Self.configuration(retries: 0)
        ) { $0.code == .playBegin }
        let connected = try #require(recording.first(.connectSucceeded))
        let keyframe = try #require(recording.first(.receivedFirstKeyframe))
        #expect(Array(recording.codes.prefix(1)) == [2001])
        // The cache starts at a keyframe: it is the first video packet, well under a GOP (1 s) later.
        #expect(keyframe.elapsedMilliseconds - connected.elapsedMilliseconds < 1500)
        #expect(recording.codes.contains(2004))
        print("HTTP-FLV lab timing: startPlay→2001 \(connected.elapsedMilliseconds) ms, →2003 \(keyframe.elapsedMilliseconds) ms")
    }

    @Test func aServerThatComesBackWithinTheRetryWindowResumesPlayback() async throws {
        let (first, port) = try await Self.server()
        let replacement = Locked<LiveFLVServer?>(nil)
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: Self.configuration(retries: 3), limit: .seconds(15),
            script: { probe in
                await probe.wait(for: .playBegin)
                await first.stop()
                await probe.wait(for: .reconnect)
                // Back on the same port before the retries run out.
                if let (server, _) = try? await Self.server(port: port) { replacement.set(server) }
                // Media flows again on the new connection; then stop.
                await probe.wait(for: .receivedFirstKeyframe, count: 2)
                await probe.wait(for: .playProgress, count: 3)
                probe.stop()
            })
        if let server = replacement.get() { await server.stop() }
        let codes = recording.codes
        #expect(codes.contains(2103))
        #expect(!codes.contains(-2301))
        #expect(codes.filter { $0 == 2001 }.count == 2, "reconnected: \(codes)")
        #expect(codes.filter { $0 == 2003 }.count == 2, "media again: \(codes)")
        let lost = try #require(codes.firstIndex(of: 2103))
        #expect([3004, 3005].contains(codes[lost - 1]), "the loss says why: \(codes)")
        // The typed state counts the same reconnects, by the reason the events give.
        let reasons = recording.events.filter { $0.code == .reconnect }.compactMap { $0.parameters["reason"]?.description }
        let counted = try #require(recording.states.last?.reconnects)
        #expect(counted.values.reduce(0, +) == reasons.count && Set(counted.keys.map(\.rawValue)) == Set(reasons), "\(counted)")
    }

    @Test func aServerThatNeverComesBackEndsInDisconnect() async throws {
        let (server, port) = try await Self.server()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: Self.configuration(retries: 3),
            script: { probe in
                await probe.wait(for: .playBegin)
                await server.stop()
            })
        let codes = recording.codes
        #expect(codes.filter { $0 == 2103 }.count == 3, "\(codes)")
        #expect(codes.last == -2301)
        #expect(recording.outcome == .failed(.networkDisconnected))
        let attempts = recording.events.filter { $0.code == .reconnect }.map { $0.parameters["EVT_PARAM1"] }
        #expect(attempts == [.int(1), .int(2), .int(3)])
    }

    @Test func aStallLongerThanTheReadTimeoutIsALostConnectionAndPlaybackResumes() async throws {
        let (server, port) = try await Self.server()
        let proxy = ImpairmentProxy(
            upstreamPort: port, timeline: try ImpairmentTimeline.parse("at=3s stall=3s"), logger: Self.quiet())
        let proxyPort = try await proxy.start()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(proxyPort)/live.flv", configuration: Self.configuration(retries: 3),
            stopWhen: { $0.code == .playBegin && ($0.parameters["connection"] ?? .int(0)) != .int(1) })
        await proxy.stop()
        await server.stop()
        let codes = recording.codes
        let lag = try #require(recording.events.first { $0.code == .receiveDataLag && $0.parameters["reason"] == .string("no_data") })
        let begin = try #require(recording.first(.playBegin))
        // Stalled at about 3 s, detected about 1 s later: generous bounds.
        #expect(lag.elapsedMilliseconds - begin.elapsedMilliseconds < 7000)
        #expect(recording.codes.contains(2007), "the 1 s buffer ran dry during the 3 s stall")
        let gap = try #require(recording.events.first { $0.code == .receiveDataLag && $0.parameters["reason"] == .string("arrival_gap") })
        #expect(gap.elapsedMilliseconds < lag.elapsedMilliseconds, "the arrival gap is reported before the read timeout")
        #expect(codes.contains(2103) && !codes.contains(-2301))
        #expect(codes.filter { $0 == 2004 }.count == 2, "\(codes)")
    }
}

/// Pacing, A/V sync and the startup timeline, as a sink and the events see them.
@Suite struct PacingSessionTests {
    @Test func framesAreShownAtTheirTimeWithSoundInStepAndTheStartupTimelineInOrder() async throws {
        let (server, port) = try await LabSessionTests.server()
        let sink = RecordingSink()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: LabSessionTests.configuration(retries: 0),
            limit: .seconds(15), sink: sink,
            script: { probe in
                await probe.wait(for: .playBegin)
                // Four seconds of playing: about 100 pictures at 25 fps.
                _ = await eventually { sink.pictures.count >= 100 }
                probe.stop()
            })
        await server.stop()
        let begin = try #require(recording.first(.playBegin))
        let milestones = [
            "startup_resolved_ms", "startup_connected_ms", "startup_handshake_ms", "startup_first_byte_ms",
            "startup_first_keyframe_ms", "startup_first_decoded_ms", "startup_first_shown_ms",
        ].map { key -> Int64? in
            if case .int(let value) = begin.parameters[key] { value } else { nil }
        }
        #expect(milestones.allSatisfy { $0 != nil }, "\(begin.parameters)")
        let times = milestones.compactMap { $0 }
        #expect(times == times.sorted(), "milestones in order: \(times)")
        #expect(times.last! <= begin.elapsedMilliseconds, "the first picture shows before the cache is full")

        let figures = Self.figures(sink)
        // The lab's stream is 25 fps: about 100 pictures in 4 s of playing, each at its time.
        #expect(figures.pictures >= 70, "\(figures)")
        #expect(figures.lateP95 <= 40, "95 % of pictures within 40 ms of their time: \(figures)")
        #expect(figures.sounds >= 100)
        #expect(figures.avOffsetP95 <= 40, "sound within ±40 ms of the picture: \(figures)")
        print("HTTP-FLV lab pacing: \(figures)")
    }

    @Test func withBFramesTheFirstPictureStillShowsAsSoonAsItsKeyframeArrives() async throws {
        let server = try LiveFLVServer(
            path: try Fixture.h264BFramesAAC.path(), configuration: .init(port: 0, threads: 1),
            logger: LabSessionTests.quiet())
        let port = try await server.start()
        let sink = RecordingSink()
        let recording = await SessionRecording.record(
            // No GOP cache: the stream starts at the next keyframe and the 1 s cache fills in real time after it.
            "http://127.0.0.1:\(port)/live.flv?gop=0", configuration: LabSessionTests.configuration(retries: 0),
            limit: .seconds(15), sink: sink, stopWhen: { $0.code == .playBegin })
        await server.stop()
        let begin = try #require(recording.first(.playBegin))
        guard case .int(let keyframe)? = begin.parameters["startup_first_keyframe_ms"],
            case .int(let shown)? = begin.parameters["startup_first_shown_ms"]
        else {
            Issue.record("no startup timeline: \(begin.parameters)")
            return
        }
        // The decoder's reorder delay (3 B-frames) would hold it until the cache is full: a second later.
        #expect(shown - keyframe < 200, "first picture \(shown - keyframe) ms after its keyframe")
        #expect(shown < begin.elapsedMilliseconds - 500)
        #expect(sink.pictures.count >= 1)
    }

    /// How late pictures were (p95, ms), and how far apart sound and picture of the same instant left (p95, ms).
    static func figures(_ sink: RecordingSink) -> (pictures: Int, lateP95: Int64, sounds: Int, avOffsetP95: Int64) {
        // The first picture is a poster shown before playback begins; pacing starts after it.
        let late = sink.pictures.dropFirst().map { $0.timing.position.milliseconds - $0.timing.pts.milliseconds }.sorted()
        let offsets = sink.audioVideoOffsets().offsets.map { abs($0) }.sorted()
        let p95 = { (values: [Int64]) in values.isEmpty ? Int64.max : values[values.count * 95 / 100] }
        return (late.count, p95(late), offsets.count, p95(offsets))
    }
}

/// The latency modes in real time, through the lab's proxy: short runs, generous bounds.
@Suite struct LatencyModeSessionTests {
    static func configuration(_ latency: LatencyParameters) -> LivePlayConfiguration {
        LivePlayConfiguration(
            connectRetryCount: 10, connectRetryInterval: .milliseconds(200),
            transport: TransportOptions(connectTimeout: .seconds(2), handshakeTimeout: .seconds(2), noDataTimeout: .seconds(1)),
            latency: latency)
    }

    static func stalledStream() async throws -> (LiveFLVServer, ImpairmentProxy, Int) {
        let (server, port) = try await LabSessionTests.server()
        let proxy = ImpairmentProxy(
            upstreamPort: port, timeline: try ImpairmentTimeline.parse("at=3s stall=3s"),
            logger: LabSessionTests.quiet())
        return (server, proxy, try await proxy.start())
    }

    @Test func speedRecoversToUnderOneAndAHalfSecondsOfEndToEndLatencyAfterAStall() async throws {
        let (server, proxy, port) = try await Self.stalledStream()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: Self.configuration(.preset(.speed)),
            limit: .seconds(25),
            script: { probe in
                // Stall ends at 6 s; give it 15 s from there (the progress events past 20 s are what is checked).
                _ = await eventually(within: .seconds(24)) {
                    probe.events.contains { $0.code == .playProgress && $0.elapsedMilliseconds > 21_000 }
                }
                probe.stop()
            })
        await proxy.stop()
        await server.stop()
        let progress = recording.events.filter { $0.code == .playProgress }
        let late = progress.filter { $0.elapsedMilliseconds > 20_000 }.compactMap { event -> Int64? in
            if case .int(let value) = event.parameters["e2e_latency_ms"] { value } else { nil }
        }
        #expect(!late.isEmpty, "end-to-end latency comes from the lab's wall-clock stamps")
        #expect(late.allSatisfy { $0 < 1500 }, "e2e latency 14-15 s after the stall: \(late)")
        #expect(recording.codes.contains(2007), "the stall emptied the 1 s cache")
        #expect(!recording.codes.contains(-2301))
    }

    @Test func theModeChangesWhilePlayingAndSaysSo() async throws {
        let (server, port) = try await LabSessionTests.server()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: Self.configuration(.preset(.smooth)), limit: .seconds(25),
            script: { probe in
                await probe.wait(for: .playBegin)
                // Smooth has 5 s buffered; speed wants 1 s: it must shed the rest.
                _ = await eventually { (probe.statuses.last?.cacheMilliseconds ?? 0) >= 4_000 }
                probe.control.send(.latency(.preset(.speed)))
                await probe.wait(for: .catchUpSkip, timeout: .seconds(10))
                await probe.wait(for: .playProgress, count: 8, timeout: .seconds(10))
                probe.stop()
            })
        await server.stop()
        let change = try #require(recording.first(.latencyChanged))
        #expect(change.parameters["mode"] == .string("speed"))
        #expect(change.parameters["previous_mode"] == .string("smooth"))
        #expect(change.parameters["max_cache_ms"] == .int(1000))
        let begin = try #require(recording.first(.playBegin))
        #expect(change.elapsedMilliseconds > begin.elapsedMilliseconds)
        let afterChange = recording.events.filter {
            $0.elapsedMilliseconds >= change.elapsedMilliseconds && [9001, 9003].contains($0.code.rawValue)
        }
        #expect(!afterChange.isEmpty, "speed catches up from smooth's cache: \(recording.codes)")
        let last = try #require(recording.events.last { $0.code == .playProgress })
        if case .int(let latency) = last.parameters["latency_ms"] { #expect(latency < 2500, "latency after the change") }
    }

    @Test func smoothLoadsOnceThenBeginsOnceWithItsCacheFull() async throws {
        let (server, proxy, port) = try await Self.stalledStream()
        var smooth = LatencyParameters.preset(.smooth)
        smooth.cacheTime = .seconds(2)
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: Self.configuration(smooth), limit: .seconds(15),
            script: { probe in
                await probe.wait(for: .playBegin, count: 2, timeout: .seconds(14))
                probe.stop()
            })
        await proxy.stop()
        await server.stop()
        let playback = recording.codes.filter { $0 == 2004 || $0 == 2007 }
        #expect(playback == [2004, 2007, 2004], "\(recording.codes)")
        let resumed = try #require(recording.events.last { $0.code == .playBegin })
        if case .int(let buffered) = resumed.parameters["buffered_ms"] { #expect(buffered >= 2000) }
        #expect(!recording.events.contains { $0.code == .catchUpStarted })
    }
}

/// `TransportOptions.readInterval` (merged reads): a read of the socket takes what arrived since the last one, so a
/// stream of a tag every few milliseconds arrives in a few reads a second, still in real time.
@Suite struct MergedReadTests {
    /// Counts the reads the play loop takes, from the second second on (the first holds the GOP cache's burst).
    final class ReadCounter: ArrivalTap, @unchecked Sendable {
        private let lock = NSLock()
        private var reads: [Int64] = []

        func arrived(_ read: ArrivalRead) {
            lock.withLock { reads.append(read.milliseconds) }
        }

        /// Reads a second between 1 s and `until`.
        func rate(until: Int64) -> Double {
            let counted = lock.withLock { reads.filter { $0 >= 1000 && $0 < until }.count }
            return Double(counted) / (Double(until - 1000) / 1000)
        }
    }

    static func play(readInterval: Duration) async throws -> (reads: Double, codes: [Int]) {
        let (server, port) = try await LabSessionTests.server()
        defer { Task { await server.stop() } }
        var configuration = LabSessionTests.configuration(retries: 0)
        configuration.decodes = false
        configuration.transport.readInterval = readInterval
        let counter = ReadCounter()
        let codes = Locked<[Int]>([])
        // The window the read rate is measured over: the session's first 4 s, by its own clock (its fourth net status),
        // whatever it does.
        let (fourSeconds, passed) = AsyncStream.makeStream(of: Void.self)
        let outcome = await withTaskGroup(of: PlaybackOutcome?.self) { [configuration] group in
            group.addTask {
                let session = LiveSession(
                    url: "http://127.0.0.1:\(port)/live.flv", configuration: configuration, clock: ContinuousClock(),
                    logger: LabSessionTests.quiet(), arrivalTap: counter)
                return await session.run(
                    onEvent: { event in codes.withLock { $0.append(event.code.rawValue) } },
                    onStatus: { if $0.elapsedMilliseconds >= 4000 { passed.yield() } })
            }
            group.addTask {
                for await _ in fourSeconds { break }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        #expect(outcome == nil, "still playing after 4 s")
        return (counter.rate(until: 4000), codes.get())
    }

    @Test func readsAreMergedAndTheStreamKeepsUp() async throws {
        let merged = try await Self.play(readInterval: .milliseconds(200))
        let eager = try await Self.play(readInterval: .zero)
        #expect(merged.codes.contains(PlayEventCode.playBegin.rawValue))
        #expect(!merged.codes.contains(PlayEventCode.receiveDataLag.rawValue), "no lag warning: in real time")
        #expect(!merged.codes.contains(PlayEventCode.playLoading.rawValue), "no stall")
        // A read each 200 ms is 5 a second; the fixture's tags come far more often than that.
        #expect(merged.reads <= 7, "merged: \(merged.reads) reads/s")
        #expect(eager.reads >= 2 * merged.reads, "eager: \(eager.reads) reads/s, merged: \(merged.reads)")
    }
}
