import Foundation
import LivePlay
import LivePlayFLV
import LivePlayTesting
import Logging
import Testing

/// The once-per-second status, on a whole session run in virtual time: exact cadence, same figures every run.
@Suite struct NetStatusTests {
    struct Run {
        var events: [PlayEvent] = []
        var statuses: [NetStatus] = []
    }

    /// Plays the 10 s fixture as a live stream in virtual time until the status at `seconds`.
    static func play(seconds: Int, latency: LatencyParameters = .preset(.auto)) async throws -> Run {
        let bytes = try Fixtures.bytes(try Fixture.longH264AAC.path())
        let task = Task {
            let clock = VirtualClock()
            var quiet = Logger(label: "test")
            quiet.logLevel = .critical
            let session = LiveSession(
                url: "rtmp://127.0.0.1/live/virtual", configuration: LivePlayConfiguration(latency: latency),
                clock: clock, logger: quiet, videoSink: NullVideoSink(),
                source: VirtualLiveSource(flv: bytes, clock: clock))
            var run = Run()
            _ = await session.run(
                onEvent: { run.events.append($0) },
                onStatus: { status in
                    run.statuses.append(status)
                    // Stops the session in its own task: the play loop checks for cancellation every tick.
                    if status.elapsedMilliseconds >= Int64(seconds) * 1000 { withUnsafeCurrentTask { $0?.cancel() } }
                })
            return run
        }
        return await task.value
    }

    @Test func oneStatusPerSecondWithTheStreamsFigures() async throws {
        let run = try await Self.play(seconds: 9)
        #expect(run.statuses.map(\.elapsedMilliseconds) == (1...9).map { Int64($0) * 1000 }, "exactly once a second")
        // What the fixture is, from its packets.
        let reader = try MediaReader(path: try Fixture.longH264AAC.path())
        var videoBytes = 0
        var lastVideo = MediaTimestamp.zero
        while let event = try reader.next() {
            if case .element(.packet(let packet)) = event, packet.kind == .video {
                videoBytes += packet.size
                lastVideo = packet.dts
            }
        }
        let fixtureKbps = Double(videoBytes) * 8 / Double(lastVideo.milliseconds + 40)
        let playing = run.statuses.dropFirst(2)
        for status in run.statuses {
            let keys = Set(status.dictionary.keys)
            // No wall-clock stamps in the fixture; live, playable, one track per kind, no backup, no manifest: no
            // position, duration, reason, track list, source or rendition; no loudness normalisation: no loudness. The
            // decoder is there from the first status.
            #expect(
                keys == Set(NetStatus.keys).subtracting([
                    "e2e_latency_ms", "position_ms", "duration_ms", "reason", "tracks", "source", "rendition",
                    "rendition_switches", "loudness_lufs", "loudness_gain_db",
                ]))
            #expect(status.decoder == "h264 (software)")
            #expect(status.serverAddress == "127.0.0.1:1935")
        }
        for status in playing {
            #expect(status.state == "playing")
            #expect(status.videoWidth == 320 && status.videoHeight == 240)
            #expect(abs(status.videoFPS - 25) <= 1, "\(status.videoFPS)")
            #expect(abs(status.audioBitrateKbps - 64) <= 12, "\(status.audioBitrateKbps)")
            #expect(status.gopSeconds == 2)
            #expect(status.dictionary["NET_STATUS_AUDIO_INFO"] == .string("aac,44100,1"))
            #expect(abs(status.cacheMilliseconds - 1000) <= 300, "auto holds about 1 s: \(status.cacheMilliseconds)")
            #expect(status.stutters == 0)
        }
        let meanVideoKbps = Double(playing.map(\.videoBitrateKbps).reduce(0, +)) / Double(playing.count)
        #expect(abs(meanVideoKbps - fixtureKbps) < 0.2 * fixtureKbps, "\(meanVideoKbps) vs \(fixtureKbps) kbit/s")
        #expect(playing.last!.framesShown >= 7 * 25)
    }

    /// Virtual time must not depend on how busy the machine is: two runs report the same figures.
    @Test func twoRunsReportTheSameFigures() async throws {
        func figures(_ run: Run) -> [[String: PlayEventValue]] {
            run.statuses.map { status in
                status.dictionary.filter { !$0.key.hasPrefix("NET_STATUS_CPU_USAGE") }
            }
        }
        let first = try await Self.play(seconds: 6)
        let second = try await Self.play(seconds: 6)
        #expect(figures(first).count == 6)
        #expect(figures(first) == figures(second))
    }

    /// End-to-end latency is measured on the wall clock the session is given, not the system's: with a
    /// virtual one that runs with the virtual clock, the figures are exact, and a wall clock set 5 s ahead
    /// reads exactly 5 s more.
    @Test func endToEndLatencyUsesTheInjectedWallClock() async throws {
        let onTime = try await Self.endToEndLatencies(wallClockAhead: 0)
        let ahead = try await Self.endToEndLatencies(wallClockAhead: 5000)
        #expect(onTime.count >= 4, "a stamped stream reports e2e latency while it plays: \(onTime)")
        for latency in onTime { #expect((800...1600).contains(latency), "about the 1 s cache: \(onTime)") }
        #expect(ahead == onTime.map { $0 + 5000 })
    }

    /// A hostile stamp (numbers that are no timestamps: NaN, infinite, out of range) is ignored, never a trap.
    @Test(arguments: [Double.nan, .infinity, -.infinity, 1e300, -1])
    func aStampWhoseNumbersAreNoTimestampsIsIgnored(_ streamMs: Double) async throws {
        let latencies = try await Self.endToEndLatencies(wallClockAhead: 0, streamMs: streamMs)
        #expect(latencies.isEmpty)
    }

    /// Plays the 10 s fixture with one wall-clock stamp in front, on a wall clock `ahead` of the one the stamp
    /// was made on, and returns the e2e latency of each status while playing.
    static func endToEndLatencies(wallClockAhead ahead: Double, streamMs: Double = 0) async throws -> [Int] {
        let fixture = try Fixtures.bytes(try Fixture.longH264AAC.path())
        let stampedAt = 1_700_000_000_000.0
        var writer = FLVWriter()
        writer.writeScript(
            name: "onLivePlayClock",
            [.object([AMF0Property("wallClockMs", .number(stampedAt)),
                AMF0Property("streamMs", .number(streamMs))])])
        writer.appendRaw(Array(fixture.dropFirst(13)))
        let bytes = writer.bytes
        let task = Task {
            let clock = VirtualClock()
            let origin = clock.now
            var quiet = Logger(label: "test")
            quiet.logLevel = .critical
            let session = LiveSession(
                url: "rtmp://127.0.0.1/live/virtual", configuration: LivePlayConfiguration(), clock: clock,
                logger: quiet, videoSink: NullVideoSink(), source: VirtualLiveSource(flv: bytes, clock: clock),
                wallClock: { stampedAt + ahead + Double(origin.duration(to: clock.now) / .milliseconds(1)) })
            var statuses: [NetStatus] = []
            _ = await session.run(
                onEvent: { _ in },
                onStatus: { status in
                    statuses.append(status)
                    if status.elapsedMilliseconds >= 6000 { withUnsafeCurrentTask { $0?.cancel() } }
                })
            return statuses.filter { $0.state == "playing" }.compactMap(\.endToEndLatencyMilliseconds)
        }
        return await task.value
    }

    @Test func theSessionEndsWithASummary() async throws {
        let run = try await Self.play(seconds: 5)
        let summary = try #require(run.events.last)
        #expect(summary.code == .sessionSummary)
        #expect(summary.parameters["outcome"] == .string("stopped"))
        #expect(summary.parameters["stutters"] == .int(0))
        if case .int(let first)? = summary.parameters["first_frame_ms"] { #expect(first < 200) }
        if case .int(let mean)? = summary.parameters["mean_latency_ms"] { #expect(abs(mean - 1000) < 300) }
        #expect(summary.parameters["p95_latency_ms"] != nil)
        if case .int(let frames)? = summary.parameters["frames_shown"] { #expect(frames >= 4 * 25) }
    }
}

final class NullVideoSink: VideoSink {
    func present(_ frame: VideoFrame, timing: FrameTiming) {}
}
