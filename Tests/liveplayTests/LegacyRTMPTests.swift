import Foundation
import LivePlayTesting
import Testing

/// A legacy RTMP server nobody here wrote (rtmplite3), whose AMF0 reader rejects Enhanced RTMP's `connect`: liveplay
/// connects again at once with librtmp's plain one and plays; `--rtmp-enhanced on` fails as told, `off` never asks
/// (issue 45, point 10). ffmpeg publishes.
@Suite(.serialized) struct LegacyRTMPTests {
    /// Runs `body` with the server up and ffmpeg publishing `news` to it; stops both after.
    static func withServer(_ body: (LegacyRTMPServer) throws -> Void) throws {
        if let reason = LegacyRTMPServer.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("needed under CI: \(reason)") }
            return
        }
        let server = try LegacyRTMPServer()
        let publisher = try FFmpegPublisher(file: try Fixture.longH264AAC.path(), url: server.url(stream: "news"))
        defer {
            publisher.stop()
            server.stop()
        }
        // The publisher's own connect (ffmpeg's, plain) is accepted before liveplay comes.
        guard LoopbackPort.wait(timeout: .seconds(10), until: { server.log.contains("connect accepted") }) else {
            throw LoopbackError("ffmpeg did not connect: \(publisher.log.suffix(500)) \(server.log.suffix(500))")
        }
        try body(server)
    }

    static func count(_ text: String, in log: String) -> Int {
        log.components(separatedBy: text).count - 1
    }

    @Test func aServerThatRejectsTheEnhancedConnectGetsThePlainOneAndPlays() throws {
        try Self.withServer { server in
            let output = try Binary.run([server.url(stream: "news"), "-t", "4", "--json", "--log-level", "debug"])
            #expect(output.status == 0, "\(output.standardError.suffix(2000))\n\(server.log)")
            let codes = try EdgeTests.codes(output.text)
            #expect(codes.contains(2004), "it played: \(codes)")
            #expect(!codes.contains(2103), "the plain connect follows at once, not as a reconnect: \(codes)")
            #expect(Self.count("connect REJECTED", in: server.log) == 1, "\(server.log)")
            #expect(Self.count("connect accepted", in: server.log) == 2, "ffmpeg's and liveplay's plain one: \(server.log)")
            let said = output.standardError.split(separator: "\n").filter { $0.contains("refused Enhanced RTMP's connect") }
            #expect(said.count == 1, "said once: \(output.standardError.suffix(2000))")
        }
    }

    @Test func withEnhancedOnTheRejectionIsAFailureAndWithOffOnlyThePlainConnectIsSent() throws {
        try Self.withServer { server in
            let on = try Binary.run([server.url(stream: "news"), "--rtmp-enhanced", "on", "--retries", "0", "--json"])
            #expect(on.status == 69, "\(on.standardError)")
            #expect(on.standardError.contains("Missing app path"), "the server's own words: \(on.standardError)")
            let rejected = Self.count("connect REJECTED", in: server.log)
            #expect(rejected == 1, "\(server.log)")
            let off = try Binary.run([server.url(stream: "news"), "--rtmp-enhanced", "off", "-t", "3", "--json"])
            #expect(off.status == 0, "\(off.standardError)")
            #expect(try EdgeTests.codes(off.text).contains(2004))
            #expect(Self.count("connect REJECTED", in: server.log) == rejected, "off sends no enhanced connect")
        }
    }
}
