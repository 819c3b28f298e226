import LivePlay
import LivePlayCore
import LivePlayTesting
import Testing

/// The A/V measure the real-time tests rest on (``RecordingSink/audioVideoOffsets(pictures:sounds:leavingOutStallsOf:)``),
/// on hand-made hand-over times: a pause of both sound and picture is not charged to the sound, and a picture or
/// a sound late on its own is.
@Suite struct AudioVideoOffsetTests {
    let start = ContinuousClock.now

    /// Pictures every 40 ms and sound blocks every 20 ms of media, from 0 to 1 s, each handed over at `start` plus
    /// its pts plus what `pictureDelay` / `soundDelay` give for that pts.
    func measure(
        pictureDelay: (Int64) -> Int64 = { _ in 0 }, soundDelay: (Int64) -> Int64 = { _ in 0 }
    ) -> (offsets: [Int64], leftOut: Int, acrossPauses: Int) {
        let pictures = stride(from: Int64(0), through: 1000, by: 40).map { pts in
            RecordingSink.Picture(
                timing: FrameTiming(
                    pts: MediaTimestamp(milliseconds: pts), position: MediaTimestamp(milliseconds: pts), rate: 1,
                    droppedBefore: 0),
                width: 16, height: 16, at: start + .milliseconds(pts + pictureDelay(pts)))
        }
        let sounds = stride(from: Int64(0), through: 960, by: 20).map { pts in
            RecordingSink.Sound(
                pts: MediaTimestamp(milliseconds: pts), rate: 1, frames: 960, sampleRate: 48000,
                at: start + .milliseconds(pts + soundDelay(pts)))
        }
        return RecordingSink.audioVideoOffsets(pictures: pictures, sounds: sounds)
    }

    @Test func soundAndPictureOnTimeAreZeroApart() {
        let (offsets, leftOut, acrossPauses) = measure()
        #expect(offsets.count >= 45 && offsets.allSatisfy { $0 == 0 }, "\(offsets)")
        #expect(leftOut == 0 && acrossPauses == 0)
    }

    /// The session's thread not run for 120 ms from just after the picture at 200 ms: everything after it is
    /// handed over 120 ms late, together. Interpolating between the pictures at 200 and 240 would say −60 ms.
    @Test func aPauseOfBothIsNotChargedToTheSound() {
        let (offsets, _, acrossPauses) = measure(pictureDelay: { $0 > 200 ? 120 : 0 }, soundDelay: { $0 > 200 ? 120 : 0 })
        #expect(acrossPauses == 2, "the blocks at 220 and 240 ms lie in the pause")
        #expect(offsets.map { abs($0) }.max() == 0, "\(offsets)")
    }

    /// A picture 100 ms late while the sound went on is a real gap between them, and shows as one.
    @Test func aPictureLateOnItsOwnIsMeasured() {
        let (offsets, _, acrossPauses) = measure(pictureDelay: { $0 == 240 ? 100 : 0 })
        #expect(acrossPauses == 0)
        #expect(offsets.max() == 100, "the block of the late picture's own instant: \(offsets)")
        #expect(offsets.contains(50), "the block at 220 ms, halfway to it")
    }

    /// Sound 100 ms late from 220 ms on, the pictures on time: the sound is behind, whatever the pictures did.
    @Test func soundLateOnItsOwnIsMeasured() {
        let (offsets, _, acrossPauses) = measure(soundDelay: { $0 >= 220 ? 100 : 0 })
        #expect(acrossPauses == 0)
        #expect(offsets.min() == -100, "\(offsets)")
    }
}
