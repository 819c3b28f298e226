import LivePlayBuffering
import LivePlayCore
import Testing

@Suite struct PlaybackStatisticsTests {
    static func packet(_ kind: MediaKind, _ ms: Int64, size: Int, key: Bool = false) -> EncodedPacket {
        EncodedPacket(
            kind: kind, dts: MediaTimestamp(milliseconds: ms), pts: MediaTimestamp(milliseconds: ms),
            isKeyframe: kind == .audio || key, payload: Array(repeating: 0, count: size))
    }

    @Test func ratesCoverTheIntervalAndBitratesTheMediaTime() {
        var statistics = PlaybackStatistics()
        _ = statistics.takeInterval(at: .zero)
        // One second of 25 fps video at 5,000 bytes a frame (1,000 kbit/s) and 50 audio packets of 400 bytes
        // (160 kbit/s), arriving in real time: 1,230,000 bytes of FLV on the wire.
        for frame in 0..<25 {
            statistics.received(Self.packet(.video, Int64(frame) * 40, size: 5000, key: frame == 0))
            statistics.shown(video: MediaTimestamp(milliseconds: Int64(frame) * 40))
        }
        for block in 0..<50 { statistics.received(Self.packet(.audio, Int64(block) * 20, size: 400)) }
        statistics.received(bytes: 153_750)
        let second = statistics.takeInterval(at: .seconds(1))
        #expect(second.videoKbps == 1000)
        #expect(second.audioKbps == 160)
        #expect(second.receivedKbps == 1230)
        #expect(second.framesPerSecond == 25 && second.receivedFramesPerSecond == 25)

        // A burst: ten seconds of the same stream arriving within one second is still a 1,000 kbit/s stream,
        // but 10× that on the wire.
        for frame in 25..<275 { statistics.received(Self.packet(.video, Int64(frame) * 40, size: 5000, key: frame % 50 == 0)) }
        statistics.received(bytes: 1_537_500)
        let burst = statistics.takeInterval(at: .seconds(2))
        #expect(burst.videoKbps == 1000)
        #expect(burst.receivedKbps == 12_300)
        #expect(burst.framesPerSecond == 0, "nothing was shown")
        #expect(burst.receivedFramesPerSecond == 250)
        #expect(statistics.gop == .seconds(2), "keyframes every 50 frames")
        #expect(statistics.receiveInterval == .milliseconds(980 - 10_960), "audio stopped at 980 ms, video went on")

        let quiet = statistics.takeInterval(at: .seconds(3))
        #expect(quiet.videoKbps == 0 && quiet.receivedKbps == 0, "a second without media is zero, not stale")
    }

    @Test func stuttersLatencyAndTheAVPlayInterval() {
        var statistics = PlaybackStatistics()
        statistics.stalled(for: .milliseconds(300), threshold: .milliseconds(500))
        statistics.stalled(for: .milliseconds(1200), threshold: .milliseconds(500))
        #expect(statistics.stutters == 1 && statistics.stutterTime == .milliseconds(1200))
        #expect(statistics.meanLatency == nil && statistics.p95Latency == nil)
        for second in 0..<100 { statistics.sample(latency: .milliseconds(second < 95 ? 1000 : 4000)) }
        #expect(statistics.meanLatency == .milliseconds(1150))
        #expect(statistics.p95Latency == .milliseconds(1005), "the middle of the 10 ms bucket")
        statistics.sample(latency: .milliseconds(4000))
        #expect(statistics.p95Latency == .milliseconds(4005))
        statistics.shown(video: MediaTimestamp(milliseconds: 5000))
        statistics.played(audio: MediaTimestamp(milliseconds: 5012))
        #expect(statistics.playInterval == .milliseconds(12))
        #expect(statistics.framesShown == 1)
    }
}
