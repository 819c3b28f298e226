import Foundation
import LivePlayFuzzing
import LivePlayTesting
import Testing

/// Every input a fuzzer ever failed on (`fuzz/regressions/<Fuzzer>/`) replays clean, and the fuzz targets'
/// own checks hold on real streams (so a target that reported everything, or nothing, is caught here too).
@Suite struct FuzzRegressionTests {
    static let regressions: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("fuzz/regressions")

    static var cases: [(fuzzer: String, path: String)] {
        FuzzTargets.all.keys.sorted().flatMap { fuzzer in
            let directory = regressions.appendingPathComponent(fuzzer)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.sorted().map { (fuzzer, directory.appendingPathComponent($0).path) }
        }
    }

    @Test func everyRecordedFailureNowReplaysClean() throws {
        let cases = Self.cases
        #expect(!cases.isEmpty, "fuzz/regressions holds the inputs found so far")
        for (fuzzer, path) in cases {
            let input = try Fixtures.bytes(path)
            let target = try #require(FuzzTargets.all[fuzzer])
            #expect(target(input) == nil, "\(fuzzer) \(path)")
        }
    }

    @Test(arguments: [Fixture.h264AAC, .h264BFramesAAC, .audioOnly])
    func realStreamsDemuxTheSameInAnyChunking(_ fixture: Fixture) throws {
        let stream = try Fixtures.bytes(try fixture.path())
        for seed: UInt8 in [0, 1, 99, 255] {
            #expect(FuzzTargets.flvDemuxer([seed] + stream) == nil, "seed \(seed)")
        }
    }

    /// A real stream's tags as RTMP messages (`FuzzRTMP`'s records) and as HTTP responses (`FuzzHTTPFLV`'s).
    @Test(arguments: [Fixture.h264AAC, .audioOnly])
    func realStreamsPassTheRTMPAndHTTPTargets(_ fixture: Fixture) throws {
        let stream = try Fixtures.bytes(try fixture.path())
        var records: [UInt8] = [24, 6, 0, 0, 0, 0, 0, 40, 9, 1, 0, 0, 0]
        var offset = 13
        while offset + 11 <= stream.count {
            let size = Int(stream[offset + 1]) << 16 | Int(stream[offset + 2]) << 8 | Int(stream[offset + 3])
            guard size <= 0xFFFF, offset + 11 + size <= stream.count else { break }
            records += [1, stream[offset], UInt8(size >> 8), UInt8(size & 0xFF)]
            records += stream[(offset + 11)..<(offset + 11 + size)]
            offset += 11 + size + 4
        }
        #expect(offset > 13 + 11, "the fixture has tags")
        #expect(FuzzTargets.rtmpMessages(records) == nil)
        let file = [0, 100, 7] + Array("Content-Length: \(stream.count)\n\n".utf8) + stream
        #expect(FuzzTargets.httpFLVResponse(file) == nil)
        #expect(FuzzTargets.httpFLVResponse([0, 100, 200] + Array("\n".utf8) + stream) == nil)
    }
}
