import Foundation
import LivePlay
import LivePlayLab
import LivePlayTesting
import Testing

/// Arrival traces (docs/arrival-trace.md): recorded from real sessions, replayed by the simulator through the
/// same play-out stage, with the same figures.
@Suite struct ArrivalTraceTests {
    @Test func aTraceFileReadsBackAsWritten() throws {
        let path = NSTemporaryDirectory() + "arrivals-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let video = EncodedPacket(
            kind: .video, dts: MediaTimestamp(milliseconds: 3023), pts: MediaTimestamp(milliseconds: 3056),
            isKeyframe: true, payload: [UInt8](repeating: 1, count: 6746))
        let audio = EncodedPacket(
            kind: .audio, dts: MediaTimestamp(milliseconds: 3042), pts: MediaTimestamp(milliseconds: 3042),
            isKeyframe: true, payload: [1, 2, 3])
        let reads = [
            ArrivalRead(milliseconds: 10, bytes: 367, packets: []),
            ArrivalRead(milliseconds: 13, bytes: 7000, packets: [.init(video), .init(audio)]),
        ]
        let file = try ArrivalTraceFile(path: path)
        reads.forEach(file.arrived)
        try file.finish()
        #expect(try ArrivalTraceFile.read(path: path) == reads)
        let packet = reads[1].packets[0].encodedPacket
        #expect(packet.kind == .video && packet.pts == video.pts && packet.isKeyframe && packet.payload.count == 6746)
    }

    /// The real loop takes every read waiting for it before the engine advances, and taking a large burst takes a few
    /// milliseconds: a replay that advanced between two reads of one turn resumed on part of a burst the real player
    /// resumed on whole (the 70 %-bandwidth run in docs/disagreements/). Reads of one recorded turn are one turn in
    /// the replay, however far apart their times; a trace without turns replays on the 10 ms grid as before. Nor
    /// are two turns one in the replay when they fall in one step of its grid: the real loop advanced after each (a
    /// process held up by its machine takes its backlog in turns a few milliseconds apart, and a replay that took
    /// them at once skipped a GOP more than the real smooth player at 70 % bandwidth, with the test process stopped
    /// for 80–300 ms every 0.5–3 s).
    @Test func aReplayAdvancesOnlyAfterTheLastReadOfATurn() {
        func read(_ milliseconds: Int64, media: StrideThrough<Int64>, turn: Int?) -> ArrivalRead {
            let packets = media.map {
                ArrivalRead.Packet(EncodedPacket(
                    kind: .video, dts: MediaTimestamp(milliseconds: $0), pts: MediaTimestamp(milliseconds: $0),
                    isKeyframe: $0 == 0, payload: [0]))
            }
            return ArrivalRead(milliseconds: milliseconds, bytes: packets.count, packets: packets, connection: 1, turn: turn)
        }
        func bufferedAtBegin(turns: [Int?], secondReadAt second: Int64 = 20) -> Int64? {
            let reads = [
                read(10, media: stride(from: 0, through: 500, by: 50), turn: turns[0]),
                read(second, media: stride(from: 550, through: 1000, by: 50), turn: turns[1]),
                read(28, media: stride(from: 1050, through: 1500, by: 50), turn: turns[2]),
            ]
            let replay = PlaybackSimulator.replay(reads, parameters: .preset(.speed), duration: .seconds(1))
            guard let begin = replay.events.first(where: { $0.code == .playBegin }),
                case .int(let buffered)? = begin.parameters["buffered_ms"]
            else { return nil }
            return Int64(buffered)
        }
        // One turn took the reads at 20 and 28 ms: playback began on all of it.
        #expect(bufferedAtBegin(turns: [1, 2, 2]) == 1500)
        // Two turns: it began at 20 ms on the first second, as the real loop would have.
        #expect(bufferedAtBegin(turns: [1, 2, 3]) == 1000)
        #expect(bufferedAtBegin(turns: [nil, nil, nil]) == 1000)
        // Two turns at 21 and 28 ms, one step of the grid: it began after the first of them, as the real loop did.
        #expect(bufferedAtBegin(turns: [1, 2, 3], secondReadAt: 21) == 1000)
        #expect(bufferedAtBegin(turns: [1, 2, 2], secondReadAt: 21) == 1500)
    }

    /// The issue's case: speed mode, a 3 s stall at 6 s, the backlog arriving as a burst after it. The real
    /// session records what it took and when; the simulator replays that and must report the same latency at
    /// every status second, within 100 ms.
    @Test func theSimulatorReplaysARealStallWithTheSameLatency() async throws {
        let (server, port) = try await LabSessionTests.server()
        let proxy = ImpairmentProxy(
            upstreamPort: port, timeline: try ImpairmentTimeline.parse("at=6s stall=3s"),
            logger: LabSessionTests.quiet())
        let proxyPort = try await proxy.start()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(proxyPort)/live.flv", configuration: LivePlayConfiguration(latency: .preset(.speed)),
            limit: .seconds(18), recordsArrivals: true)
        await proxy.stop()
        await server.stop()
        #expect(recording.arrivals.count > 100)
        #expect(recording.statuses.count >= 14, "one status a second")
        #expect(recording.codes.contains(2007), "the stall was seen: \(recording.codes)")
        let comparison = RunComparison(recording, parameters: .preset(.speed), impairments: [])
        #expect(comparison.comparedSeconds >= 12)
        #expect(comparison.disagreements.isEmpty, "\(comparison.disagreements)")
        #expect(comparison.transitionsAgree, "stalls and resumes \(comparison.transitions)")
        // Issue 15's target for speed mode: back to at most 1.2 s within 5 s of the stall's end, when the
        // backlog the proxy held has arrived as a burst.
        let loading = try #require(recording.first(.playLoading))
        let resumed = try #require(
            recording.events.first { $0.code == .playBegin && $0.elapsedMilliseconds > loading.elapsedMilliseconds })
        let back = recording.statuses.first {
            $0.elapsedMilliseconds > resumed.elapsedMilliseconds && $0.latencyMilliseconds <= 1200
        }
        let seconds = back.map { Double($0.elapsedMilliseconds - resumed.elapsedMilliseconds) / 1000 }
        print("speed after a 3 s stall: latency ≤ 1.2 s \(seconds.map { "\($0) s" } ?? "never") after it resumed")
        #expect(seconds.map { $0 <= 5 } == true, "statuses: \(recording.statuses.map(\.latencyMilliseconds))")
    }
}
