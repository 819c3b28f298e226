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
                await switchBothTracks(probe)
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
        let firstSmall = try #require(firstPictureOfTrackOne(sink))
        // The lab loops the file with its timestamps going on: a keyframe is every 25th picture, once a second.
        let cut = sink.pictures[firstSmall].timing.pts.milliseconds
        #expect(renditions.keyframes == [0, 25, 50, 75, 100, 125])
        #expect(cut % 1000 < 40 || cut % 1000 > 960, "the switch is at a keyframe: \(cut) ms")
        expectSoundWithoutHoles(sink)
    }

    /// The same renditions published live by FFmpeg 8 (PyAV): its own FLV muxer, which sends the second track of
    /// each type in OneTrack messages, and its own RTMP client, relayed by nginx-rtmp.
    ///
    /// nginx-rtmp reads an Enhanced RTMP video message's first nibble (IsExHeader and the frame type) as a legacy
    /// frame type, so no video message is ever a keyframe to it: with its default `wait_key on` a player gets the
    /// sound and never a picture. `wait_key off` relays everything. It keeps no v2 sequence start for a player
    /// that joins later, so the player is there before the publisher, as a viewer waiting for a stream is.
    @Test func relayedByNginxRTMPFromFFmpegsOwnMuxerItPlaysAndSwitches() async throws {
        let renditions = try EnhancedFixture.renditions(seconds: 6)
        let server = try NginxRTMPServer(live: "wait_key off;")
        defer { server.stop() }
        let url = server.url(stream: "multitrack")
        let publisher = LivePlayDemo.Locked<FFmpegPublisher?>(nil)
        defer { publisher.withLock { $0?.stop() } }
        let sink = RecordingSink()
        let recording = await SessionRecording.record(
            url, configuration: LivePlayConfiguration(), limit: .seconds(30), sink: sink,
            script: { probe in
                _ = await probe.wait(for: .rtmpStreamBegin, timeout: .seconds(10))
                do {
                    let started = try FFmpegPublisher(
                        enhancedSources: renditions.videoSources + renditions.audioSources, url: url)
                    publisher.withLock { $0 = started }
                } catch {
                    Issue.record("the publisher did not start: \(error)")
                    probe.stop()
                    return
                }
                await switchBothTracks(probe)
            })
        let log = publisher.withLock { $0?.log } ?? ""
        #expect(recording.codes.contains(PlayEventCode.playBegin.rawValue), "\(recording.codes) \(log)")
        #expect(!recording.codes.contains(2103), "no reconnect: \(recording.codes)")
        let lists = recording.events.filter { $0.code == .tracksChanged }
        // Every track is listed once its sequence start has come.
        #expect(lists.last?.parameters["video_tracks"] == .string("0 1"), "\(lists.map(\.message))")
        #expect(lists.last?.parameters["audio_tracks"] == .string("0 1"))
        #expect(lists.last?.parameters["video_track"] == .int(1))
        #expect(lists.last?.parameters["audio_track"] == .int(1))
        // Track 0 (AV1 320x240) plays first, then track 1 (VP9 256x144) from a keyframe on, never back; the sound
        // plays on with no instant missed or heard twice, though each track came in messages of its own.
        _ = try #require(firstPictureOfTrackOne(sink))
        expectSoundWithoutHoles(sink)
    }
}

/// Once two progress events show it playing, asks for video and audio track 1, waits for the picture to change,
/// lets it play on, and stops.
private func switchBothTracks(_ probe: EventProbe) async {
    _ = await probe.wait(for: .playBegin, timeout: .seconds(10))
    _ = await probe.wait(for: .playProgress, count: 2, timeout: .seconds(10))
    probe.control.send(.selectTrack(.video, 1))
    probe.control.send(.selectTrack(.audio, 1))
    _ = await probe.wait(for: .changeResolution, count: 2, timeout: .seconds(10))
    _ = await probe.wait(for: .playProgress, count: 4, timeout: .seconds(10))
    probe.stop()
}

/// The index of the first picture of the renditions' track 1 (256x144), when the pictures before it are all of
/// track 0 (320x240), there is one, and none after it is of track 0.
private func firstPictureOfTrackOne(_ sink: RecordingSink) -> Int? {
    let sizes = sink.pictures.map { "\($0.width)x\($0.height)" }
    guard let first = sizes.firstIndex(of: "256x144") else {
        Issue.record("no picture of track 1: \(Set(sizes))")
        return nil
    }
    #expect(first > 0)
    #expect(sizes[..<first].allSatisfy { $0 == "320x240" })
    #expect(sizes[first...].allSatisfy { $0 == "256x144" })
    return first
}

/// The sound plays at 1.0× with no hole: each block starts where the one before ended.
private func expectSoundWithoutHoles(_ sink: RecordingSink) {
    let sounds = sink.sounds
    let holes = zip(sounds, sounds.dropFirst()).compactMap { before, after in
        let gap = after.pts.milliseconds - before.pts.milliseconds - Int64(before.frames * 1000 / before.sampleRate)
        return abs(gap) > 1 ? "\(gap) ms after \(before.pts.milliseconds)" : nil
    }
    #expect(sounds.count > 100)
    #expect(holes.isEmpty, "\(holes)")
}
