import LivePlayBuffering
import LivePlayCore
import Testing

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
        let due = queue.takeDue(at: Self.ms(45), lateBy: .milliseconds(40), duration: blockLength)
        #expect(due.map(\.frame) == [0, 20, 40], "all due blocks, in order")
        // The clock jumped (a skip): blocks ending more than 40 ms behind it are dropped, not played late.
        let afterSkip = queue.takeDue(at: Self.ms(150), lateBy: .milliseconds(40), duration: blockLength)
        #expect(afterSkip.map(\.frame) == [100, 120, 140])
        #expect(queue.droppedFrames == 2)
        #expect(queue.removeFirst()?.frame == 160)
    }
}
