import Foundation
import LivePlayTesting
import Testing

@testable import liveplay

/// `--sei TYPE…`: the JSON log carries each SEI message of those types (9018) with its picture's time and its
/// payload in base64; a payload type out of range is refused before anything plays.
@Suite struct SEICommandTests {
    @Test func theLogCarriesTheAskedForTypes() throws {
        let fixture = try SEIFixture.make()
        let output = try Binary.run([fixture.path, "--json", "--sei", "242", "--sei", "1,7", "--frames", "10"])
        #expect(output.status == 0, "\(output.standardError)")
        let messages = try EventLogTests.lines(output.text).filter { $0["code"] as? Int == 9018 }
            .compactMap { $0["params"] as? [String: Any] }
        #expect(messages.count >= 20, "\(messages.count)")
        for message in messages {
            let payload = (message["payload"] as? String).flatMap { Data(base64Encoded: $0) }
            #expect(payload.map { String(decoding: $0, as: UTF8.self) } == (message["pts_ms"] as? Int).map(String.init))
            #expect([1, 242].contains(message["payload_type"] as? Int))
            #expect(message["uuid"] == nil)
        }
        let refused = try Binary.run([fixture.path, "--sei", "5,4096"])
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("--sei"), "\(refused.standardError)")
    }
}
