import LivePlayCore
import Testing

@Suite struct EncodedPacketTests {
    /// What a probe buffers: the packet's timing and size, not its bytes.
    @Test func droppingThePayloadKeepsTimingAndSize() {
        let packet = EncodedPacket(
            kind: .video, dts: MediaTimestamp(milliseconds: 40), pts: MediaTimestamp(milliseconds: 80), isKeyframe: true,
            payload: Array(repeating: 7, count: 4321))
        let probe = packet.droppingPayload()
        #expect(probe.payload.isEmpty)
        #expect(probe.size == 4321)
        #expect(probe.kind == .video && probe.dts == packet.dts && probe.pts == packet.pts && probe.isKeyframe)
    }

    /// A payload changed afterwards is what the size says.
    @Test func theSizeFollowsThePayload() {
        var packet = EncodedPacket(
            kind: .audio, dts: MediaTimestamp(milliseconds: 0), pts: MediaTimestamp(milliseconds: 0), isKeyframe: false,
            payload: [1, 2, 3])
        packet.payload = Array(repeating: 0, count: 200)
        #expect(packet.size == 200)
    }
}
