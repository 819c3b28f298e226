import Foundation
@testable import LivePlayFLV
@testable import LivePlayTransport
import Testing

/// The time-shift ring on a made-up stream (25 fps video with a keyframe every second, audio every 20 ms, AVC and
/// AAC sequence headers, metadata): its bound, its keyframe index, what a reader gets, and the files at the end.
@Suite struct TimeShiftRingTests {
    static func videoTag(_ ms: UInt32, keyframe: Bool) -> FLVTag {
        FLVTag(type: 9, timestamp: ms, body: [keyframe ? 0x17 : 0x27, 1, 0, 0, 0] + [UInt8](repeating: 0xAB, count: 400))
    }

    static func audioTag(_ ms: UInt32) -> FLVTag {
        FLVTag(type: 8, timestamp: ms, body: [0xAF, 1] + [UInt8](repeating: 0xCD, count: 40))
    }

    static let sequenceHeaders = [
        FLVTag(type: 9, timestamp: 0, body: [0x17, 0, 0, 0, 0, 1, 0x64, 0, 0x1F, 0xFF]),
        FLVTag(type: 8, timestamp: 0, body: [0xAF, 0, 0x11, 0x90]),
    ]

    /// Appends `seconds` of the stream from `start`, calling `each` after every second.
    static func feed(_ ring: TimeShiftRing, from start: UInt32 = 0, seconds: Int, each: (UInt32) -> Void = { _ in }) {
        for second in 0..<UInt32(seconds) {
            let base = start + second * 1000
            for frame in 0..<UInt32(25) { ring.append(videoTag(base + frame * 40, keyframe: frame == 0)) }
            for block in 0..<UInt32(50) { ring.append(audioTag(base + block * 20)) }
            each(base + 1000)
        }
    }

    /// A ring with the sequence headers and `seconds` of the stream in it, in a directory of the test's own.
    static func ring(window: Int, seconds: Int, in parent: String) throws -> TimeShiftRing {
        let ring = try TimeShiftRing(options: .init(window: .seconds(window), directory: parent, minimumFreeSpace: 0))
        sequenceHeaders.forEach(ring.append)
        feed(ring, seconds: seconds)
        return ring
    }

    static func temporaryDirectory() -> String {
        let path = FileManager.default.temporaryDirectory.path + "/ring-test-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Three minutes with a one-minute window: the ring never holds more than the window plus a segment, never
    /// less than the window once it has had it, and its bytes stay bounded as well.
    @Test func overThreeMinutesAOneMinuteWindowStaysBounded() throws {
        let parent = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let ring = try TimeShiftRing(options: .init(window: .seconds(60), directory: parent, minimumFreeSpace: 0))
        #expect(ring.options.segmentLength == .seconds(10))
        Self.sequenceHeaders.forEach(ring.append)
        var largest: Int64 = 0
        var spans: [UInt32] = []
        Self.feed(ring, seconds: 180) { now in
            let span = ring.span!
            spans.append(span.upperBound - span.lowerBound)
            largest = max(largest, ring.byteCount)
            let files = (try? FileManager.default.contentsOfDirectory(atPath: ring.directory)) ?? []
            #expect(files.count <= 8, "\(files.count) segments at \(now) ms")
        }
        // Held: from 59.96 s (the window, to the last tag) up to the window plus a segment.
        #expect(spans.suffix(120).allSatisfy { $0 >= 59_960 && $0 <= 70_000 }, "\(spans.suffix(120))")
        let perSecond: Int64 = 25 * (405 + 15) + 50 * (42 + 15)
        let bound: Int64 = perSecond * 71 + 8 * 200
        #expect(largest <= bound, "\(largest) bytes at most")
        ring.close()
        #expect(!FileManager.default.fileExists(atPath: ring.directory), "the ring's files are removed at the end")
    }

    @Test func aReaderStartsAtTheKeyframeAtOrBeforeItsTimeWithTheSequenceHeadersAndClampsToTheOldest() async throws {
        let parent = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let ring = try Self.ring(window: 20, seconds: 40, in: parent)
        let span = try #require(ring.span)
        // 3.33 s segments (a sixth of the window, at least 2 s) begin at keyframes: 0, 4, 8 … 36 s; the one from 16 s is
        // the oldest whose successors do not cover the 20 s.
        #expect(span.lowerBound == 16_000 && span.upperBound == 39_980, "\(span)")
        let source = TimeShiftSource(live: FileByteSource(path: "/nonexistent"), ring: ring, retryInterval: .seconds(1))
        for (asked, expected) in [(Int64(25_500), UInt32(25_000)), (3_000, 16_000), (39_990, 39_000)] {
            let connection = try #require(source.makeConnection(startingAt: asked))
            var framer = FLVTagFramer()
            var tags: [FLVTag] = []
            while tags.count < 4, let event = try await connection.next() {
                if case .bytes(let bytes) = event { framer.append(bytes) }
                while let tag = try framer.nextTag() { tags.append(tag) }
            }
            await connection.close()
            #expect(tags.prefix(2).allSatisfy { $0.isSequenceHeader }, "a reader gets the sequence headers first")
            #expect(tags[2].isVideoKeyframe && tags[2].timestamp == expected, "asked \(asked): \(tags[2].timestamp)")
        }
        ring.close()
    }

    /// A thumbnail's keyframe: at or before a time from the window's start, in its segment's file; the oldest before
    /// the window, the newest past it.
    @Test func aThumbnailFindsTheKeyframeAtOrBeforeATimeInTheWindow() throws {
        let parent = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let ring = try Self.ring(window: 20, seconds: 40, in: parent)
        defer { ring.close() }
        // The window is 16 s to 39.98 s of the stream; a keyframe each second.
        for (offset, expected) in [(Int64(9_500), UInt32(25_000)), (0, 16_000), (-5_000, 16_000), (99_000, 39_000)] {
            let (path, at) = try #require(ring.keyframe(atWindowOffset: .milliseconds(offset)))
            let file = try #require(FileHandle(forReadingAtPath: path))
            try file.seek(toOffset: UInt64(at))
            let head = [UInt8](try #require(try file.read(upToCount: 13)))
            let tag = try #require(FLVTagFramer.header(head, at: 0, maximumTagSize: 1 << 20))
            #expect(tag.type == 9 && tag.timestamp == expected && head[11] >> 4 == 1, "\(offset) ms: \(tag)")
        }
        let empty = try TimeShiftRing(options: .init(window: .seconds(20), directory: parent, minimumFreeSpace: 0))
        #expect(empty.keyframe(atWindowOffset: .zero) == nil)
        empty.close()
    }

    /// A reader at the newest tag waits for the next one, and is told when the live connection is lost.
    @Test func aReaderAtTheLiveEdgeFollowsTheWriterAndIsToldOfALoss() async throws {
        let parent = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let ring = try Self.ring(window: 20, seconds: 2, in: parent)
        let connection = TimeShiftSource(live: FileByteSource(path: "/x"), ring: ring, retryInterval: .seconds(1))
            .makeConnection()
        var framer = FLVTagFramer()
        var times: [UInt32] = []
        // Everything written so far, from the newest keyframe (1 s).
        while times.last != 1_980 {
            guard case .bytes(let bytes)? = try await connection.next() else { continue }
            framer.append(bytes)
            while let tag = try framer.nextTag() { if !tag.isSequenceHeader { times.append(tag.timestamp) } }
        }
        #expect(times.first == 1_000)
        // Written from another task, before or while the reader waits: either way the reader gets it.
        let writer = Task { ring.append(Self.videoTag(2_000, keyframe: true)) }
        guard case .bytes(let bytes)? = try await connection.next() else { Issue.record("no bytes"); return }
        await writer.value
        framer.append(bytes)
        #expect(try framer.nextTag()?.timestamp == 2_000, "the next tag as it is written")
        ring.setStatus(.lost(TransportError(.serverClosed, "gone")))
        await #expect(throws: TransportError.self) { try await connection.next() }
        ring.close()
    }

    /// A second connection whose timestamps start again from 0 goes on after the first in the ring.
    @Test func aReconnectWhoseTimestampsStartAgainFollowsOn() throws {
        let parent = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let ring = try Self.ring(window: 60, seconds: 5, in: parent)
        ring.connectionBegan(serverAddress: "127.0.0.1:1")
        Self.feed(ring, seconds: 5)
        let span = try #require(ring.span)
        #expect(span.lowerBound == 0 && span.upperBound >= 9_960, "\(span)")
        ring.close()
    }

    @Test func theFramerCutsTheSameTagsFromAnyChunking() throws {
        var bytes: [UInt8] = [0x46, 0x4C, 0x56, 1, 5, 0, 0, 0, 9, 0, 0, 0, 0]
        let tags = Self.sequenceHeaders + [Self.videoTag(40, keyframe: true), Self.audioTag(60), Self.videoTag(80, keyframe: false)]
        for tag in tags { bytes += tag.framedBytes }
        for size in [1, 7, 13, bytes.count] {
            var framer = FLVTagFramer()
            var out: [FLVTag] = []
            for start in stride(from: 0, to: bytes.count, by: size) {
                framer.append(bytes[start..<min(bytes.count, start + size)])
                while let tag = try framer.nextTag() { out.append(tag) }
            }
            #expect(out == tags, "chunks of \(size)")
        }
        #expect(tags.map(\.isVideoKeyframe) == [false, false, true, false, false])
        var broken = FLVTagFramer()
        broken.append([0x46, 0x4C, 0x56, 1, 5, 0, 0, 0, 9, 0, 0, 0, 0, 0x55] + [UInt8](repeating: 0, count: 20))
        #expect(throws: FLVError.self) { _ = try broken.nextTag() }
    }
}
