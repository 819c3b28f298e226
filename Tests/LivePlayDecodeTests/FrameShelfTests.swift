import LivePlay
@testable import LivePlayDecode
import LivePlayTesting
import Testing

/// Decoded frames are reused once everyone has let go of them (``FrameShelf``), and a frame somebody holds is never
/// the one reused: every picture still hashes as ffmpeg's `framemd5` does, the held ones too.
@Suite struct FrameShelfTests {
    @Test func framesLetGoOfAreReusedAndHeldOnesStayIntact() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let reader = try MediaReader(
            path: path, options: MediaReader.Options(decodes: true, decoder: DecoderOptions(threadCount: 1)))
        var hashes: [FrameHash] = []
        var held: [(frame: VideoFrame, md5: String)] = []
        weak var firstBuffer: FrameBuffer?
        var reusedFirst = false
        while let event = try reader.next() {
            guard case .videoFrame(let frame) = event else { continue }
            let md5 = frame.md5()
            hashes.append(FrameHash(size: frame.packedSize, md5: md5))
            if hashes.count == 1 { firstBuffer = frame.buffer }
            if hashes.count > 1, frame.buffer === firstBuffer { reusedFirst = true }
            // Every tenth picture is kept to the end, as a sink that holds the last picture would.
            if hashes.count % 10 == 0 { held.append((frame, md5)) }
        }
        #expect(hashes == (try Oracle.frameHashes(path, video: true)))
        #expect(held.allSatisfy { $0.frame.md5() == $0.md5 }, "held pictures are not overwritten by later ones")
        #expect(reusedFirst, "the first picture's buffer, let go of, is reused")
    }
}
