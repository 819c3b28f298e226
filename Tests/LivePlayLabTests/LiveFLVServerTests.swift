import LivePlayCore
import LivePlayFLV
import LivePlayLab
import LivePlayTesting
import Testing

/// End-to-end tests of the live server over loopback. Timing bounds are generous: the machine is shared.
@Suite struct LiveFLVServerTests {
    /// The first video packet of `elements`.
    private func firstVideo(_ elements: [FLVElement]) -> EncodedPacket? {
        elements.packets.first { $0.kind == .video }
    }

    /// Timestamps of the video keyframes of the file at `path`.
    private func keyframes(_ path: String) throws -> [Int64] {
        try LiveFLVProgram(contentsOfFile: path).tags.filter(\.isVideoKeyframe).map { Int64($0.timestamp) }
    }

    @Test func newClientGetsHeadersThenTheLastKeyframe() async throws {
        let path = try LabFixture.stream(seconds: 2, gop: 25)
        let keyframes = try keyframes(path)
        try await withServer(path) { server, port in
            #expect(await streamed(server, through: 1300), "the stream is past its second keyframe")
            let recording = try await StreamRecorder.record(
                port: port, request: StreamRecorder.get("/live.flv?chunked=0"), duration: .milliseconds(700))
            let response = try #require(recording.response)
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "video/x-flv")
            let elements = try demuxedBody(recording)
            #expect(elements.warnings.isEmpty)
            guard case .header = elements.first else {
                Issue.record("no FLV header first")
                return
            }
            let firstPacket = try #require(elements.firstIndex { if case .packet = $0 { true } else { false } })
            let before = elements[..<firstPacket]
            #expect(
                before.contains { if case .metadata(let metadata) = $0 { metadata.duration == nil } else { false } })
            #expect(before.contains { if case .videoConfiguration = $0 { true } else { false } })
            #expect(before.contains { if case .audioConfiguration = $0 { true } else { false } })
            let packet = try #require(elements.packets.first)
            #expect(packet.kind == .video)
            #expect(packet.isKeyframe)
            // The cached GOP is the one that started about 1 s in, sent at once rather than paced.
            #expect(packet.dts.milliseconds == keyframes[1])
            let tags = try recordedTags(recording)
            let keyframeTag = try #require(tags.first { $0.type == 9 && $0.body.count > 1 && $0.body[1] == 1 })
            let arrival = try #require(recording.arrivalTime(ofByteAt: keyframeTag.endOffset))
            #expect(arrival < .milliseconds(400))
            let lastMediaTimestamp = try #require(tags.last?.timestamp)
            #expect(lastMediaTimestamp >= 1300)
        }
    }

    @Test func timestampsKeepRisingAcrossLoopsInRealTime() async throws {
        let path = try LabFixture.stream(seconds: 1, gop: 12)
        try await withServer(path) { server, port in
            let recording = try await StreamRecorder.record(
                port: port, request: StreamRecorder.get("/live.flv?chunked=0"), duration: .milliseconds(2600))
            let elements = try demuxedBody(recording)
            #expect(elements.warnings.isEmpty)
            for kind in [MediaKind.video, .audio] {
                let stamps = elements.packets.filter { $0.kind == kind }.map(\.dts.milliseconds)
                #expect(stamps.count > 20)
                #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "\(kind) timestamps not rising")
            }
            let lastVideo = try #require(elements.packets.last { $0.kind == .video })
            #expect(lastVideo.dts.milliseconds > 1500, "did not cross a loop")
            #expect(server.statistics.completedLoops >= 2)
            // Real-time pacing: arrival time minus media time stays constant (one tick of jitter and
            // generous slack for a loaded machine), after the start-up burst.
            let tags = try recordedTags(recording).filter { $0.type == 8 || $0.type == 9 }
            var offsets: [Int64] = []
            for tag in tags {
                let arrival = try #require(recording.arrivalTime(ofByteAt: tag.endOffset))
                if arrival > .milliseconds(300) { offsets.append(arrival.wholeMilliseconds - Int64(tag.timestamp)) }
            }
            let spread = (offsets.max() ?? 0) - (offsets.min() ?? 0)
            #expect(offsets.count > 50)
            #expect(spread < 400, "arrival - timestamp spread \(spread) ms")
        }
    }

    /// Renditions of one programme on one clock: `/high.flv` and `/low.flv` carry their keyframes at the same
    /// timestamps, read at the same time (a LAS origin's renditions); another name is a 404.
    @Test func renditionsGoOutWithTheirKeyframesAtTheSameTimestamps() async throws {
        let high = try LiveFLVProgram(contentsOfFile: try Fixture.renditionHigh.path())
        let low = try LiveFLVProgram(contentsOfFile: try Fixture.renditionLow.path())
        let server = LiveFLVServer(renditions: [("high", high), ("low", low)], configuration: .init(threads: 1))
        let port = try await server.start()
        defer { Task { await server.stop() } }
        async let highRead = StreamRecorder.record(
            port: port, request: StreamRecorder.get("/high.flv?chunked=0&gop=0"), duration: .seconds(3))
        async let lowRead = StreamRecorder.record(
            port: port, request: StreamRecorder.get("/low.flv?chunked=0&gop=0"), duration: .seconds(3))
        let missing = try await StreamRecorder.record(
            port: port, request: StreamRecorder.get("/other.flv"), duration: .milliseconds(500))
        #expect(missing.response?.status == 404)
        let (highBody, lowBody) = try await (highRead, lowRead)
        func keyframes(_ recording: StreamRecorder.Recording) throws -> [Int64] {
            try demuxedBody(recording).compactMap { element in
                guard case .packet(let packet) = element, packet.kind == .video, packet.isKeyframe else { return nil }
                return packet.dts.milliseconds
            }
        }
        let highKeys = try keyframes(highBody), lowKeys = try keyframes(lowBody)
        #expect(highKeys.count >= 2, "\(highKeys)")
        #expect(highKeys == lowKeys, "high \(highKeys), low \(lowKeys)")
        let highVideo = try demuxedBody(highBody).compactMap { element -> Int? in
            guard case .packet(let packet) = element, packet.kind == .video else { return nil }
            return packet.size
        }
        let lowVideo = try demuxedBody(lowBody).compactMap { element -> Int? in
            guard case .packet(let packet) = element, packet.kind == .video else { return nil }
            return packet.size
        }
        #expect(highVideo.reduce(0, +) > 2 * lowVideo.reduce(0, +), "two renditions, not one served twice")
    }

    /// LAS's `startPts`: a request starts at the GOP of the keyframe it names (by presentation time: a later instant
    /// in that GOP names it too), or, negative, that far behind the live edge; older than what is kept, at the oldest
    /// kept; a server without ``LiveFLVServer/Configuration/startPtsWindow`` ignores it and sends its newest GOP.
    @Test func startPtsStartsAtTheKeyframeItNames() async throws {
        let path = try LabFixture.stream(seconds: 6, gop: 25)
        let keyframes = try keyframes(path)
        var window = LiveFLVServer.Configuration()
        window.startPtsWindow = .milliseconds(2500)
        var plain = LiveFLVServer.Configuration()
        plain.startPtsWindow = nil
        for (configuration, honours) in [(window, true), (plain, false)] {
            try await withServer(path, configuration: configuration) { server, port in
                #expect(await streamed(server, through: 4300), "the stream is past its fifth keyframe")
                func firstKeyframe(_ query: String) async throws -> Int64? {
                    let recording = try await StreamRecorder.record(
                        port: port, request: StreamRecorder.get("/live.flv?chunked=0&" + query),
                        duration: .milliseconds(300))
                    return firstVideo(try demuxedBody(recording)).map { $0.isKeyframe ? $0.dts.milliseconds : -1 }
                }
                // All at once, well before the sixth keyframe is due.
                async let namedRead = firstKeyframe("startPts=\(keyframes[3])")
                async let withinRead = firstKeyframe("startPts=\(keyframes[3] + 400)")
                async let delayedRead = firstKeyframe("startPts=-1000")
                async let tooOldRead = firstKeyframe("startPts=\(keyframes[0])")
                async let newestRead = firstKeyframe("gop=1")
                let (named, within, delayed, tooOld, newest) = try await (
                    namedRead, withinRead, delayedRead, tooOldRead, newestRead)
                #expect(newest == keyframes[4])
                if honours {
                    #expect(named == keyframes[3] && within == keyframes[3])
                    // The edge is between 4300 ms and the sixth keyframe: 1 s behind it is in the fourth GOP.
                    #expect(delayed == keyframes[3])
                    // 2.5 s are kept: the GOPs from the third keyframe on.
                    #expect(tooOld == keyframes[2])
                } else {
                    #expect([named, within, delayed, tooOld].allSatisfy { $0 == keyframes[4] })
                }
            }
        }
    }

    @Test func withoutTheCacheTheFirstVideoIsTheNextKeyframe() async throws {
        let path = try LabFixture.stream(seconds: 2, gop: 25)
        let keyframes = try keyframes(path)
        try await withServer(path) { server, port in
            #expect(await streamed(server, through: 200), "the stream is past its first keyframe")
            async let cached = StreamRecorder.record(
                port: port, request: StreamRecorder.get("/live.flv?chunked=0"), duration: .milliseconds(1500))
            async let uncached = StreamRecorder.record(
                port: port, request: StreamRecorder.get("/live.flv?chunked=0&gop=0"), duration: .milliseconds(1500))
            let (withCache, withoutCache) = try await (cached, uncached)
            let cachedVideo = try #require(firstVideo(try demuxedBody(withCache)))
            let uncachedVideo = try #require(firstVideo(try demuxedBody(withoutCache)))
            #expect(cachedVideo.isKeyframe && cachedVideo.dts.milliseconds == keyframes[0])
            #expect(uncachedVideo.isKeyframe && uncachedVideo.dts.milliseconds == keyframes[1])
            let keyframe = try #require(
                try recordedTags(withoutCache).first { $0.type == 9 && $0.body.count > 1 && $0.body[1] == 1 })
            let arrival = try #require(withoutCache.arrivalTime(ofByteAt: keyframe.endOffset))
            #expect(arrival > .milliseconds(400), "gop=0 client got video at \(arrival)")
        }
    }

    @Test func twentyClientsGetTheSameBytes() async throws {
        let path = try LabFixture.stream(seconds: 2, gop: 25)
        try await withServer(path) { _, port in
            let recordings = try await withThrowingTaskGroup(of: StreamRecorder.Recording.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await StreamRecorder.record(
                            port: port, request: StreamRecorder.get("/live.flv?chunked=0"),
                            duration: .milliseconds(1500))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let streams = try recordings.map { try recordedTags($0).filter { $0.type == 8 || $0.type == 9 } }
            // Clients that joined across a GOP boundary start one GOP later; compare from a common keyframe.
            func isKeyframe(_ tag: RecordedTag) -> Bool {
                tag.type == 9 && tag.body[0] >> 4 == 1 && tag.body[1] == 1
            }
            let keyframes = try streams.map { tags in try #require(tags.first(where: isKeyframe)).timestamp }
            let start = try #require(keyframes.max())
            let aligned = streams.map { tags in
                tags.drop { $0.timestamp < start || !isKeyframe($0) }
                    .map { [$0.type] + withUnsafeBytes(of: $0.timestamp) { Array($0) } + $0.body }
            }
            let common = try #require(aligned.map(\.count).min())
            #expect(common > 20)
            for stream in aligned.dropFirst() {
                #expect(Array(stream.prefix(common)) == Array(aligned[0].prefix(common)))
            }
        }
    }

    @Test func fileModeServesTheWholeFileWithContentLength() async throws {
        let path = try LabFixture.stream(seconds: 2, gop: 25)
        let file = try Fixtures.bytes(path)
        try await withServer(path) { _, port in
            let recording = try await StreamRecorder.record(
                port: port, request: StreamRecorder.get("/file.flv"), duration: .seconds(5))
            let response = try #require(recording.response)
            #expect(response.status == 200)
            #expect(response.headers["content-length"] == "\(file.count)")
            #expect(response.isComplete)
            #expect(response.body == file)
            #expect(recording.closedByPeer)
        }
    }

    @Test func otherPathsAre404AndCloseAfterEndsAChunkedBody() async throws {
        let path = try LabFixture.stream(seconds: 1, gop: 12)
        try await withServer(path) { _, port in
            let missing = try await StreamRecorder.record(
                port: port, request: StreamRecorder.get("/index.html"), duration: .seconds(3))
            #expect(missing.response?.status == 404)
            #expect(missing.closedByPeer)
            let ending = try await StreamRecorder.record(
                port: port, request: StreamRecorder.get("/app/stream.flv?close_after=0.6"), duration: .seconds(4))
            let response = try #require(ending.response)
            #expect(response.headers["transfer-encoding"] == "chunked")
            #expect(response.isComplete)
            #expect(ending.closedByPeer)
            let closedAt = try #require(ending.closedAt)
            #expect(closedAt > .milliseconds(500) && closedAt < .seconds(3))
            #expect(try demuxAll(response.body).packets.count > 10)
        }
    }

    @Test func refusesToBindOffLoopback() async throws {
        let path = try LabFixture.stream(seconds: 1, gop: 12)
        let server = try LiveFLVServer(path: path, configuration: .init(host: "0.0.0.0"))
        let error = await #expect(throws: DemoError.self) { try await server.start() }
        #expect(error?.code == .notLoopback)
        await server.stop()
    }

    @Test func aClientThatDoesNotReadIsDisconnected() async throws {
        var writer = FLVWriter(hasAudio: false, hasVideo: true)
        writer.writeVideo(
            codecID: 7, packetType: .sequenceHeader, keyframe: true, timestamp: 0, payload: [1, 0x42, 0, 0x1E, 0xFF])
        for frame in 0..<50 {
            writer.writeVideo(
                codecID: 7, packetType: .nalu, keyframe: frame % 25 == 0, timestamp: UInt32(frame * 40),
                payload: [UInt8](repeating: UInt8(frame), count: 200_000))
        }
        let server = try LiveFLVServer(
            bytes: writer.bytes, configuration: .init(maximumPendingBytes: 256 << 10, threads: 1))
        let port = try await server.start()
        let stuck = try await StreamRecorder.record(
            port: port, request: StreamRecorder.get("/live.flv"), duration: .seconds(4), reads: false)
        #expect(stuck.connected)
        #expect(server.statistics.slowClientsDisconnected == 1)
        #expect(server.statistics.activeClients == 0)
        await server.stop()
    }
}

extension Duration {
    var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
