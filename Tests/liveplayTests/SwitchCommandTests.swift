import Foundation
import LivePlayLab
import LivePlayTesting
import Testing

@testable import liveplay

/// `liveplay URL1 URL2 … --preload N --switch-every S`: the streams switched through on a timer, the nearest ones
/// preloaded, every switch logged with its timing.
@Suite(.serialized) struct SwitchCommandTests {
    struct Line: Decodable {
        var kind: String
        var url: String?
        var index: Int?
        var preloaded: Bool?
        var code: Int?
        var params: [String: JSONValue]?
        var pts_ms: Int64?
    }

    enum JSONValue: Decodable, Equatable {
        case number(Double), bool(Bool), string(String)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    /// Three live servers of different streams (320×240 with sound, 318×238 without, the flash-and-beep).
    static func threeStreams(query: String = "") async throws -> ([LiveFLVServer], [String]) {
        var servers: [LiveFLVServer] = []
        var urls: [String] = []
        for fixture in [Fixture.longH264AAC, .videoOnly, .flashBeep] {
            let server = try LiveFLVServer(path: try fixture.path(), configuration: .init(port: 0, threads: 1))
            urls.append("http://127.0.0.1:\(try await server.start())/live.flv\(query)")
            servers.append(server)
        }
        return (servers, urls)
    }

    @Test func threeStreamsSwitchedEverySecondWithTheNextPreloaded() async throws {
        let (servers, urls) = try await Self.threeStreams(query: "?token=secret")
        let output = try Binary.run(urls + ["--preload", "2", "--switch-every", "1.5", "-t", "6.5", "--json"])
        for server in servers { await server.stop() }
        #expect(output.status == 0, "\(output.standardError)")
        let lines = try output.text.split(separator: "\n").map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
        let switches = lines.filter { $0.kind == "switch" }
        let switched = lines.filter { $0.code == 9012 }
        print("switches: \(switched.compactMap { $0.params?["switch_ms"] })")
        #expect(switches.map(\.index) == [1, 2, 0, 1], "every 1.5 s, wrapping around")
        #expect(switches.allSatisfy { $0.preloaded == true }, "the next stream was preloaded each time")
        #expect(switches.allSatisfy { $0.url?.hasSuffix("?token=***") == true }, "the token stays out of the log")
        #expect(!output.text.contains("secret"))
        #expect(switched.count == 4, "each switch's first picture is reported")
        for line in switched {
            #expect(line.params?["preloaded"] == .bool(true))
            guard case .number(let milliseconds)? = line.params?["switch_ms"] else {
                Issue.record("no switch_ms: \(String(describing: line.params))")
                continue
            }
            #expect(milliseconds < 100, "the poster within a tick or two of the switch")
        }
    }

    /// `--switch-stream`: the presented-frame trace (`--trace-frames`) runs on through the switch between two
    /// renditions, every picture once and none missing, and 2015 names the keyframe of the cut.
    @Test func switchStreamLeavesNoGapInTheFrameTrace() async throws {
        let high = try LiveFLVServer(path: try Fixture.renditionHigh.path(), configuration: .init(port: 0, threads: 1))
        let low = try LiveFLVServer(path: try Fixture.renditionLow.path(), configuration: .init(port: 0, threads: 1))
        async let highPort = high.start()
        async let lowPort = low.start()
        let (h, l) = try await (highPort, lowPort)
        let output = try Binary.run([
            "http://127.0.0.1:\(h)/live.flv", "--switch-stream", "http://127.0.0.1:\(l)/live.flv",
            "--switch-stream-after", "1.5", "-t", "5", "--json", "--trace-frames",
        ])
        await high.stop()
        await low.stop()
        #expect(output.status == 0, "\(output.standardError)")
        let lines = try output.text.split(separator: "\n").map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
        let switched = try #require(lines.first { $0.code == 2015 }, "PLAY_EVT_STREAM_SWITCH_SUCC")
        guard case .number(let cut)? = switched.params?["pts_ms"] else {
            Issue.record("no pts_ms: \(String(describing: switched.params))")
            return
        }
        let pts = lines.compactMap(\.pts_ms)
        let at = try #require(pts.firstIndex(of: Int64(cut)), "the keyframe of the cut was shown")
        let around = Array(pts[max(0, at - 15)..<min(pts.count, at + 15)])
        let steps = zip(around, around.dropFirst()).map { $1 - $0 }
        #expect(steps.allSatisfy { (33...34).contains($0) }, "no gap and no repeat around \(cut): \(around)")
    }

    @Test func switchingOptionsNeedSeveralURLs() throws {
        #expect(try Binary.run(["http://127.0.0.1:1/x.flv", "--preload", "1"]).status == ExitStatus.usage)
        #expect(try Binary.run(["http://127.0.0.1:1/x.flv", "--switch-every", "2"]).status == ExitStatus.usage)
        #expect(try Binary.run(["http://127.0.0.1:1/a.flv", "http://127.0.0.1:1/b.flv", "--preload", "9"]).status == ExitStatus.usage)
    }
}
