import LivePlay
import LivePlayDemo
import LivePlayTesting
import Logging
import Testing

/// A multitrack stream played live (the lab's HTTP-FLV server) by a session: the tracks are reported, a switch while
/// playing moves the picture to the other rendition at its next keyframe and the sound to the other track, with no
/// reconnect and no gap.
@Suite struct MultitrackSessionTests {
    @Test func aSwitchWhilePlayingMovesPictureAndSoundWithoutAReconnect() async throws {
        let renditions = try EnhancedFixture.renditions(seconds: 6)
        var quiet = Logger(label: "lab")
        quiet.logLevel = .critical
        let server = try LiveFLVServer(path: renditions.path, configuration: .init(port: 0, threads: 1), logger: quiet)
        let port = try await server.start()
        let sink = RecordingSink()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv", configuration: LivePlayConfiguration(), limit: .seconds(20), sink: sink,
            script: { probe in
                _ = await probe.wait(for: .playBegin, timeout: .seconds(10))
                _ = await probe.wait(for: .playProgress, count: 2, timeout: .seconds(10))
                probe.control.selectTrack(.video, 1)
                probe.control.selectTrack(.audio, 1)
                _ = await probe.wait(for: .changeResolution, count: 2, timeout: .seconds(10))
                _ = await probe.wait(for: .playProgress, count: 4, timeout: .seconds(10))
                probe.stop()
            })
        await server.stop()
        #expect(!recording.codes.contains(2103), "no reconnect: \(recording.codes)")
        let lists = recording.events.filter { $0.code == .tracksChanged }
        #expect(lists.first?.parameters["video_track"] == .int(0))
        #expect(lists.last?.parameters["video_track"] == .int(1), "\(lists.map(\.message))")
        #expect(lists.last?.parameters["audio_track"] == .int(1))
        #expect(lists.last?.parameters["video_tracks"] == .string("0 1"))
        // The net status lists them too, the playing ones marked.
        let listed = recording.statuses.compactMap(\.tracks)
        #expect(listed.last?.contains("video 1 vp9 256x144 (playing)") == true, "\(listed.last ?? "none")")
        #expect(listed.last?.contains("audio 1 opus 2ch 48000Hz (playing)") == true)
        // The picture changes size once, from the AV1 rendition to the VP9 one, at a keyframe, and never goes back.
        let sizes = sink.pictures.map { "\($0.width)x\($0.height)" }
        let firstSmall = try #require(sizes.firstIndex(of: "256x144"), "\(Set(sizes))")
        #expect(sizes[..<firstSmall].allSatisfy { $0 == "320x240" })
        #expect(sizes[firstSmall...].allSatisfy { $0 == "256x144" })
        #expect(firstSmall > 0)
        // The lab loops the file with its timestamps going on: a keyframe is every 25th picture, once a second.
        let cut = sink.pictures[firstSmall].timing.pts.milliseconds
        #expect(renditions.keyframes == [0, 25, 50, 75, 100, 125])
        #expect(cut % 1000 < 40 || cut % 1000 > 960, "the switch is at a keyframe: \(cut) ms")
        // The sound plays on at 1.0× with no hole: each block starts where the one before ended.
        let sounds = sink.sounds
        let gaps = zip(sounds, sounds.dropFirst()).map { before, after in
            after.pts.milliseconds - before.pts.milliseconds - Int64(before.frames * 1000 / before.sampleRate)
        }
        #expect(sounds.count > 100)
        #expect(gaps.allSatisfy { abs($0) <= 1 }, "\(gaps.filter { abs($0) > 1 })")
    }
}
