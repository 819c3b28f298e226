import Foundation
import LivePlayTesting
import Testing

@testable import liveplay

@Suite struct PlayCommandTests {
    struct EventLine: Decodable {
        var kind: String
        var time_ms: Int64
        var code: Int?
        var symbol: String?
        var message: String?
    }

    /// The event lines of a JSON log (status lines left out).
    static func events(_ output: ExternalTool.Output) throws -> [EventLine] {
        try output.text.split(separator: "\n").filter { $0.contains("\"kind\":\"event\"") }
            .map { try JSONDecoder().decode(EventLine.self, from: Data($0.utf8)) }
    }

    /// DNS failure without sending a query anywhere: the player runs in a fresh network namespace with no
    /// interfaces up, so the resolver fails locally (`unshare -n`, root only).
    @Test(arguments: ["http://nonexistent.invalid/live.flv", "rtmp://nonexistent.invalid/live/stream"])
    func anUnknownHostIsADNSFailureThenRetriesThenDisconnect(_ url: String) throws {
        guard getuid() == 0, let unshare = ExternalTool.find("unshare") else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("needs root and unshare under CI") }
            return
        }
        let output = try ExternalTool.run(
            unshare, ["-n", Binary.path, url, "--json", "--retries", "1", "--retry-interval", "0.1"])
        let events = try Self.events(output)
        #expect(events.map(\.code) == [3001, 2103, 3001, -2301, 9006])
        #expect(events.map(\.symbol) == [
            "PLAY_WARNING_DNS_FAIL", "PLAY_WARNING_RECONNECT", "PLAY_WARNING_DNS_FAIL", "PLAY_ERR_NET_DISCONNECT",
            "LIVEPLAY_EVT_SESSION_SUMMARY",
        ])
        #expect(output.status == ExitStatus.unavailable)
        // Each lookup fails locally; generous bound.
        #expect(events.last!.time_ms < 30_000)
    }

    @Test func secretsStayOutOfTheOutput() throws {
        let port = try LoopbackPort.free()
        let url = "http://127.0.0.1:\(port)/live.flv?txSecret=hunter2&txTime=abc"
        for style in ["--human", "--json"] {
            let output = try Binary.run([url, "--retries", "0", style])
            #expect(output.status == ExitStatus.unavailable)
            let everything = output.text + output.standardError
            if style == "--human" { #expect(everything.contains("txSecret=***")) }
            #expect(!everything.contains("hunter2"))
            #expect(everything.contains("PLAY_WARNING_SEVER_CONN_FAIL"))
        }
    }

    @Test func aBackupMustBeANetworkURLForOneURL() throws {
        let file = try Binary.run(["http://127.0.0.1:1/x.flv", "--backup", "/tmp/x.flv"])
        #expect(file.status == ExitStatus.usage)
        #expect(file.standardError.contains("--backup /tmp/x.flv: not an HTTP(S)-FLV or RTMP(S) URL"))
        let secret = try Binary.run(["http://127.0.0.1:1/x.flv", "--backup", "ftp://h/x?token=hunter2"])
        #expect(secret.status == ExitStatus.usage && !secret.standardError.contains("hunter2"))
        let several = try Binary.run(["http://127.0.0.1:1/a.flv", "http://127.0.0.1:1/b.flv", "--backup", "http://127.0.0.1:2/c.flv"])
        #expect(several.status == ExitStatus.usage && several.standardError.contains("--backup goes with one URL"))
    }

    @Test func aRenditionOrABitrateCapIsForAManifest() throws {
        let stream = try Binary.run(["http://127.0.0.1:1/x.flv", "--rendition", "2"])
        #expect(stream.status == ExitStatus.usage)
        #expect(stream.standardError.contains("--rendition and --max-bitrate choose among a LAS manifest's renditions"))
        let zero = try Binary.run(["http://127.0.0.1:1/las.json", "--max-bitrate", "0"])
        #expect(zero.status == ExitStatus.usage && zero.standardError.contains("--max-bitrate must be above 0"))
    }

    @Test func optionsAreValidated() throws {
        #expect(try Binary.run(["http://127.0.0.1:1/x.flv", "--header", "no colon"]).status == ExitStatus.usage)
        #expect(try Binary.run(["http://127.0.0.1:1/x.flv", "--retries", "11"]).status == ExitStatus.usage)
        let help = LivePlayCommand.helpMessage(for: PlayCommand.self)
        for option in ["--json", "--duration", "--retries", "--retry-interval", "--header", "--insecure"] {
            #expect(help.contains(option), "help lacks \(option)")
        }
    }
}
