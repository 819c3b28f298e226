import LivePlayBuffering
import LivePlayCore
import Testing
import Synchronization

@Suite struct PresentationQueueTests {
    static func ms(_ value: Int64) -> MediaTimestamp { MediaTimestamp(milliseconds: value) }

    @Test func videoGetsTheNewestDueFrameAndCountsTheLateOnesAsDropped() throws {
        var queue = PresentationQueue<Int>(capacity: 16)
        for index in 0..<10 { queue.insert(index, pts: Self.ms(Int64(index) * 40)) }
        #expect(queue.nextDue(at: Self.ms(-1)) == nil, "nothing before the first frame's time")
        let onTime = queue.nextDue(at: Self.ms(0))
        let first = try #require(onTime)
        #expect(first.frame == 0 && first.skipped == 0)
        #expect(queue.nextDue(at: Self.ms(39)) == nil, "the next frame waits for its time")
        // A tick that comes 100 ms late shows the right picture, not a backlog.
        let lateTick = queue.nextDue(at: Self.ms(160))
        let late = try #require(lateTick)
        #expect(late.frame == 4 && late.pts == Self.ms(160) && late.skipped == 3)
        #expect(queue.droppedFrames == 3)
        #expect(queue.count == 5)
    }

    @Test func framesArePresentedInPresentationOrderWhateverTheInsertOrder() {
        var queue = PresentationQueue<Int64>(capacity: 16)
        for pts: Int64 in [0, 120, 40, 80, 200, 160] { queue.insert(pts, pts: Self.ms(pts)) }
        var shown: [Int64] = []
        var position: Int64 = 0
        while !queue.isEmpty {
            if let due = queue.nextDue(at: Self.ms(position)) { shown.append(due.frame) }
            position += 10
        }
        #expect(shown == [0, 40, 80, 120, 160, 200])
        #expect(queue.droppedFrames == 0)
    }

    @Test func theCapacityBoundsWhatADecoderRunningAheadCanQueue() {
        var queue = PresentationQueue<Int>(capacity: 4)
        for index in 0..<100 {
            queue.insert(index, pts: Self.ms(Int64(index)))
            #expect(queue.count <= 4)
        }
        #expect(queue.droppedFrames == 96)
        #expect(queue.nextPTS == Self.ms(96), "the newest frames are kept")
    }

    @Test func audioTakesEveryDueBlockButDropsBlocksTooLateToPlayInSync() {
        var queue = PresentationQueue<Int64>(capacity: 64)
        for index: Int64 in 0..<10 { queue.insert(index * 20, pts: Self.ms(index * 20)) }
        let blockLength = { (_: Int64) in Duration.milliseconds(20) }
        var due: [Int64] = []
        queue.takeDue(at: Self.ms(45), lateBy: .milliseconds(40), duration: blockLength) { frame, _ in due.append(frame) }
        #expect(due == [0, 20, 40], "all due blocks, in order")
        // The clock jumped (a skip): blocks ending more than 40 ms behind it are dropped, not played late.
        var afterSkip: [Int64] = []
        queue.takeDue(at: Self.ms(150), lateBy: .milliseconds(40), duration: blockLength) { frame, _ in
            afterSkip.append(frame)
        }
        #expect(afterSkip == [100, 120, 140])
        #expect(queue.droppedFrames == 2)
        #expect(queue.removeFirst()?.frame == 160)
    }
}

@Suite struct PresentationQueueMemoryTests {
    static func ms(_ value: Int64) -> MediaTimestamp { MediaTimestamp(milliseconds: value) }

    /// A frame that counts its copies alive, as a decoder's pooled picture buffer would.
    final class Picture: Sendable {
        static let alive = Counter()
        let pts: Int64
        init(_ pts: Int64) {
            self.pts = pts
            Self.alive.add(1)
        }
        deinit { Self.alive.add(-1) }
    }

    final class Counter: Sendable {
        private let value = Mutex(0)
        func add(_ delta: Int) { value.withLock { $0 += delta } }
        var count: Int { value.withLock { $0 } }
    }

    @Test func aFrameDroppedOverCapacityIsReleasedAtOnceNotWhenTheQueueCompacts() {
        let before = Picture.alive.count
        var queue = PresentationQueue<Picture>(capacity: 4)
        for index: Int64 in 0..<40 { queue.insert(Picture(index), pts: Self.ms(index)) }
        #expect(Picture.alive.count - before == 4, "only the frames the queue holds are alive")
        _ = queue.nextDue(at: Self.ms(37))
        #expect(Picture.alive.count - before == 2, "taken and skipped frames are gone")
        queue.removeAll()
        #expect(Picture.alive.count == before)
    }

    @Test func aBurstDecodedAtOnceHoldsOnlyTheNewestDuePicture() throws {
        var queue = PresentationQueue<Int64>(capacity: 16)
        // A GOP cache decoded in one turn: 12 pictures, all but the last two already due at 400 ms.
        for pts: Int64 in stride(from: 0, to: 480, by: 40) {
            queue.insert(pts, pts: Self.ms(pts))
            queue.dropSuperseded(at: Self.ms(400))
        }
        #expect(queue.count == 2, "the newest due picture and the one still ahead")
        let shownNow = queue.nextDue(at: Self.ms(400))
        let shown = try #require(shownNow)
        #expect(shown.frame == 400 && shown.skipped == 10, "the dropped pictures are counted as skipped")
        #expect(queue.droppedFrames == 10)
        #expect(queue.nextDue(at: Self.ms(440))?.skipped == 0)
    }
}
