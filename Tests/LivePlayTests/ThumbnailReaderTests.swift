import Foundation
import LivePlayDecode
import LivePlayFLV
import LivePlayTesting
import LivePlayTransport
import Testing

@testable import LivePlay

/// The seek bar's hover preview: the picture of the keyframe at or before the time asked for, as playback decodes
/// it, scaled to fit; on the reader's own thread.
@Suite struct ThumbnailReaderTests {
    /// Every picture of a file as the player decodes it, by presentation time in ms.
    static func decodedPictures(_ path: String) throws -> [Int64: RGBPicture] {
        let reader = try MediaReader(path: path, options: MediaReader.Options(decodes: true))
        var pictures: [Int64: RGBPicture] = [:]
        while let event = try reader.next() {
            if case .videoFrame(let frame) = event { pictures[frame.pts.milliseconds] = try frame.rgbPicture() }
        }
        return pictures
    }

    /// Asks `reader` (delivering into `delivered`) for each time in turn, and checks its picture is the keyframe
    /// expected, as decoded and scaled to 160×120, and not the picture a second later.
    static func expectKeyframes(
        _ cases: [(seconds: Double, keyframe: Int64)], from reader: ThumbnailReader,
        delivered: Locked<[Double: RGBPicture?]>, pictures: [Int64: RGBPicture]
    ) async throws {
        let size = PictureSize(width: 160, height: 120)
        for (seconds, _) in cases {
            reader.request(at: seconds, size: size)
            #expect(await eventually { delivered.get()[seconds] != nil }, "a picture for \(seconds) s")
        }
        for (seconds, keyframe) in cases {
            let picture = try #require(delivered.get()[seconds] ?? nil, "\(seconds) s")
            #expect(picture.width == 160 && picture.height == 120)
            let expected = try #require(pictures[keyframe]).scaled(to: size)
            #expect(picture == expected, "\(seconds) s shows the keyframe at \(keyframe) ms")
            let other = try #require(pictures[keyframe + 1000]).scaled(to: size)
            #expect(picture != other, "not the picture a second later")
        }
    }

    @Test func eachTimeGetsItsKeyframeBeforeItScaledToFit() async throws {
        // 10 s of 320×240 at 25 fps, a keyframe every 2 s; each picture of testsrc2 differs from the next.
        let path = try Fixture.longH264AAC.path()
        let pictures = try Self.decodedPictures(path)
        let delivered = Locked<[Double: RGBPicture?]>([:])
        let reader = ThumbnailReader(path: path) { seconds, picture in
            delivered.withLock { $0[seconds] = picture }
        }
        defer { reader.stop() }
        // (asked for, the keyframe expected): within a GOP, on a keyframe, before the first, past the end. The
        // keyframes are at 23 ms (after the first sound, at 0) and every 2 s after it.
        try await Self.expectKeyframes(
            [(5.3, 4023), (4.023, 4023), (4.0, 2023), (0, 23), (60, 8023)], from: reader, delivered: delivered,
            pictures: pictures)
    }

    /// A file cut off mid-tag (a download stopped, garbage after it): the keyframes before the cut still preview.
    @Test func aCutFileStillPreviewsTheKeyframesBeforeTheCut() async throws {
        let source = try Fixture.longH264AAC.path()
        let pictures = try Self.decodedPictures(source)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let path = NSTemporaryDirectory() + "liveplay-cut-\(UUID().uuidString).flv"
        try (bytes.prefix(bytes.count / 2) + Data(repeating: 0xFF, count: 64)).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let delivered = Locked<RGBPicture??>(nil)
        let reader = ThumbnailReader(path: path) { _, picture in delivered.set(picture) }
        defer { reader.stop() }
        reader.request(at: 60, size: PictureSize(width: 320, height: 240))
        #expect(await eventually { delivered.get() != nil })
        let picture = try #require(delivered.get() ?? nil, "a keyframe from the first half")
        let keyframes = [23, 2023, 4023, 6023, 8023].compactMap { pictures[Int64($0)] }
        #expect(keyframes.contains(picture), "one of the file's keyframes, as decoded")
        #expect(picture != pictures[8023], "not the last, which was cut off")
    }

    /// A time-shift window: the same file's tags recorded into a ring, times asked from the window's start (its
    /// first keyframe, at 23 ms); no ring, no picture.
    @Test func aTimeShiftWindowPreviewsItsKeyframes() async throws {
        let path = try Fixture.longH264AAC.path()
        let pictures = try Self.decodedPictures(path)
        let parent = NSTemporaryDirectory() + "liveplay-ring-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let ring = try TimeShiftRing(options: .init(window: .seconds(60), directory: parent, minimumFreeSpace: 0))
        defer { ring.close() }
        var framer = FLVTagFramer()
        framer.append([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        while let tag = try framer.nextTag() { ring.append(tag) }
        let shared = Locked<TimeShiftRing?>(ring)
        let delivered = Locked<[Double: RGBPicture?]>([:])
        let reader = ThumbnailReader(timeShiftRing: { shared.get() }) { seconds, picture in
            delivered.withLock { $0[seconds] = picture }
        }
        defer { reader.stop() }
        // From the window's start: the first keyframe is its start.
        try await Self.expectKeyframes(
            [(5.3, 4023), (4.0, 4023), (3.9, 2023), (0, 23), (60, 8023)], from: reader, delivered: delivered,
            pictures: pictures)
        shared.set(nil)
        reader.request(at: 1, size: PictureSize(width: 160, height: 120))
        #expect(await eventually { delivered.get()[1] != nil && delivered.get()[1]! == nil }, "no ring, no picture")
    }

    /// A file over HTTP with a keyframe index (`-flvflags add_keyframe_index`), from nginx: the same keyframes, by
    /// byte ranges only (the index and sequence header from the first 256 KiB, then each keyframe's tag); a file
    /// without the index gives no picture, and is not read whole.
    @Test func aFileOverHTTPPreviewsItsKeyframesByByteRanges() async throws {
        let indexed = try Fixtures.make(
            name: "h264-aac-10s-indexed", extension: "flv",
            Fixture.longH264AAC.ffmpegArguments + ["-flvflags", "add_keyframe_index", "-f", "flv"])
        let plain = try Fixture.longH264AAC.path()
        let directory = NSTemporaryDirectory() + "liveplay-thumbs-http-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: indexed, toPath: directory + "/indexed.flv")
        try FileManager.default.copyItem(atPath: plain, toPath: directory + "/plain.flv")
        if let reason = NginxRTMPServer.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("nginx is required under CI: \(reason)") }
            return
        }
        let server = try NginxRTMPServer(staticFiles: directory)
        defer { server.stop() }
        let delivered = Locked<[Double: RGBPicture?]>([:])
        let reader = ThumbnailReader(url: server.fileURL("indexed.flv"), options: TransportOptions()) {
            seconds, picture in delivered.withLock { $0[seconds] = picture }
        }
        defer { reader.stop() }
        // The index's times are the keyframes' decode times, up to two B-frames (80 ms) before the pictures' own,
        // as a seek by the index lands: 4.0 s is already the keyframe shown at 4.023 s.
        try await Self.expectKeyframes(
            [(5.3, 4023), (4.0, 4023), (3.9, 2023), (0, 23), (60, 8023)], from: reader, delivered: delivered,
            pictures: try Self.decodedPictures(indexed))
        reader.stop()
        let requests = server.accessLog.split(separator: "\n")
        #expect(!requests.isEmpty && requests.allSatisfy { $0.hasPrefix("206 bytes=") }, "\(requests)")

        let none = Locked<[Double]>([])
        let unindexed = ThumbnailReader(url: server.fileURL("plain.flv"), options: TransportOptions()) {
            seconds, picture in if picture == nil { none.withLock { $0.append(seconds) } }
        }
        defer { unindexed.stop() }
        unindexed.request(at: 4, size: PictureSize(width: 160, height: 120))
        #expect(await eventually { none.get() == [4] }, "no keyframe index, no picture")
        #expect(server.accessLog.split(separator: "\n").filter { $0.contains("plain.flv") }.count == 1)
    }

    @Test func aFileThatIsNotFLVGivesNoPicture() async throws {
        let path = NSTemporaryDirectory() + "liveplay-not-flv-\(UUID().uuidString)"
        try Data("not a video".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let delivered = Locked<[Double]>([])
        let reader = ThumbnailReader(path: path) { seconds, picture in
            if picture == nil { delivered.withLock { $0.append(seconds) } }
        }
        defer { reader.stop() }
        reader.request(at: 1, size: PictureSize(width: 160, height: 90))
        #expect(await eventually { delivered.get() == [1] })
    }
}
