import LivePlayFLV
import LivePlayLab
import LivePlayTesting
import NIOCore
import Testing

/// Tests of the lab's pure parts, with time passed in.
@Suite struct LiveFLVProgramTests {
    private func program(seconds: Int = 1, gop: Int = 12) throws -> LiveFLVProgram {
        try LiveFLVProgram(contentsOfFile: try LabFixture.stream(seconds: seconds, gop: gop))
    }

    @Test func splitterGivesTheSameTagsInAnyChunking() throws {
        let bytes = try Fixtures.bytes(try LabFixture.stream(seconds: 1, gop: 12))
        func split(_ chunkSizes: [Int], keepsBodies: Bool) throws -> [FLVTagSplitter.Tag] {
            var splitter = FLVTagSplitter(keepsBodies: keepsBodies)
            var tags: [FLVTagSplitter.Tag] = []
            var offset = 0
            var index = 0
            while offset < bytes.count {
                let size = min(chunkSizes[index % chunkSizes.count], bytes.count - offset)
                splitter.append(ByteBuffer(bytes: bytes[offset..<offset + size]))
                offset += size
                index += 1
                while let tag = try splitter.nextTag() { tags.append(tag) }
            }
            return tags
        }
        let whole = try split([bytes.count], keepsBodies: true)
        #expect(whole.count > 60)
        #expect(try split([1], keepsBodies: true) == whole)
        #expect(try split([7, 1, 4096, 13], keepsBodies: true) == whole)
        let headers = try split([3, 1000], keepsBodies: false)
        #expect(headers.map(\.timestamp) == whole.map(\.timestamp))
        #expect(headers.map(\.dataSize) == whole.map(\.dataSize))
        #expect(headers.allSatisfy { $0.body == nil })
    }

    @Test func splitterRejectsNonFLV() {
        var splitter = FLVTagSplitter()
        splitter.append(ByteBuffer(string: "GET / HTTP/1.1\r\n"))
        #expect(throws: DemoError.self) { try splitter.nextTag() }
    }

    @Test func programSeparatesHeadersAndDropsEndOfSequence() throws {
        let program = try program()
        #expect(program.videoSequenceHeaders.count == 1)
        let video = try #require(program.videoSequenceHeaders.first)
        #expect(video.getInteger(at: video.readerIndex + 1, as: UInt8.self) == 0)
        #expect(program.audioSequenceHeaders.count == 1)
        var decoder = AMF0Decoder(Array(try #require(program.metadata).readableBytesView))
        let values = try decoder.decodeAll()
        #expect(values.first == .string("onMetaData"))
        #expect(values[1]["duration"] == nil && values[1]["width"] != nil)
        #expect(program.tags.first { $0.type == 9 }?.isVideoKeyframe == true)
        // ffmpeg starts video one AAC priming frame late; GOPs are 12 frames of 40 ms.
        let keyframes = program.tags.filter(\.isVideoKeyframe).map(\.timestamp)
        #expect(keyframes.count >= 2 && keyframes[1] - keyframes[0] == 480)
        let videoPacketTypes = program.tags.filter { $0.type == 9 }.map {
            $0.body.getInteger(at: $0.body.readerIndex + 1, as: UInt8.self)
        }
        #expect(videoPacketTypes.allSatisfy { $0 == 1 }, "sequence headers or end of sequence among media tags")
        #expect(program.frameInterval == 40)
        #expect(program.loopPeriod == program.lastTimestamp - program.firstTimestamp + 40)
    }

    @Test func scheduleEmitsWhenDueWithRisingTimestamps() throws {
        let program = try program()
        var schedule = LiveFLVSchedule(program: program)
        let first = schedule.due(at: .zero)
        #expect(!first.isEmpty && first.allSatisfy { $0.timestamp == 0 })
        #expect(schedule.due(at: .zero).isEmpty)
        let next = try #require(schedule.nextDue)
        #expect(next > .zero && next <= .milliseconds(40))
        var emitted = first
        emitted += schedule.due(at: .milliseconds(3500))
        let period = program.loopPeriod
        #expect(schedule.completedLoops == 3)
        for (position, emission) in emitted.enumerated() {
            let loop = UInt32(position / program.tags.count)
            #expect(emission.index == position % program.tags.count)
            #expect(emission.timestamp == program.tags[emission.index].timestamp + loop * period)
            #expect(emission.timestamp <= 3500)
        }
        for type in [UInt8(8), 9] {
            let stamps = emitted.filter { program.tags[$0.index].type == type }.map(\.timestamp)
            #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 })
        }
    }

    @Test func scheduleWithoutLoopFinishes() throws {
        let program = try program()
        var schedule = LiveFLVSchedule(program: program, loops: false)
        #expect(schedule.due(at: .seconds(60)).count == program.tags.count)
        #expect(schedule.isFinished)
        #expect(schedule.nextDue == nil)
    }

    @Test func gopCacheStartsAtTheLastKeyframe() throws {
        let program = try program()
        var schedule = LiveFLVSchedule(program: program)
        var cache = GOPCache()
        let allocator = ByteBufferAllocator()
        for millisecond in stride(from: 0, through: 700, by: 100) {
            let emissions = schedule.due(at: .milliseconds(millisecond))
            cache.append(LiveChunk(program: program, emissions: emissions, allocator: allocator))
        }
        let secondKeyframe = program.tags.filter(\.isVideoKeyframe)[1].timestamp
        #expect(cache.startTimestamp == secondKeyframe)
        var splitter = FLVTagSplitter()
        splitter.append(ByteBuffer(bytes: program.streamHeader.readableBytesView))
        for buffer in cache.buffers { splitter.append(buffer) }
        var tags: [FLVTagSplitter.Tag] = []
        while let tag = try splitter.nextTag() { tags.append(tag) }
        #expect(tags.first?.timestamp == secondKeyframe && tags.first?.type == 9)
        #expect(tags.allSatisfy { $0.timestamp >= secondKeyframe && $0.timestamp <= 700 })
    }

    @Test func chunkIsFramedForChunkedClients() throws {
        let program = try program()
        var schedule = LiveFLVSchedule(program: program)
        let chunk = LiveChunk(
            program: program, emissions: schedule.due(at: .milliseconds(100)), allocator: ByteBufferAllocator())
        let framed = Array(chunk.chunkedPayload.readableBytesView)
        let sizeLine = Array((String(chunk.payload.readableBytes, radix: 16) + "\r\n").utf8)
        #expect(Array(framed.prefix(sizeLine.count)) == sizeLine)
        #expect(Array(framed.suffix(2)) == [13, 10])
        let keyframeOffset = try #require(chunk.keyframeOffset)
        #expect(chunk.payload.getInteger(at: keyframeOffset, as: UInt8.self) == 9)
        #expect(chunk.keyframeTimestamp == program.tags.first { $0.isVideoKeyframe }?.timestamp)
    }
}

@Suite struct ToxicPipeTests {
    private let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    private func milliseconds(_ value: Int64) -> NIODeadline { start + .milliseconds(value) }

    /// Drives the pipe like the proxy does, jumping to each deadline; returns the writes with their times.
    private func drain(_ pipe: inout ToxicPipe, from now: NIODeadline) -> [(NIODeadline, ByteBuffer)] {
        var now = now
        var writes: [(NIODeadline, ByteBuffer)] = []
        loop: while true {
            switch pipe.next(now: now, destinationWritable: true) {
            case .write(let bytes): writes.append((now, bytes))
            case .wait(let deadline): now = deadline
            case .idle, .blocked, .finished: break loop
            }
        }
        return writes
    }

    private func bytes(_ count: Int, seed: UInt8 = 0) -> ByteBuffer {
        ByteBuffer(bytes: (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    private func joined(_ writes: [(NIODeadline, ByteBuffer)]) -> [UInt8] {
        writes.flatMap { Array($0.1.readableBytesView) }
    }

    @Test func latencyHoldsEachReadAndKeepsOrderUnderJitter() {
        var pipe = ToxicPipe(toxics: ToxicSet([.latency(.milliseconds(100), jitter: .milliseconds(80))]))
        var input: [UInt8] = []
        for index in 0..<50 {
            let chunk = bytes(100, seed: UInt8(index))
            input += chunk.readableBytesView
            pipe.receive(chunk, now: milliseconds(Int64(index)))
        }
        #expect(pipe.next(now: start, destinationWritable: true) != .idle)
        let writes = drain(&pipe, from: start)
        #expect(joined(writes) == input)
        #expect(writes.first.map { $0.0 >= milliseconds(20) } == true)
        #expect(zip(writes, writes.dropFirst()).allSatisfy { $0.0 <= $1.0 })
        #expect(writes.last.map { $0.0 <= milliseconds(49 + 180) } == true)
    }

    @Test func stallHoldsEverythingUntilItEnds() {
        var pipe = ToxicPipe(toxics: ToxicSet())
        var toxics = pipe.toxics
        toxics.apply(.stall(.seconds(2)), now: start)
        pipe.setToxics(toxics)
        pipe.receive(bytes(1000), now: milliseconds(10))
        #expect(pipe.next(now: milliseconds(500), destinationWritable: true) == .wait(until: milliseconds(2000)))
        let writes = drain(&pipe, from: milliseconds(500))
        #expect(writes.count == 1 && writes[0].0 == milliseconds(2000))
        #expect(pipe.toxics.stalledUntil == nil)
    }

    @Test func slicerSplitsWithinBoundsAndKeepsBytes() {
        var pipe = ToxicPipe(
            toxics: ToxicSet([.slicer(averageSize: 100, sizeVariation: 40, delay: .milliseconds(2))]), seed: 7)
        let input = bytes(10_000)
        pipe.receive(input, now: start)
        let writes = drain(&pipe, from: start)
        #expect(joined(writes) == Array(input.readableBytesView))
        #expect(writes.dropLast().allSatisfy { (60...140).contains($0.1.readableBytes) })
        #expect(Set(writes.map(\.1.readableBytes)).count > 10)
        #expect(zip(writes, writes.dropFirst()).allSatisfy { $1.0 - $0.0 >= .milliseconds(2) })
    }

    @Test func bandwidthPacesToTheRate() {
        var pipe = ToxicPipe(toxics: ToxicSet([.bandwidth(bytesPerSecond: 50_000)]))
        let input = bytes(100_000)
        pipe.receive(input, now: start)
        let writes = drain(&pipe, from: start)
        #expect(joined(writes) == Array(input.readableBytesView))
        let took = writes.last!.0 - start
        #expect(took >= .milliseconds(1950) && took <= .milliseconds(2050), "took \(took)")
        #expect(writes.allSatisfy { $0.1.readableBytes <= 2000 })
    }

    @Test func blockedDestinationAndEndOfSource() {
        var pipe = ToxicPipe()
        #expect(pipe.next(now: start, destinationWritable: true) == .idle)
        pipe.receive(bytes(10), now: start)
        #expect(pipe.next(now: start, destinationWritable: false) == .blocked)
        pipe.endOfSource()
        #expect(pipe.next(now: start, destinationWritable: true) == .write(bytes(10)))
        #expect(pipe.next(now: start, destinationWritable: true) == .finished)
    }
}

@Suite struct LabParsingTests {
    @Test func timelineParses() throws {
        let timeline = try ImpairmentTimeline.parse(
            "at=15s down=4s; at=5s stall=3s; at=10s reset;at=20s latency=200 jitter=50 dir=both; at=25 clear;"
                + " at=26s bandwidth=2mbps; at=27s slice=100 variation=20 slice_delay=5; at=28s clear=latency dir=up")
        #expect(
            timeline.entries == [
                .init(at: .seconds(5), .set(.stall(.seconds(3)), .downstream)),
                .init(at: .seconds(10), .reset),
                .init(at: .seconds(15), .down(.seconds(4))),
                .init(at: .seconds(20), .set(.latency(.milliseconds(200), jitter: .milliseconds(50)), .both)),
                .init(at: .seconds(25), .clear(nil, .both)),
                .init(at: .seconds(26), .set(.bandwidth(bytesPerSecond: 250_000), .downstream)),
                .init(
                    at: .seconds(27),
                    .set(.slicer(averageSize: 100, sizeVariation: 20, delay: .milliseconds(5)), .downstream)),
                .init(at: .seconds(28), .clear(.latency, .upstream)),
            ])
        #expect(try ImpairmentTimeline.parse("at=1.5s stall=500ms").entries[0].at == .milliseconds(1500))
    }

    @Test(arguments: ["stall=3s", "at=5s", "at=5s stall=3s reset", "at=x stall=1", "at=1 latency=1 bogus=2",
        "at=1 dir=sideways reset", "at=1 clear=everything"])
    func badTimelinesAreRejected(_ text: String) {
        let error = #expect(throws: LabError.self) { try ImpairmentTimeline.parse(text) }
        #expect(error?.code == .invalidTimeline)
    }

    @Test func onlyLoopbackIsAllowed() throws {
        #expect(try Loopback.address("localhost") == "127.0.0.1")
        #expect(try Loopback.address("::1") == "::1")
        let v6 = try Loopback.endpoint("[::1]:1935")
        #expect(v6.host == "::1" && v6.port == 1935)
        let v4 = try Loopback.endpoint("localhost:8080")
        #expect(v4.host == "127.0.0.1" && v4.port == 8080)
        for host in ["10.0.0.1", "example.com", "0.0.0.0", "127.0.0.2"] {
            #expect(throws: DemoError(.notLoopback, "refusing non-loopback host '\(host)'")) {
                try Loopback.address(host)
            }
        }
        #expect(throws: DemoError.self) { try Loopback.endpoint("127.0.0.1") }
    }
}
