@testable import LivePlay
import LivePlayCore
import Testing

/// `PLAY_EVT_PLAY_BEGIN` means something was presented: the gate's promise, on virtual time.
@Suite struct BeginGateTests {
    @Test func aBeginWithNothingShownWaitsForThePictureAndIsToldThen() {
        var gate = BeginGate()
        gate.received(.video)
        #expect(!gate.allows(decodes: true, framesShown: 0))
        gate.hold(buffered: .seconds(1), at: .seconds(2))
        #expect(gate.reason == "no_decodable_video")
        #expect(gate.step(at: .milliseconds(2500), enginePlaying: true, decodes: true, framesShown: 0) == .none)
        #expect(gate.step(at: .milliseconds(2600), enginePlaying: true, decodes: true, framesShown: 1)
            == .begin(buffered: .seconds(1)))
        #expect(gate.reason == nil)
        #expect(gate.step(at: .seconds(4), enginePlaying: true, decodes: true, framesShown: 2) == .none, "told once")
    }

    @Test func aStreamThatNeverShowsIsWarnedAboutOnceAfterASecond() {
        var gate = BeginGate()
        gate.received(.video)
        gate.received(.audio)
        gate.soundDecoded()
        gate.hold(buffered: .seconds(1), at: .seconds(2))
        #expect(gate.step(at: .milliseconds(2999), enginePlaying: true, decodes: true, framesShown: 0) == .none)
        #expect(gate.step(at: .seconds(3), enginePlaying: true, decodes: true, framesShown: 0) == .warn(video: true))
        #expect(gate.step(at: .seconds(9), enginePlaying: true, decodes: true, framesShown: 0) == .none)
        #expect(gate.reason == "no_decodable_video", "sound alone does not make a stream with video play")
    }

    @Test func soundBeginsAStreamWithoutVideoAndProbeModeBeginsOnMedia() {
        var gate = BeginGate()
        gate.received(.audio)
        #expect(!gate.allows(decodes: true, framesShown: 0), "no sound decoded yet")
        gate.soundDecoded()
        #expect(gate.allows(decodes: true, framesShown: 0))
        var probe = BeginGate()
        probe.received(.video)
        #expect(probe.allows(decodes: false, framesShown: 0))
    }

    @Test func aHeldBeginIsDroppedWhenTheEngineStopsPlayingAndANewConnectionIsLearnedAgain() {
        var gate = BeginGate()
        gate.received(.video)
        gate.hold(buffered: .seconds(1), at: .zero)
        #expect(gate.step(at: .seconds(2), enginePlaying: false, decodes: true, framesShown: 0) == .none)
        #expect(gate.reason == nil)
        gate.connectionBegan()
        #expect(!gate.receivedVideo)
    }
}
