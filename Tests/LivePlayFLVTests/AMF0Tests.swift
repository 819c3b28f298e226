import LivePlayFLV
import Testing

@Suite struct AMF0Tests {
    static let everyType: [AMF0Value] = [
        .number(29.97), .boolean(true), .string("héllo"), .null, .undefined, .reference(3),
        .object([AMF0Property("a", .number(1)), AMF0Property("nested", .object([AMF0Property("b", .boolean(false))]))]),
        .ecmaArray([AMF0Property("width", .number(1280)), AMF0Property("width", .number(720))]),
        .strictArray([.number(1), .string("two"), .null]),
        .date(millisecondsSinceEpoch: 1_700_000_000_000, timeZone: -60),
        .longString(String(repeating: "x", count: 70_000)),
        .xmlDocument("<a/>"),
        .typedObject(className: "Point", properties: [AMF0Property("x", .number(-1))]),
    ]

    @Test func everyTypeRoundTrips() throws {
        var encoder = AMF0Encoder()
        for value in Self.everyType { encoder.encode(value) }
        var decoder = AMF0Decoder(encoder.bytes)
        #expect(try decoder.decodeAll() == Self.everyType)
    }

    @Test func decodesTheWireBytesOfTheSpec() throws {
        // AMF0 spec §2.2: number 1.0 = 00 3F F0 00 00 00 00 00 00; §2.4 string "ab".
        var decoder = AMF0Decoder([0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0x02, 0x61, 0x62])
        #expect(try decoder.decodeAll() == [.number(1), .string("ab")])
    }

    @Test func everyTruncationIsAClearErrorNotACrash() throws {
        var encoder = AMF0Encoder()
        for value in Self.everyType.prefix(10) { encoder.encode(value) }
        let bytes = encoder.bytes
        // Cutting inside any value must throw; cutting at a value boundary decodes the prefix.
        for length in stride(from: 0, to: bytes.count, by: 7) {
            var decoder = AMF0Decoder(Array(bytes.prefix(length)))
            do {
                let values = try decoder.decodeAll()
                #expect(values.count < 10)
            } catch {
                #expect(error.code == .malformedAMF)
            }
        }
    }

    @Test func nestingTenThousandDeepStopsAtTheLimit() {
        // 10,000 nested objects: librtmp recurses until it crashes on input like this.
        var bytes: [UInt8] = []
        for _ in 0..<10_000 { bytes += [0x03, 0x00, 0x01, 0x61] }
        var decoder = AMF0Decoder(bytes)
        #expect {
            try decoder.decodeValue()
        } throws: { error in
            (error as? FLVError)?.code == .amfNestingTooDeep
        }
        // The same bomb through strict arrays.
        var arrays: [UInt8] = []
        for _ in 0..<10_000 { arrays += [0x0A, 0, 0, 0, 1] }
        var arrayDecoder = AMF0Decoder(arrays, maximumDepth: 32)
        #expect(throws: FLVError.self) { try arrayDecoder.decodeValue() }
    }

    @Test func lengthsClaimingMoreThanExistAreRejectedWithoutAllocating() {
        let lies: [[UInt8]] = [
            [0x02, 0xFF, 0xFF, 0x61],  // string of 65,535 bytes, 1 present
            [0x0C, 0xFF, 0xFF, 0xFF, 0xFF, 0x61],  // long string of 4 GiB
            [0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x05],  // strict array of 4 billion elements
            [0x03, 0x00, 0x01, 0x61],  // object without its end marker
            [0x12],  // unknown marker
            [0x11, 0x06, 0xFF, 0xFF, 0x7F],  // AVM+ switch to an AMF3 string of a million bytes
            [0x09],  // object end at top level
        ]
        for bytes in lies {
            var decoder = AMF0Decoder(bytes)
            #expect(throws: FLVError.self, "\(bytes)") { try decoder.decodeValue() }
        }
    }

    @Test func ecmaArrayCountIsAdvisory() throws {
        // Encoders write wrong counts; the object-end marker decides.
        var encoder = AMF0Encoder()
        encoder.encode(.ecmaArray([AMF0Property("a", .number(1)), AMF0Property("b", .number(2))]))
        var bytes = encoder.bytes
        bytes[4] = 0x07
        var decoder = AMF0Decoder(bytes)
        let value = try decoder.decodeValue()
        #expect(value["b"] == .number(2))
        #expect(value.properties?.count == 2)
    }
}
