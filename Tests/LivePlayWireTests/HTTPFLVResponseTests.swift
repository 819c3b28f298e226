import LivePlayWire
import Testing

/// What a response head and a body's end mean (RFC 9110, RFC 9112 §6.3).
@Suite struct HTTPFLVResponseTests {
    static func response(_ status: Int = 200, _ headers: [(String, String)]) throws(WireError) -> HTTPFLVResponse {
        try HTTPFLVResponse(status: status, reason: "Reason", headers: headers.map { (name: $0.0, value: $0.1) })
    }

    @Test func statusesOutside2xxAreRefusedWithTheStatus() throws {
        for status in [101, 302, 403, 404, 500, 503] {
            #expect {
                try Self.response(status, [])
            } throws: { ($0 as? WireError)?.httpStatus == status && ($0 as? WireError)?.code == .httpStatus }
        }
        let long = String(repeating: "x", count: 10_000)
        #expect {
            try HTTPFLVResponse(status: 404, reason: long, headers: [])
        } throws: { ($0 as? WireError).map { $0.message.count < 100 } ?? false }
        #expect(try Self.response(206, []).status == 206)
    }

    @Test func aBodyReadToItsLengthIsAFinishedFile() throws {
        var file = try Self.response(200, [("Content-Length", "100"), ("Content-Type", "video/x-flv")])
        #expect(file.expectedLength == 100)
        try file.receive(60)
        #expect(file.end == .cut, "60 of 100 bytes is a file cut short")
        try file.receive(40)
        #expect(file.end == .finished)
        #expect(throws: WireError.self) { try file.receive(1) }
    }

    @Test func aLiveBodyHasNoEndOfStreamSoItsEndIsACut() throws {
        var live = try Self.response(200, [("content-type", "video/x-flv")])
        #expect(live.expectedLength == nil)
        try live.receive(1 << 30)
        #expect(live.end == .cut)
        // Transfer-Encoding overrides Content-Length (§6.3 rule 3).
        let chunked = try Self.response(200, [("Content-Length", "100"), ("Transfer-Encoding", "chunked")])
        #expect(chunked.expectedLength == nil)
        #expect(try Self.response(204, []).end == .finished)
    }

    @Test func contentLengthMustBeOneNumber() throws {
        #expect(try Self.response(200, [("Content-Length", " 5 , 5")]).expectedLength == 5)
        #expect(try Self.response(200, [("Content-Length", "5"), ("content-length", "5")]).expectedLength == 5)
        for bad in [[("Content-Length", "5, 6")], [("Content-Length", "5"), ("Content-Length", "6")],
            [("Content-Length", "abc")], [("Content-Length", "-1")], [("Content-Length", "+5")],
            [("Content-Length", "")], [("Content-Length", "99999999999999999999")], [("Content-Length", "٥")]]
        {
            #expect {
                try Self.response(200, bad)
            } throws: { ($0 as? WireError)?.code == .protocolViolation }
        }
    }
}
