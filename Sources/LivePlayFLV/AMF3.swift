/// Reads the one AMF3 value that follows AMF0's switch marker (`avmplus-object`, 0x11), as AMF0 values: what a
/// script tag or RTMP data message from an AMF3 encoder carries (Flash's `onCaptionInfo` writers among them).
///
/// Read: undefined, null, booleans, integers and doubles (as numbers), strings, dates, arrays (the dense part as a
/// strict array, or with named members as an ECMA array), objects with sealed and dynamic members (anonymous or
/// typed) and byte arrays (as a string of their bytes, Latin-1). Strings and traits may refer back to earlier
/// ones, as the format has it; a reference to an earlier object or array, XML, vectors and dictionaries are not
/// read (a clear error). As with AMF0, nesting is capped and no count read from the wire sizes an allocation.
struct AMF3Reader {
    private var reader: ByteReader
    private let maximumDepth: Int
    private var strings: [String] = []
    private var traits: [Traits] = []

    private struct Traits {
        var className: String
        var sealed: [String]
        var dynamic: Bool
    }

    /// Reads from `reader`'s offset; ``reader`` is where it stopped.
    init(_ reader: ByteReader, maximumDepth: Int) {
        self.reader = reader
        self.maximumDepth = maximumDepth
    }

    /// The reader after the value.
    var rest: ByteReader { reader }

    mutating func readValue(depth: Int) throws(AMF3Failure) -> AMF0Value {
        guard depth < maximumDepth else { throw AMF3Failure("AMF3 nesting deeper than \(maximumDepth)") }
        guard let marker = reader.readUInt8() else { throw AMF3Failure("missing AMF3 type marker") }
        switch marker {
        case 0x00: return .undefined
        case 0x01: return .null
        case 0x02: return .boolean(false)
        case 0x03: return .boolean(true)
        case 0x04:
            // 29 bits, two's complement.
            let value = try readU29()
            return .number(Double(value & 0x1000_0000 == 0 ? Int32(value) : Int32(value) - 0x2000_0000))
        case 0x05:
            guard let value = reader.readDouble() else { throw AMF3Failure("truncated AMF3 double") }
            return .number(value)
        case 0x06: return .string(try readString())
        case 0x08:
            guard try readU29() & 1 == 1 else { throw AMF3Failure("AMF3 object references are not read") }
            guard let milliseconds = reader.readDouble() else { throw AMF3Failure("truncated AMF3 date") }
            return .date(millisecondsSinceEpoch: milliseconds, timeZone: 0)
        case 0x09: return try readArray(depth: depth)
        case 0x0A: return try readObject(depth: depth)
        case 0x0C:
            let header = try readU29()
            guard header & 1 == 1 else { throw AMF3Failure("AMF3 object references are not read") }
            guard let bytes = reader.readBytes(Int(header >> 1)) else {
                throw AMF3Failure("AMF3 byte array claims \(header >> 1) bytes, \(reader.remaining) left")
            }
            return .string(String(bytes.map { Character(Unicode.Scalar($0)) }))
        default:
            throw AMF3Failure("AMF3 marker 0x\(String(marker, radix: 16)) is not read")
        }
    }

    /// An unsigned 29-bit integer: up to three bytes of 7 bits (high bit: more follows), then one of 8.
    private mutating func readU29() throws(AMF3Failure) -> UInt32 {
        var value: UInt32 = 0
        for index in 0..<4 {
            guard let byte = reader.readUInt8() else { throw AMF3Failure("truncated AMF3 integer") }
            if index == 3 { return value << 8 | UInt32(byte) }
            value = value << 7 | UInt32(byte & 0x7F)
            if byte & 0x80 == 0 { return value }
        }
        return value
    }

    private mutating func readString() throws(AMF3Failure) -> String {
        let header = try readU29()
        guard header & 1 == 1 else {
            let index = Int(header >> 1)
            guard index < strings.count else { throw AMF3Failure("AMF3 string reference \(index) to nothing") }
            return strings[index]
        }
        guard let bytes = reader.readBytes(Int(header >> 1)) else {
            throw AMF3Failure("AMF3 string claims \(header >> 1) bytes, \(reader.remaining) left")
        }
        let string = String(decoding: bytes, as: UTF8.self)
        // The empty string is never kept for reference.
        if !string.isEmpty { strings.append(string) }
        return string
    }

    private mutating func readArray(depth: Int) throws(AMF3Failure) -> AMF0Value {
        let header = try readU29()
        guard header & 1 == 1 else { throw AMF3Failure("AMF3 object references are not read") }
        var named: [AMF0Property] = []
        while case let key = try readString(), !key.isEmpty {
            named.append(AMF0Property(key, try readValue(depth: depth + 1)))
        }
        let count = Int(header >> 1)
        // Every element takes at least one byte, so a count above what remains is a lie.
        guard count <= reader.remaining else {
            throw AMF3Failure("AMF3 array claims \(count) elements with \(reader.remaining) bytes left")
        }
        var dense: [AMF0Value] = []
        for _ in 0..<count { dense.append(try readValue(depth: depth + 1)) }
        if named.isEmpty { return .strictArray(dense) }
        return .ecmaArray(named + dense.enumerated().map { AMF0Property(String($0.offset), $0.element) })
    }

    private mutating func readObject(depth: Int) throws(AMF3Failure) -> AMF0Value {
        let header = try readU29()
        guard header & 1 == 1 else { throw AMF3Failure("AMF3 object references are not read") }
        let objectTraits: Traits
        if header & 2 == 0 {
            let index = Int(header >> 2)
            guard index < traits.count else { throw AMF3Failure("AMF3 traits reference \(index) to nothing") }
            objectTraits = traits[index]
        } else {
            guard header & 4 == 0 else { throw AMF3Failure("AMF3 externalizable objects are not read") }
            let className = try readString()
            let count = Int(header >> 4)
            guard count <= reader.remaining else {
                throw AMF3Failure("AMF3 traits claim \(count) members with \(reader.remaining) bytes left")
            }
            var sealed: [String] = []
            for _ in 0..<count { sealed.append(try readString()) }
            objectTraits = Traits(className: className, sealed: sealed, dynamic: header & 8 != 0)
            traits.append(objectTraits)
        }
        var properties: [AMF0Property] = []
        for name in objectTraits.sealed { properties.append(AMF0Property(name, try readValue(depth: depth + 1))) }
        if objectTraits.dynamic {
            while case let key = try readString(), !key.isEmpty {
                properties.append(AMF0Property(key, try readValue(depth: depth + 1)))
            }
        }
        return objectTraits.className.isEmpty
            ? .object(properties) : .typedObject(className: objectTraits.className, properties: properties)
    }
}

/// Why an AMF3 value could not be read; ``AMF0Decoder`` reports it as malformed AMF.
struct AMF3Failure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
