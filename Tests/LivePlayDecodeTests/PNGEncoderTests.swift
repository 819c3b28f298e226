import Foundation
import LivePlay
import LivePlayDecode
import LivePlayTesting
import Testing

/// PNG encoding and the picture conversion behind it, checked against the ffmpeg CLI: PNGs must decode to
/// the exact pixels encoded, and decoded frames must convert to RGB as libswscale converts them.
@Suite struct PNGEncoderTests {
    @Test func pngDecodesBackToTheSamePixels() throws {
        // 37x23: an odd width, so libavcodec's padded rows must be filled row by row.
        let picture = PictureTools.gradient(width: 37, height: 23)
        let png = try PNGEncoder().encode(picture)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        let path = try PictureTools.temporaryFile(png, extension: "png")
        let stream = try PictureTools.probe(path)
        #expect(stream.codec_name == "png")
        #expect(stream.pix_fmt == "rgb24")
        #expect(stream.width == 37 && stream.height == 23)
        #expect(try PictureTools.rgb24(decoding: path) == picture.pixels)
    }

    @Test func compressionLevelChangesTheSizeNotThePixels() throws {
        let picture = PictureTools.gradient(width: 64, height: 48)
        let stored = try PNGEncoder(compressionLevel: 0).encode(picture)
        let smallest = try PNGEncoder(compressionLevel: 9).encode(picture)
        #expect(stored.count > smallest.count)
        let path = try PictureTools.temporaryFile(stored, extension: "png")
        #expect(try PictureTools.rgb24(decoding: path) == picture.pixels)
    }

    @Test func anEmptyPictureIsAnError() {
        let error = #expect(throws: DecodeError.self) {
            try PNGEncoder().encode(RGBPicture(width: 0, height: 0))
        }
        #expect(error?.code == .unsupportedFormat)
    }

    /// Decoded pictures to RGB.
    @Suite struct Conversion {
        /// A solid red picture, in every layout the H.264 decoder produces, comes out red, and as ffmpeg's
        /// own conversion of the same file.
        @Test(arguments: ["yuv420p", "yuvj420p", "yuv422p", "yuv444p", "yuv420p10le"])
        func solidRedConvertsToRed(_ pixelFormat: String) throws {
            let path = try PictureTools.redFixture(pixelFormat: pixelFormat)
            let frame = try #require(try Decoded(path).video.first)
            #expect(frame.pixelFormat == pixelFormat)
            let picture = try frame.rgbPicture()
            #expect(picture.size == PictureSize(width: 320, height: 240))
            let worst = picture.pixels.enumerated().map { index, value in
                abs(Int(value) - (index % 3 == 0 ? 255 : 0))
            }.max()
            #expect(try #require(worst) <= 4)
            let reference = try PictureTools.rgb24(decoding: path, frames: 1)
            #expect(PictureTools.largestDifference(picture.pixels, reference) <= 3)
        }

        /// A busy picture (sharp coloured edges) agrees with libswscale on average (measured 0.65 a sample,
        /// from chroma interpolation at edges); BT.709 instead of BT.601 measured 8.7, full range 14.4.
        @Test func testPatternAgreesWithFFmpeg() throws {
            let path = try Fixture.h264AAC.path()
            let frame = try #require(try Decoded(path).video.first)
            let picture = try frame.rgbPicture()
            let reference = try PictureTools.rgb24(decoding: path, frames: 1)
            #expect(reference.count == picture.pixels.count)
            #expect(PictureTools.meanDifference(picture.pixels, reference) < 2.5)
        }

        /// Semi-planar layouts come out as the planar layout ffmpeg repacks them to, byte for byte.
        @Test(arguments: [("nv12", "yuv420p"), ("nv21", "yuv420p"), ("p010le", "yuv420p10le")])
        func semiPlanarPicturesSplitIntoPlanes(_ formats: (semiPlanar: String, planar: String)) throws {
            let planar = try PictureTools.rawTestPattern(pixelFormat: formats.planar)
            let semiPlanar = try PictureTools.rawTestPattern(pixelFormat: formats.semiPlanar)
            let frame = try VideoFrame(
                packedBytes: semiPlanar, width: 64, height: 48, pixelFormat: formats.semiPlanar)
            let split = try #require(frame.planarBytes())
            #expect(split.pixelFormat == formats.planar)
            #expect(split.bytes == planar)
            // And converts to the same RGB as the planar picture.
            let planarFrame = try VideoFrame(packedBytes: planar, width: 64, height: 48, pixelFormat: formats.planar)
            #expect(try frame.rgbPicture() == planarFrame.rgbPicture())
        }

        @Test func rgbPicturesConvertExactly() throws {
            let picture = PictureTools.gradient(width: 20, height: 10)
            let frame = try VideoFrame(packedBytes: picture.pixels, width: 20, height: 10, pixelFormat: "rgb24")
            #expect(try frame.rgbPicture() == picture)
            #expect(frame.planarBytes() == nil)
            #expect(frame.isFullRange)
        }

        @Test func paletteFormatsAreUnsupported() throws {
            // pal8: one byte an index, then a 256-entry palette.
            let frame = try VideoFrame(
                packedBytes: [UInt8](repeating: 0, count: 16 * 16 + 1024), width: 16, height: 16, pixelFormat: "pal8")
            let error = #expect(throws: DecodeError.self) { try frame.rgbPicture() }
            #expect(error?.code == .unsupportedFormat)
        }

        @Test func packedBytesMustMatchTheFormat() {
            let wrongSize = #expect(throws: DecodeError.self) {
                try VideoFrame(packedBytes: [1, 2, 3], width: 4, height: 4, pixelFormat: "yuv420p")
            }
            #expect(wrongSize?.code == .unsupportedFormat)
            let unknown = #expect(throws: DecodeError.self) {
                try VideoFrame(packedBytes: [], width: 4, height: 4, pixelFormat: "no-such-format")
            }
            #expect(unknown?.code == .unsupportedFormat)
        }

        @Test func framesMadeFromBytesPackBackToThem() throws {
            let bytes = try PictureTools.rawTestPattern(pixelFormat: "yuv420p")
            let frame = try VideoFrame(
                packedBytes: bytes, width: 64, height: 48, pixelFormat: "yuv420p",
                pts: MediaTimestamp(milliseconds: 40))
            #expect(frame.packedBytes() == bytes)
            #expect(frame.pts.milliseconds == 40)
            #expect(frame.planarBytes()?.bytes == bytes)
        }
    }

    /// Scaling, cropping, rotating and drawing ``RGBPicture``s.
    @Suite struct Geometry {
        /// 3x2: pixel values say where they came from (red = column, green = row).
        let picture = RGBPicture(
            width: 3, height: 2,
            pixels: (0..<2).flatMap { row in (0..<3).flatMap { column in [UInt8(column), UInt8(row), 9] } })

        private func positions(_ picture: RGBPicture) -> [[String]] {
            (0..<picture.height).map { y in
                (0..<picture.width).map { x in
                    let pixel = picture.pixel(x: x, y: y)
                    return "\(pixel.red)\(pixel.green)"
                }
            }
        }

        @Test func quarterTurnsAreClockwise() {
            #expect(positions(picture) == [["00", "10", "20"], ["01", "11", "21"]])
            // The left column becomes the top row, read bottom to top.
            #expect(
                positions(picture.rotated(clockwiseQuarterTurns: 1)) == [["01", "00"], ["11", "10"], ["21", "20"]])
            #expect(positions(picture.rotated(clockwiseQuarterTurns: 2)) == [["21", "11", "01"], ["20", "10", "00"]])
            #expect(
                positions(picture.rotated(clockwiseQuarterTurns: 3)) == [["20", "21"], ["10", "11"], ["00", "01"]])
            #expect(picture.rotated(clockwiseQuarterTurns: -1) == picture.rotated(clockwiseQuarterTurns: 3))
            #expect(picture.rotated(clockwiseQuarterTurns: 4) == picture)
        }

        @Test func croppingClipsToThePicture() {
            #expect(positions(picture.cropped(x: 1, y: 1, size: PictureSize(width: 5, height: 5))) == [["11", "21"]])
            #expect(picture.cropped(x: 0, y: 0, size: picture.size) == picture)
        }

        @Test func drawingClipsToTheCanvas() {
            let canvas = RGBPicture(width: 4, height: 3, red: 7, green: 7, blue: 7)
            let drawn = canvas.drawing(picture, atX: 2, y: 2)
            #expect(
                positions(drawn) == [["77", "77", "77", "77"], ["77", "77", "77", "77"], ["77", "77", "00", "10"]])
        }

        @Test func scalingInterpolatesBetweenPixelCentres() {
            let twoPixels = RGBPicture(width: 2, height: 1, pixels: [0, 0, 0, 200, 100, 50])
            let wide = twoPixels.scaled(to: PictureSize(width: 4, height: 1))
            // Output centres at 0.5, 1.5, 2.5, 3.5 map to input -0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
            #expect(wide.pixels == [0, 0, 0, 50, 25, 13, 150, 75, 38, 200, 100, 50])
            let solid = RGBPicture(width: 5, height: 3, red: 10, green: 20, blue: 30)
            #expect(
                solid.scaled(to: PictureSize(width: 7, height: 2))
                    == RGBPicture(width: 7, height: 2, red: 10, green: 20, blue: 30))
            #expect(solid.scaled(to: solid.size) == solid)
        }
    }
}

/// Helpers for picture tests: fixtures, the ffmpeg CLI as an oracle, comparisons.
enum PictureTools {
    struct ProbedStream: Decodable {
        var codec_name: String
        var pix_fmt: String?
        var width: Int
        var height: Int
    }

    /// Red 320x240 at 25 fps for 1 s, H.264 in FLV, in `pixelFormat` (libx264 picks the matching profile).
    static func redFixture(pixelFormat: String) throws -> String {
        try Fixtures.make(
            name: "red-\(pixelFormat)", extension: "flv",
            [
                "-f", "lavfi", "-i", "color=c=red:s=320x240:r=25", "-t", "1", "-c:v", "libx264", "-preset", "veryfast",
                "-pix_fmt", pixelFormat, "-g", "25", "-f", "flv",
            ])
    }

    /// One 64x48 `testsrc2` picture as raw bytes: made in yuv420p (or yuv420p10le), then repacked by ffmpeg
    /// into `pixelFormat` without any colour conversion.
    static func rawTestPattern(pixelFormat: String) throws -> [UInt8] {
        let base = pixelFormat.contains("10") ? "yuv420p10le" : "yuv420p"
        let planar = try Fixtures.make(
            name: "testsrc2-64x48-\(base)", extension: "yuv",
            ["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", "-pix_fmt", base, "-f", "rawvideo"])
        guard pixelFormat != base else { return try Fixtures.bytes(planar) }
        let output = try ExternalTool.check(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-f", "rawvideo", "-pix_fmt", base, "-s", "64x48",
                "-i", planar, "-pix_fmt", pixelFormat, "-f", "rawvideo", "-",
            ])
        return [UInt8](output.standardOutput)
    }

    /// A picture with a different colour at every pixel.
    static func gradient(width: Int, height: Int) -> RGBPicture {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                pixels += [
                    UInt8(x * 255 / max(1, width - 1)), UInt8(y * 255 / max(1, height - 1)),
                    UInt8((x * 7 + y * 13) % 256),
                ]
            }
        }
        return RGBPicture(width: width, height: height, pixels: pixels)
    }

    static func temporaryFile(_ bytes: [UInt8], extension fileExtension: String) throws -> String {
        let path = NSTemporaryDirectory() + "liveplay-picture-\(UUID().uuidString).\(fileExtension)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// ffprobe's description of the first video stream.
    static func probe(_ path: String) throws -> ProbedStream {
        struct Document: Decodable { var streams: [ProbedStream] }
        let output = try ExternalTool.check(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,pix_fmt,width,height",
                "-of", "json", path,
            ])
        return try #require(try JSONDecoder().decode(Document.self, from: output.standardOutput).streams.first)
    }

    /// The file's first `frames` pictures (all without a count) as ffmpeg converts them to `rgb24`.
    static func rgb24(decoding path: String, frames: Int? = nil) throws -> [UInt8] {
        let count = frames.map { ["-frames:v", String($0)] } ?? []
        let output = try ExternalTool.check(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", path] + count
                + ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        return [UInt8](output.standardOutput)
    }

    static func largestDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard a.count == b.count else { return Int.max }
        return zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    static func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        return Double(zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.count)
    }
}
