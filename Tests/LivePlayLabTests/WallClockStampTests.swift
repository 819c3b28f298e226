import LivePlayFLV
import LivePlayLab
import LivePlayTesting
import NIOCore
import Testing

/// A stamp as a player sees it: the demuxed message's FLV timestamp and the decoded fields.
private struct ReceivedStamp {
    var tagTimestamp: Int64
    var stamp: WallClockStamp
}

/// The `onLivePlayClock` data messages of `elements`, in stream order.
private func receivedStamps(_ elements: [FLVElement]) throws -> [ReceivedStamp] {
    try elements.compactMap { element -> ReceivedStamp? in
        guard case .dataMessage(let message) = element, message.name == "onLivePlayClock" else { return nil }
        return ReceivedStamp(tagTimestamp: message.timestamp.milliseconds, stamp: try #require(WallClockStamp(message)))
    }
}

/// The pure parts: the tag's bytes and when stamps are due, with time passed in.
@Suite struct WallClockScheduleTests {
    @Test func stampTagIsOnLivePlayClockWithItsFields() throws {
        let stamp = WallClockStamp(wallClockMs: 1_700_000_123_456, streamMs: 0x1234_5678)
        var decoder = AMF0Decoder(stamp.body)
        #expect(
            try decoder.decodeAll() == [
                .string("onLivePlayClock"),
                .ecmaArray([
                    AMF0Property("wallClockMs", .number(1_700_000_123_456)),
                    AMF0Property("streamMs", .number(0x1234_5678)),
                    AMF0Property("source", .string("liveplay-lab")),
                ]),
            ])
        // As a whole tag in a stream: script data (18) with the stream time as its (extended) timestamp.
        var program = try LiveFLVProgram(contentsOfFile: try LabFixture.stream(seconds: 1, gop: 12))
        program.tags = []
        let chunk = LiveChunk(program: program, emissions: [], clockStamp: stamp, allocator: ByteBufferAllocator())
        #expect(chunk.tagCount == 0 && chunk.mediaByteCount == 0)
        var bytes = Array(program.streamHeader.readableBytesView)
        bytes += chunk.payload.readableBytesView
        let elements = try demuxAll(bytes)
        #expect(elements.warnings.isEmpty)
        let received = try receivedStamps(elements)
        #expect(received.count == 1)
        #expect(received.first?.tagTimestamp == 0x1234_5678)
        #expect(received.first?.stamp == stamp)
        #expect(
            WallClockStamp(FLVDataMessage(name: "onCuePoint", arguments: [], timestamp: .zero)) == nil)
    }

    @Test func oneStampPerIntervalFromTheStartPairingOneInstant() {
        var schedule = WallClockSchedule(interval: .seconds(1))
        let epoch: Int64 = 1_700_000_000_000
        var stamps: [WallClockStamp] = []
        for millisecond in stride(from: Int64(0), through: 5000, by: 10) {
            let stamp = schedule.tick(
                at: .milliseconds(millisecond), streamMs: UInt32(40 + millisecond), wallClockMs: epoch + millisecond)
            #expect(schedule.latest?.wallClockMs == epoch + millisecond)
            #expect(schedule.latest?.streamMs == UInt32(40 + millisecond))
            if let stamp { stamps.append(stamp) }
        }
        #expect(stamps.map(\.streamMs) == [40, 1040, 2040, 3040, 4040, 5040])
        #expect(stamps.allSatisfy { $0.wallClockMs - Int64($0.streamMs) == epoch - 40 })
        #expect(schedule.nextDue == .seconds(6))
    }

    @Test func afterAStallOneStampGoesOutAtOnceAndTheGridResumes() {
        var schedule = WallClockSchedule(interval: .milliseconds(500))
        #expect(schedule.tick(at: .zero, streamMs: 0, wallClockMs: 0) != nil)
        #expect(schedule.tick(at: .milliseconds(300), streamMs: 300, wallClockMs: 300) == nil)
        #expect(schedule.tick(at: .milliseconds(2700), streamMs: 2700, wallClockMs: 2700)?.streamMs == 2700)
        #expect(schedule.nextDue == .milliseconds(3000))
        #expect(schedule.tick(at: .milliseconds(2990), streamMs: 2990, wallClockMs: 2990) == nil)
        #expect(schedule.tick(at: .milliseconds(3000), streamMs: 3000, wallClockMs: 3000) != nil)
        #expect(WallClockSchedule(interval: .zero).interval == .milliseconds(1))
    }

    @Test func streamTimeAtAnInstantSitsBetweenSentAndUnsentTags() throws {
        let program = try LiveFLVProgram(contentsOfFile: try LabFixture.stream(seconds: 1, gop: 12))
        var schedule = LiveFLVSchedule(program: program)
        var sent: [LiveFLVSchedule.Emission] = []
        for millisecond in stride(from: 0, through: 3500, by: 7) {
            let elapsed = Duration.milliseconds(millisecond)
            sent += schedule.due(at: elapsed)
            let now = schedule.timestamp(at: elapsed)
            #expect(now == program.firstTimestamp + UInt32(millisecond))
            #expect(sent.allSatisfy { $0.timestamp <= now })
            var peek = schedule
            let nextDue = try #require(peek.nextDue)
            let next = try #require(peek.due(at: nextDue).first)
            #expect(next.timestamp > now)
        }
    }

    @Test func theGOPCacheKeepsMediaButNotStamps() throws {
        let program = try LiveFLVProgram(contentsOfFile: try LabFixture.stream(seconds: 1, gop: 12))
        var schedule = LiveFLVSchedule(program: program)
        var clock = WallClockSchedule(interval: .milliseconds(100))
        var cache = GOPCache()
        let allocator = ByteBufferAllocator()
        var chunks: [LiveChunk] = []
        for millisecond in stride(from: Int64(0), through: 900, by: 100) {
            let elapsed = Duration.milliseconds(millisecond)
            let emissions = schedule.due(at: elapsed)
            let stamp = clock.tick(at: elapsed, streamMs: schedule.timestamp(at: elapsed), wallClockMs: millisecond)
            let chunk = LiveChunk(program: program, emissions: emissions, clockStamp: stamp, allocator: allocator)
            cache.append(chunk)
            chunks.append(chunk)
        }
        func tags(_ buffers: [ByteBuffer]) throws -> [FLVTagSplitter.Tag] {
            var splitter = FLVTagSplitter()
            splitter.append(ByteBuffer(bytes: program.streamHeader.readableBytesView))
            for buffer in buffers { splitter.append(buffer) }
            var tags: [FLVTagSplitter.Tag] = []
            while let tag = try splitter.nextTag() { tags.append(tag) }
            return tags
        }
        // Live clients get every stamp, last in its chunk and never behind the media before it.
        let live = try tags(chunks.map(\.payload))
        let stampTags = live.filter { $0.type == 18 }
        #expect(stampTags.map(\.timestamp) == (0...9).map { program.firstTimestamp + UInt32($0 * 100) })
        for chunk in chunks where chunk.clockStamp != nil {
            let chunkTags = try tags([chunk.payload])
            #expect(chunkTags.last?.type == 18)
            #expect(chunkTags.dropLast().allSatisfy { $0.timestamp <= chunkTags.last!.timestamp })
            #expect(try tags([chunk.media]).count == chunk.tagCount)
        }
        // A keyframe chunk resumed from (a slow or gop=0 client) keeps its stamp.
        let keyframeChunk = try #require(chunks.first { $0.keyframeOffset != nil && $0.clockStamp != nil })
        #expect(try tags([try #require(keyframeChunk.fromKeyframe)]).last?.type == 18)
        // The cache replays media only.
        let cached = try tags(cache.buffers)
        #expect(cached.count > 5)
        #expect(cached.allSatisfy { $0.type == 8 || $0.type == 9 })
        #expect(cached.first?.timestamp == program.tags.filter(\.isVideoKeyframe)[1].timestamp)
    }
}

/// The server over loopback. Timing bounds are generous: the machine is shared.
@Suite struct WallClockServerTests {
    /// A deterministic wall clock: a fixed epoch plus the monotonic uptime the server also paces by.
    private static let epoch: Int64 = 1_000_000_000_000
    private static func uptimeMilliseconds() -> Int64 {
        Int64(NIODeadline.now().uptimeNanoseconds / 1_000_000)
    }

    @Test func clientGetsAStampPerIntervalPairedWithWhenItWasSent() async throws {
        let path = try LabFixture.stream(seconds: 1, gop: 12)
        let configuration = LiveFLVServer.Configuration(
            wallClockInterval: .milliseconds(500), wallClock: { Self.epoch + Self.uptimeMilliseconds() })
        try await withServer(path, configuration: configuration) { server, port in
            let connectedBefore = Self.uptimeMilliseconds()
            let recording = try await StreamRecorder.record(
                port: port, request: StreamRecorder.get("/live.flv?chunked=0"), duration: .milliseconds(2800))
            let elements = try demuxedBody(recording)
            #expect(elements.warnings.isEmpty)
            let received = try receivedStamps(elements)
            // One on joining, then one per 500 ms.
            #expect((5...8).contains(received.count), "\(received.count) stamps")
            #expect(received.allSatisfy { $0.tagTimestamp == Int64($0.stamp.streamMs) })
            #expect(received.allSatisfy { $0.stamp.wallClockMs > Self.epoch })
            let streamTimes = received.map { Int64($0.stamp.streamMs) }
            #expect(zip(streamTimes, streamTimes.dropFirst()).allSatisfy { $0 < $1 }, "\(streamTimes)")
            let periodic = streamTimes.dropFirst()
            for (earlier, later) in zip(periodic, periodic.dropFirst()) {
                #expect((300...700).contains(later - earlier), "stamps \(earlier) and \(later)")
            }
            // Real-time pacing: wall time minus stream time is one constant (to rounding) across stamps.
            let offsets = received.map { $0.stamp.wallClockMs - Int64($0.stamp.streamMs) }
            #expect((offsets.max() ?? 0) - (offsets.min() ?? 0) <= 2, "offsets \(offsets)")
            // And wallClockMs is when the tag left: it arrives just after, on the same clock.
            let name: [UInt8] = [2, 0, 15] + Array("onLivePlayClock".utf8)
            let stampTags = try recordedTags(recording).filter { $0.type == 18 && $0.body.starts(with: name) }
            #expect(stampTags.count == received.count)
            for (tag, stamp) in zip(stampTags, received) {
                let arrival = try #require(recording.arrivalTime(ofByteAt: tag.endOffset))
                let arrivedAt = connectedBefore + arrival.wholeMilliseconds
                let sentAt = stamp.stamp.wallClockMs - Self.epoch
                #expect((-100...500).contains(arrivedAt - sentAt), "arrived \(arrivedAt - sentAt) ms after sending")
            }
            #expect(server.statistics.clockStampsSent >= 5)
        }
    }

    @Test func onByDefaultWithTheSystemClock() async throws {
        let path = try LabFixture.stream(seconds: 1, gop: 12)
        try await withServer(path) { _, port in
            let before = WallClockStamp.systemMilliseconds()
            let recording = try await StreamRecorder.record(
                port: port, request: StreamRecorder.get("/live.flv"), duration: .milliseconds(2300))
            let after = WallClockStamp.systemMilliseconds()
            let received = try receivedStamps(try demuxedBody(recording))
            #expect((2...4).contains(received.count), "\(received.count) stamps")
            #expect(received.allSatisfy { (before - 1000...after).contains($0.stamp.wallClockMs) })
            #expect(received.allSatisfy { $0.tagTimestamp == Int64($0.stamp.streamMs) })
            let offsets = received.map { $0.stamp.wallClockMs - Int64($0.stamp.streamMs) }
            #expect((offsets.max() ?? 0) - (offsets.min() ?? 0) <= 50, "offsets \(offsets)")
        }
    }

    @Test func aJoiningClientGetsAFreshStampAfterTheCacheNotStaleOnesFromIt() async throws {
        let path = try LabFixture.stream(seconds: 2, gop: 25)
        let configuration = LiveFLVServer.Configuration(wallClockInterval: .milliseconds(100))
        try await withServer(path, configuration: configuration) { server, port in
            #expect(await streamed(server, through: 1700), "the stream is 1.7 s in")
            async let cached = StreamRecorder.record(
                port: port, request: StreamRecorder.get("/live.flv?chunked=0"), duration: .milliseconds(600))
            async let uncached = StreamRecorder.record(
                port: port, request: StreamRecorder.get("/live.flv?chunked=0&gop=0"), duration: .milliseconds(600))
            let (withCache, withoutCache) = try await (cached, uncached)
            for (recording, usesCache) in [(withCache, true), (withoutCache, false)] {
                let elements = try demuxedBody(recording)
                let received = try receivedStamps(elements)
                let first = try #require(received.first)
                // Fresh: from the server's latest tick when the client joined, 1.7 s or more into the stream.
                #expect(first.stamp.streamMs >= 1600, "first stamp at \(first.stamp.streamMs)")
                let firstIndex = try #require(elements.firstIndex {
                    if case .dataMessage(let message) = $0 { message.name == "onLivePlayClock" } else { false }
                })
                let before = Array(elements[..<firstIndex]).packets
                #expect(before.allSatisfy { $0.dts.milliseconds <= Int64(first.stamp.streamMs) })
                if usesCache {
                    // After the whole cached GOP (from about 1 s in, where stale stamps would start).
                    #expect(before.first?.isKeyframe == true && (before.last?.dts.milliseconds ?? 0) >= 1600)
                } else {
                    // Right after the headers, before the next keyframe.
                    #expect(before.isEmpty)
                }
                let streamTimes = received.map(\.stamp.streamMs)
                #expect(zip(streamTimes, streamTimes.dropFirst()).allSatisfy { $0 < $1 }, "\(streamTimes)")
            }
        }
    }

    @Test func offWhenDisabled() async throws {
        let path = try LabFixture.stream(seconds: 1, gop: 12)
        try await withServer(path, configuration: .init(wallClockInterval: nil)) { server, port in
            let recording = try await StreamRecorder.record(
                port: port, request: StreamRecorder.get("/live.flv?chunked=0"), duration: .milliseconds(1300))
            let elements = try demuxedBody(recording)
            #expect(elements.packets.count > 20)
            #expect(try receivedStamps(elements).isEmpty)
            #expect(try recordedTags(recording).filter { $0.type == 18 }.count == 1)  // the metadata only
            #expect(server.statistics.clockStampsSent == 0)
        }
    }
}
