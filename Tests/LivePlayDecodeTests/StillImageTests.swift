import Foundation
import LivePlay
import LivePlayDecode
import LivePlayTesting
import Testing

/// Posters: PNG (RGB, paletted, grey with alpha) and JPEG files made by the ffmpeg CLI decode to the pixels ffmpeg
/// itself reads from them; what is not a picture, or claims a size past the bound, is an error, never an allocation.
@Suite struct StillImageTests {
    /// A 64×36 `testsrc2` frame written by ffmpeg as `format`'s file, with `pixelFormat`.
    static func picture(_ fileExtension: String, pixelFormat: String) throws -> String {
        let path = NSTemporaryDirectory() + "liveplay-still-\(UUID().uuidString).\(fileExtension)"
        try ExternalTool.check(
            "ffmpeg",
            ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=64x36", "-frames:v", "1",
             "-pix_fmt", pixelFormat, path])
        return path
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test(arguments: ["rgb24", "pal8", "rgba", "ya8"])
    func aPNGDecodesToThePixelsFFmpegReads(pixelFormat: String) throws {
        let path = try Self.picture("png", pixelFormat: pixelFormat)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let picture = try StillImage.decode(try Self.bytes(path))
        #expect(picture.size == PictureSize(width: 64, height: 36))
        // ffmpeg's own reading, flattened to RGB (alpha dropped, as liveplay drops it: testsrc2 is opaque).
        let expected = try PictureTools.rgb24(decoding: path)
        #expect(picture.pixels == expected, "\(pixelFormat)")
    }

    @Test func aJPEGDecodesCloseToTheSourcePixels() throws {
        let path = try Self.picture("jpg", pixelFormat: "yuvj420p")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let picture = try StillImage.decode(try Self.bytes(path))
        #expect(picture.size == PictureSize(width: 64, height: 36))
        let expected = try PictureTools.rgb24(decoding: path)
        let largest = zip(picture.pixels, expected).map { abs(Int($0) - Int($1)) }.max() ?? 255
        // liveplay's conversion takes the nearest chroma sample; libswscale's interpolates.
        #expect(largest <= 40, "the largest difference from ffmpeg's reading: \(largest)")
    }

    @Test func whatIsNotAPictureIsAnError() throws {
        #expect(throws: DecodeError.self) { try StillImage.decode(Array("<html>".utf8)) }
        let error = #expect(throws: DecodeError.self) { try StillImage.decode(Array("GIF89a".utf8)) }
        #expect(error?.code == .unsupportedFormat)
        let path = try Self.picture("png", pixelFormat: "rgb24")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let truncated = Array(try Self.bytes(path).prefix(60))
        #expect(throws: DecodeError.self) { try StillImage.decode(truncated) }
    }

    /// A PNG whose header claims 60,000 × 60,000 (10.8 GB as RGB) is refused before anything of that size exists.
    @Test func aPictureClaimingAHugeSizeIsRefused() throws {
        let path = try Self.picture("png", pixelFormat: "rgb24")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var bytes = try Self.bytes(path)
        // IHDR's width and height: bytes 16–23, big-endian.
        for offset in [16, 20] { bytes.replaceSubrange(offset..<(offset + 4), with: [0x00, 0x00, 0xEA, 0x60]) }
        #expect(throws: DecodeError.self) { try StillImage.decode(bytes) }
        let tooLong = [UInt8](repeating: 0, count: StillImage.maximumBytes + 1)
        let error = #expect(throws: DecodeError.self) { try StillImage.decode(tooLong) }
        #expect(error?.code == .tooLarge)
    }

    @Test func aPosterIsFittedWithItsShapeKept() {
        let wide = RGBPicture(width: 4000, height: 1000, red: 10)
        #expect(wide.fitted(within: PictureSize(width: 1920, height: 1080)).size == PictureSize(width: 1920, height: 480))
        let small = RGBPicture(width: 320, height: 180)
        #expect(small.fitted(within: PictureSize(width: 1920, height: 1080)) == small)
    }
}
