import LivePlayFLV
import Testing

/// AMF3 behind AMF0's switch marker (0x11): the values Flash's writers sent in script data, read as AMF0 values;
/// what is not read is a clear error, never a crash or an allocation the input sizes.
@Suite struct AMF3Tests {
    /// A string's bytes, its length first (U29, low bit set: not a reference).
    static func string(_ text: String) -> [UInt8] { [UInt8(text.utf8.count << 1 | 1)] + Array(text.utf8) }

    @Test func anObjectWithDynamicMembersReadsAsAnAMF0Object() throws {
        // [{type: "708", count: -3, ratio: 0.5, on: true, list: [1, "a"]}, {type: "708"}]: the second object uses
        // the first's traits and strings by reference. Then an AMF0 number after the switch's one value.
        let first: [UInt8] = [0x0A, 0x0B, 0x01] + Self.string("type") + [0x06] + Self.string("708")
            + Self.string("count") + [0x04, 0xFF, 0xFF, 0xFF, 0xFD]
            + Self.string("ratio") + [0x05, 0x3F, 0xE0, 0, 0, 0, 0, 0, 0]
            + Self.string("on") + [0x03]
            + Self.string("list") + [0x09, 0x05, 0x01, 0x04, 0x01, 0x06] + Self.string("a") + [0x01]
        let second: [UInt8] = [0x0A, 0x01, 0x00, 0x06, 0x02, 0x01]
        var decoder = AMF0Decoder([0x11, 0x09, 0x05, 0x01] + first + second + [0x00, 0x40, 0, 0, 0, 0, 0, 0, 0])
        let values = try decoder.decodeAll()
        let object = AMF0Value.object([
            AMF0Property("type", .string("708")), AMF0Property("count", .number(-3)),
            AMF0Property("ratio", .number(0.5)), AMF0Property("on", .boolean(true)),
            AMF0Property("list", .strictArray([.number(1), .string("a")])),
        ])
        #expect(values == [.strictArray([object, .object([AMF0Property("type", .string("708"))])]), .number(2)])
    }

    @Test func aTypedObjectKeepsItsClassAndSealedMembers() throws {
        // Traits inline, not dynamic, one sealed member "x": header 0b1_0011.
        var decoder = AMF0Decoder([0x11, 0x0A, 0x13] + Self.string("Point") + Self.string("x") + [0x04, 0x07])
        #expect(try decoder.decodeValue() == .typedObject(className: "Point", properties: [AMF0Property("x", .number(7))]))
    }

    @Test func whatIsNotReadIsAClearError() {
        let cases: [(String, [UInt8])] = [
            ("object reference", [0x11, 0x0A, 0x00]),
            ("string reference to nothing", [0x11, 0x06, 0x04]),
            ("traits reference to nothing", [0x11, 0x0A, 0x05]),
            ("externalizable", [0x11, 0x0A, 0x07, 0x01]),
            ("XML", [0x11, 0x0B, 0x01]),
            ("a vector", [0x11, 0x0D, 0x01]),
            ("truncated string", [0x11, 0x06, 0x0B, 0x61]),
            ("truncated integer", [0x11, 0x04, 0xFF]),
            ("an array claiming more than there is", [0x11, 0x09, 0xFF, 0xFF, 0xFF, 0x7F, 0x01]),
            ("traits claiming more than there is", [0x11, 0x0A, 0xFF, 0xFF, 0xFF, 0x73, 0x01]),
            ("nothing after the switch", [0x11]),
        ]
        for (name, bytes) in cases {
            var decoder = AMF0Decoder(bytes)
            #expect(throws: FLVError.self, "\(name)") { try decoder.decodeAll() }
        }
    }

    @Test func nestingIsBounded() {
        // Arrays of one array each, 40 deep.
        var decoder = AMF0Decoder([0x11] + Array(repeating: [0x09, 0x03, 0x01], count: 40).flatMap { $0 } + [0x01])
        #expect(throws: FLVError.self) { try decoder.decodeAll() }
    }
}
