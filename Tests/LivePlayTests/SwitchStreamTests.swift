import Foundation
import LivePlayLab
import LivePlayTesting
import Testing

@testable import LivePlay

/// `switchStream` between two renditions of one source (TXLivePlayer's semantics): at a keyframe both share, no
/// gap and no repeated picture; renditions stamped apart, or one that cannot be reached, fail with −2307 while the
/// stream playing goes on.
@Suite(.serialized) struct SwitchStreamTests {
    /// The high rendition and `other`, from servers started together (their timestamps are the files').
    static func servers(_ other: Fixture) async throws -> ([LiveFLVServer], String, String) {
        let high = try LiveFLVServer(
            path: try Fixture.renditionHigh.path(), configuration: .init(port: 0, threads: 1), logger: LabSessionTests.quiet())
        let low = try LiveFLVServer(
            path: try other.path(), configuration: .init(port: 0, threads: 1), logger: LabSessionTests.quiet())
        async let highPort = high.start()
        async let lowPort = low.start()
        let (h, l) = try await (highPort, lowPort)
        return ([high, low], "http://127.0.0.1:\(h)/live.flv", "http://127.0.0.1:\(l)/live.flv")
    }

    @Test func alignedRenditionsSwitchAtASharedKeyframeWithNoGapAndNoRepeat() async throws {
        let (servers, high, low) = try await Self.servers(.renditionLow)
        let (player, sink, listener) = PreloadTests.player(sound: true)
        try player.startPlay(high)
        #expect(await listener.wait(for: .playBegin))
        // The high rendition has played for a while (and ten pictures before the cut are there to compare).
        _ = await eventually { sink.pictures.count >= 30 }
        try player.switchStream(to: low)
        #expect(await listener.wait(for: .streamSwitchSucceeded, timeout: .seconds(8)), "\(listener.events.map(\.code))")
        // Ten pictures after the cut, to compare, and the low rendition playing on.
        _ = await eventually { sink.pictures.filter { $0.width == 160 }.count >= 30 }
        await player.stopPlay()
        for server in servers { await server.stop() }

        let event = try #require(listener.events.first { $0.code == .streamSwitchSucceeded })
        guard case .int(let cut)? = event.parameters["pts_ms"] else {
            Issue.record("no pts_ms: \(event.parameters)")
            return
        }
        print("switchStream: \(event.message)")
        let pictures = sink.pictures
        let firstLow = try #require(pictures.firstIndex { $0.width == 160 }, "the low rendition is shown")
        #expect(firstLow > 10, "the high one played first")
        #expect(pictures[firstLow].timing.pts.milliseconds == cut, "the first low picture is the keyframe at the cut")
        #expect(pictures[firstLow...].allSatisfy { $0.width == 160 }, "nothing of the high one after the cut")
        // The presented-frame trace around the cut: every picture once, none missing (30 fps: 33 or 34 ms apart).
        let around = pictures[(firstLow - 10)..<min(pictures.count, firstLow + 10)].map(\.timing.pts.milliseconds)
        let steps = zip(around, around.dropFirst()).map { $1 - $0 }
        print("pts around the cut: \(around)")
        #expect(steps.allSatisfy { (33...34).contains($0) }, "no gap and no repeat: \(steps)")
        #expect(!listener.events.contains { $0.code.isError }, "\(listener.events.filter { $0.code.isError })")
    }

    @Test(arguments: ["timestamps apart", "unreachable"]) func aRenditionThatCannotBeSwitchedToFailsAndPlaybackGoesOn(
        _ case: String
    ) async throws {
        let (servers, high, shifted) = try await Self.servers(.renditionShifted)
        let target = `case` == "unreachable" ? "http://127.0.0.1:\(try LoopbackPort.free())/live.flv" : shifted
        let (player, sink, listener) = PreloadTests.player()
        try player.startPlay(high)
        #expect(await listener.wait(for: .playBegin))
        try player.switchStream(to: target)
        #expect(await listener.wait(for: .streamSwitchFailed, timeout: .seconds(8)))
        let failedAt = sink.pictures.count
        _ = await eventually { sink.pictures.count > failedAt + 20 }
        await player.stopPlay()
        for server in servers { await server.stop() }
        let event = try #require(listener.events.first { $0.code == .streamSwitchFailed })
        print("switchStream to a rendition \(`case`): \(event.message)")
        if `case` == "unreachable" {
            #expect(event.message.contains("did not connect"))
        } else {
            #expect(event.message.contains("do not align"))
        }
        #expect(sink.pictures.count > failedAt + 20, "the high rendition plays on")
        #expect(sink.pictures.allSatisfy { $0.width == 320 })
        #expect(listener.events.last?.code == .sessionSummary && !listener.events.contains { $0.code == .streamSwitchSucceeded })
    }
}
