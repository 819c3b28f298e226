import LivePlayFLV
import LivePlayWire
import LivePlayTesting
import Testing

@testable import LivePlayTransport

/// The pure parts of the RTMP source: chunk header parsing, message checks, FLV writing, goodput, URLs.
@Suite("RTMP components")
struct RTMPComponentTests {
    // MARK: - Chunk headers (RTMP specification 1.0, §5.3.1)

    @Test("chunk headers parse incrementally: too few bytes asks for more, never fails")
    func chunkHeaderParsing() {
        let bytes = RTMPChunkWriter.header(type: 9, length: 0x01_0203, messageStreamID: 1, chunkStreamID: 6)
        for count in 0..<bytes.count {
            let result = bytes.prefix(count).withUnsafeBytes { RTMPChunkHeader.parse($0) }
            guard case .needMore(let needed) = result else {
                Issue.record("parsed from \(count) bytes")
                continue
            }
            #expect(needed > count)
        }
        let full = bytes.withUnsafeBytes { RTMPChunkHeader.parse($0) }
        #expect(
            full
                == .header(
                    RTMPChunkHeader(format: 0, chunkStreamID: 6, messageLength: 0x01_0203, messageTypeID: 9, size: 12)))
        // Two- and three-byte basic headers (ids 64...319 and up to 65599).
        let twoByte: [UInt8] = [0x40, 10, 0, 0, 0, 0, 0, 5, 8]
        #expect(
            twoByte.withUnsafeBytes { RTMPChunkHeader.parse($0) }
                == .header(RTMPChunkHeader(format: 1, chunkStreamID: 74, messageLength: 5, messageTypeID: 8, size: 9)))
        let threeByte: [UInt8] = [0xC1, 0x01, 0x02]
        #expect(
            threeByte.withUnsafeBytes { RTMPChunkHeader.parse($0) }
                == .header(RTMPChunkHeader(format: 3, chunkStreamID: 64 + 1 + 2 * 256, size: 3)))
    }

    @Test("header checks: an unfinished message, a size over the cap, too much held")
    func chunkHeaderChecks() throws {
        let check = RTMPMessageGuard(limits: RTMPSource.Limits(maximumBytesInProgress: 1000, maximumMediaSize: 800))
        let header = RTMPChunkHeader(format: 0, chunkStreamID: 4, messageLength: 500, messageTypeID: 9, size: 12)
        try check.check(header, unfinished: nil, bytesInProgress: 0)
        #expect(throws: WireError.self) { try check.check(header, unfinished: (300, 128), bytesInProgress: 300) }
        #expect(throws: WireError.self) { try check.check(header, unfinished: nil, bytesInProgress: 600) }
        var large = header
        large.messageLength = 900
        #expect(throws: WireError.self) { try check.check(large, unfinished: nil, bytesInProgress: 0) }
        // Format 3 continues or repeats a message whose size was checked already.
        let continuation = RTMPChunkHeader(format: 3, chunkStreamID: 4, size: 1)
        try check.check(continuation, unfinished: (300, 128), bytesInProgress: 300)
    }

    // MARK: - Message checks

    private func inspect(_ type: UInt8, _ body: [UInt8], limits: RTMPSource.Limits = .init()) throws
        -> RTMPMessageVerdict
    {
        let check = RTMPMessageGuard(limits: limits)
        return try body.withUnsafeBytes { try check.inspect(type: type, body: $0) }
    }

    @Test("control messages are length-checked before librtmp reads them")
    func controlMessages() throws {
        #expect(try inspect(1, [0, 0, 0x10, 0]) == .control)
        #expect(throws: WireError.self) { try inspect(1, [0, 0, 0, 0]) }
        #expect(throws: WireError.self) { try inspect(1, [0x80, 0, 0, 0]) }
        #expect(throws: WireError.self) { try inspect(1, [0, 0]) }
        #expect(throws: WireError.self) { try inspect(5, [0, 1]) }
        #expect(throws: WireError.self) { try inspect(6, [0]) }
        #expect(throws: WireError.self) { try inspect(4, [0]) }
        #expect(try inspect(4, [0, 0, 0, 0, 0, 1]) == .control)
        #expect(try inspect(19, [1, 2, 3]) == .ignore)
        #expect(try inspect(99, [1]) == .ignore)
        #expect(try inspect(20, []) == .ignore)
    }

    @Test("commands are decoded with the depth cap; anything the decoder rejects stays from librtmp")
    func commands() throws {
        var encoder = AMF0Encoder()
        for value: AMF0Value in [.string("_result"), .number(1), .null, .object([AMF0Property("code", .string("x"))])] {
            encoder.encode(value)
        }
        let verdict = try inspect(20, encoder.bytes)
        guard case .command(let name, let values) = verdict else {
            Issue.record("not a command: \(verdict)")
            return
        }
        #expect(name == "_result")
        #expect(values.count == 4)
        // AMF3 command: a format byte, then the same AMF0.
        #expect(try inspect(17, [0] + encoder.bytes) == verdict)
        // Not starting with a method name, truncated, nested too deep, too large.
        #expect(throws: WireError.self) { try inspect(20, [0x00] + [UInt8](repeating: 0, count: 8)) }
        #expect(throws: WireError.self) { try inspect(20, Array(encoder.bytes.dropLast(2))) }
        let bomb = Array(RTMPChunkWriter.amfBomb(depth: 17).dropFirst(12))
        #expect(throws: WireError.self) { try inspect(20, bomb) }
        #expect(throws: WireError.self) {
            try inspect(20, encoder.bytes, limits: RTMPSource.Limits(maximumCommandSize: 10))
        }
    }

    @Test("data messages: nesting bombs are refused, other malformed metadata is the demuxer's business")
    func dataMessages() throws {
        var writer = FLVWriter()
        writer.writeMetadata([AMF0Property("width", .number(320))])
        let metadata = Array(writer.bytes.dropFirst(13 + 11).dropLast(4))
        #expect(try inspect(18, metadata) == .media)
        #expect(try inspect(18, [0x02, 0x00]) == .media)
        let bomb = Array(RTMPChunkWriter.amfBomb(depth: 40).dropFirst(12))
        #expect(throws: WireError.self) { try inspect(18, bomb) }
        #expect(throws: WireError.self) { try inspect(22, [9, 0, 0, 50] + [UInt8](repeating: 0, count: 20)) }
    }

    // MARK: - FLV output

    @Test("media, metadata and aggregate messages become FLV the demuxer reads, aggregates rebased")
    func flvTagWriter() throws {
        var writer = FLVTagWriter()
        var output: [UInt8] = []
        let video: [UInt8] = [0x17, 1, 0, 0, 0, 0, 0, 0, 1, 0x65]
        var amf = AMF0Encoder()
        amf.encode(.string("@setDataFrame"))
        amf.encode(.string("onMetaData"))
        amf.encode(.ecmaArray([AMF0Property("width", .number(320))]))
        _ = amf.bytes.withUnsafeBytes { writer.append(type: 18, timestamp: 0, body: $0, to: &output) }
        let media = video.withUnsafeBytes { writer.append(type: 9, timestamp: 0x0100_0040, body: $0, to: &output) }
        #expect(media.map(\.timestamp) == [0x0100_0040])
        // Aggregate: two sub-tags at 1000 and 1040, delivered in a message stamped 5000.
        var aggregate = FLVWriter(hasAudio: true, hasVideo: true)
        aggregate.writeAAC(sequenceHeader: false, timestamp: 1000, payload: [0x21])
        aggregate.writeAAC(sequenceHeader: false, timestamp: 1040, payload: [0x22])
        let body = Array(aggregate.bytes.dropFirst(13))
        let subMedia = body.withUnsafeBytes { writer.append(type: 22, timestamp: 5000, body: $0, to: &output) }
        #expect(subMedia.map(\.timestamp) == [5000, 5040])

        #expect(Array(output.prefix(13)) == FLVTagWriter.header)
        let elements = try demuxAll(output)
        let metadata = elements.compactMap { if case .metadata(let value) = $0 { value } else { nil } }
        #expect(metadata.count == 1)
        #expect(elements.packets.filter { $0.kind == .audio }.map(\.dts.milliseconds) == [5000, 5040])
        #expect(elements.warnings.filter { $0.code != .missingConfiguration && $0.code != .awaitingKeyframe } == [])
        // The video tag after the metadata (whose @setDataFrame name, 16 bytes, was dropped): the 32-bit
        // timestamp as 24 bits and the extension byte.
        let videoTag = 13 + 11 + (amf.bytes.count - 16) + 4
        #expect(output[videoTag] == 9)
        #expect(Array(output[(videoTag + 4)..<(videoTag + 8)]) == [0x00, 0x00, 0x40, 0x01])
    }

    @Test("media progress adds plausible timestamp steps per track and takes the furthest track")
    func mediaProgress() {
        var progress = MediaProgress()
        progress.record(type: 8, timestamp: 1000)
        progress.record(type: 8, timestamp: 1023)
        progress.record(type: 9, timestamp: 990)
        progress.record(type: 9, timestamp: 1030)
        #expect(progress.milliseconds == 40)
        // A publisher restart (back to 0) and a discontinuity (+1 h) add nothing.
        progress.record(type: 9, timestamp: 0)
        progress.record(type: 9, timestamp: 3_600_000)
        progress.record(type: 9, timestamp: 3_600_040)
        #expect(progress.milliseconds == 80)
    }

    @Test("the watchdog policy: a handshake deadline, then goodput, silent while held back")
    func watchdogPolicy() {
        var options = TransportOptions(handshakeTimeout: .seconds(3), minimumGoodput: 0.5, goodputWindow: .seconds(2))
        options.noDataTimeout = .seconds(5)
        let start = ContinuousClock.now
        var policy = RTMPWatchdogPolicy(options: options, origin: start)
        #expect(policy.check(at: start + .seconds(100)) == nil)
        policy.startHandshake(at: start)
        #expect(policy.check(at: start + .seconds(2)) == nil)
        #expect(policy.check(at: start + .seconds(3))?.code == .handshakeFailed)
        policy.startStreaming()
        policy.recordMedia(type: 8, timestamp: 0)
        #expect(policy.check(at: start + .seconds(4)) == nil)
        policy.setHeldBack(true)
        #expect(policy.check(at: start + .seconds(7)) == nil)
        policy.setHeldBack(false)
        #expect(policy.check(at: start + .seconds(8)) == nil)
        policy.recordMedia(type: 8, timestamp: 200)
        #expect(policy.check(at: start + .seconds(10))?.code == .tooSlow)
    }

    // MARK: - URLs and secrets

    @Test("URLs: host and port for the player's own connect, IPv6 literals, unsupported schemes")
    func urls() throws {
        let cases: [(String, RTMPURL)] = [
            ("rtmp://example.com/live/a?token=1", RTMPURL(scheme: "rtmp", host: "example.com", port: 1935)),
            ("RTMP://10.0.0.1:1940/app/s live=1", RTMPURL(scheme: "rtmp", host: "10.0.0.1", port: 1940)),
            ("rtmp://[::1]:1936/live/s", RTMPURL(scheme: "rtmp", host: "::1", port: 1936)),
            ("rtmps://cdn.example/live/s", RTMPURL(scheme: "rtmps", host: "cdn.example", port: 443)),
        ]
        for (text, expected) in cases {
            #expect(try RTMPURL(parsing: text) == expected)
        }
        let malformed = [
            "http://x/live/s", "rtmp://", "rtmp://host", "rtmp://host/", "rtmp://host:99999/a/b", "rtmp://[::1/a/b",
        ]
        for bad in malformed {
            #expect(throws: TransportError.self, "\(bad)") { try RTMPURL(parsing: bad) }
        }
    }

    @Test("librtmp log lines lose the URL's query values")
    func logScrubbing() {
        let url = "rtmp://h/live/s?txSecret=abcdef123&txTime=5F3C1A2B&x=1 token=swordfish"
        let secrets = RTMPSource.secrets(in: url)
        #expect(Set(secrets) == ["abcdef123", "5F3C1A2B", "swordfish"])
        let line = "Parsed playpath: s?txSecret=abcdef123&txTime=5F3C1A2B&x=1, token swordfish"
        #expect(RTMPLog.scrub(line, secrets: secrets) == "Parsed playpath: s?txSecret=***&txTime=***&x=1, token ***")
    }
}
