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
}
