/// An AMF0 value (Adobe "Action Message Format AMF0", §2).
///
/// Objects and ECMA arrays keep their properties in wire order, since keys may repeat and order
/// matters to people reading metadata.
public indirect enum AMF0Value: Sendable, Hashable {
    case number(Double)
    case boolean(Bool)
    case string(String)
    case object([AMF0Property])
    case null
    case undefined
    /// A reference to an earlier complex value by index (§2.9); kept as the index, not resolved.
    case reference(UInt16)
    case ecmaArray([AMF0Property])
    case strictArray([AMF0Value])
    /// Milliseconds since the Unix epoch and the (unused) time-zone field (§2.13).
    case date(millisecondsSinceEpoch: Double, timeZone: Int16)
    case longString(String)
    case xmlDocument(String)
    case typedObject(className: String, properties: [AMF0Property])

    /// The string payload of `.string`, `.longString` and `.xmlDocument`.
    public var stringValue: String? {
        switch self {
        case .string(let value), .longString(let value), .xmlDocument(let value): value
        default: nil
        }
    }

    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    public var booleanValue: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }

    /// Properties of an object, ECMA array or typed object.
    public var properties: [AMF0Property]? {
        switch self {
        case .object(let properties), .ecmaArray(let properties): properties
        case .typedObject(_, let properties): properties
        default: nil
        }
    }

    /// The first property named `key` of an object-like value.
    public subscript(key: String) -> AMF0Value? {
        properties?.first { $0.key == key }?.value
    }
}

/// One key/value pair of an AMF0 object or ECMA array.
public struct AMF0Property: Sendable, Hashable {
    public var key: String
    public var value: AMF0Value

    public init(_ key: String, _ value: AMF0Value) {
        self.key = key
        self.value = value
    }
}

/// AMF0 type markers (§2.1).
public enum AMF0Marker: UInt8, Sendable {
    case number = 0x00
    case boolean = 0x01
    case string = 0x02
    case object = 0x03
    case movieClip = 0x04
    case null = 0x05
    case undefined = 0x06
    case reference = 0x07
    case ecmaArray = 0x08
    case objectEnd = 0x09
    case strictArray = 0x0A
    case date = 0x0B
    case longString = 0x0C
    case unsupported = 0x0D
    case recordSet = 0x0E
    case xmlDocument = 0x0F
    case typedObject = 0x10
    case avmPlusObject = 0x11
}

/// Decodes AMF0 values from a complete message body.
///
/// Input is bounded (a whole script tag or RTMP message), so shortness here is malformed data, not
/// "need more". Nesting is capped, and no count read from the wire sizes an allocation.
public struct AMF0Decoder: Sendable {
    /// FFmpeg caps AMF nesting at 16; real metadata nests two or three levels.
    public static let defaultMaximumDepth = 16

    private var reader: ByteReader
    private let maximumDepth: Int
    private let baseOffset: Int64

    /// - Parameter baseOffset: stream offset of `bytes[0]`, for error messages.
    public init(_ bytes: [UInt8], maximumDepth: Int = AMF0Decoder.defaultMaximumDepth, baseOffset: Int64 = 0) {
        self.reader = ByteReader(bytes)
        self.maximumDepth = maximumDepth
        self.baseOffset = baseOffset
    }

    public var isAtEnd: Bool { reader.isAtEnd }

    /// Decodes the next value.
    public mutating func decodeValue() throws(FLVError) -> AMF0Value {
        try decodeValue(depth: 0)
    }

    /// Decodes values until the input is used up.
    public mutating func decodeAll() throws(FLVError) -> [AMF0Value] {
        var values: [AMF0Value] = []
        while !reader.isAtEnd {
            values.append(try decodeValue(depth: 0))
        }
        return values
    }

    private func failure(_ message: String) -> FLVError {
        FLVError(.malformedAMF, message, offset: baseOffset + Int64(reader.offset))
    }

    private mutating func decodeValue(depth: Int) throws(FLVError) -> AMF0Value {
        guard depth < maximumDepth else {
            throw FLVError(
                .amfNestingTooDeep, "AMF0 nesting deeper than \(maximumDepth)",
                offset: baseOffset + Int64(reader.offset))
        }
        guard let markerByte = reader.readUInt8() else { throw failure("missing AMF0 type marker") }
        guard let marker = AMF0Marker(rawValue: markerByte) else {
            throw failure("unknown AMF0 type marker 0x\(String(markerByte, radix: 16))")
        }
        switch marker {
        case .number:
            guard let value = reader.readDouble() else { throw failure("truncated number") }
            return .number(value)
        case .boolean:
            guard let value = reader.readUInt8() else { throw failure("truncated boolean") }
            return .boolean(value != 0)
        case .string:
            return .string(try readShortString())
        case .longString:
            return .longString(try readLongString())
        case .xmlDocument:
            return .xmlDocument(try readLongString())
        case .object:
            return .object(try readProperties(depth: depth))
        case .typedObject:
            let className = try readShortString()
            return .typedObject(className: className, properties: try readProperties(depth: depth))
        case .ecmaArray:
            // The count is advisory (encoders get it wrong); the object-end marker terminates.
            guard reader.skip(4) else { throw failure("truncated ECMA array count") }
            return .ecmaArray(try readProperties(depth: depth))
        case .strictArray:
            guard let count = reader.readUInt32() else { throw failure("truncated strict array count") }
            // Every element takes at least one byte, so a count above what remains is a lie.
            guard Int(count) <= reader.remaining else {
                throw failure("strict array claims \(count) elements with \(reader.remaining) bytes left")
            }
            var elements: [AMF0Value] = []
            elements.reserveCapacity(Int(count))
            for _ in 0..<count {
                elements.append(try decodeValue(depth: depth + 1))
            }
            return .strictArray(elements)
        case .null:
            return .null
        case .undefined, .unsupported:
            return .undefined
        case .reference:
            guard let index = reader.readUInt16() else { throw failure("truncated reference") }
            return .reference(index)
        case .date:
            guard let milliseconds = reader.readDouble(), let zone = reader.readUInt16() else {
                throw failure("truncated date")
            }
            return .date(millisecondsSinceEpoch: milliseconds, timeZone: Int16(bitPattern: zone))
        case .objectEnd:
            throw failure("object-end marker outside an object")
        case .avmPlusObject:
            // The switch to AMF3 for the one value that follows.
            var amf3 = AMF3Reader(reader, maximumDepth: maximumDepth - depth)
            do throws(AMF3Failure) {
                let value = try amf3.readValue(depth: 0)
                reader = amf3.rest
                return value
            } catch {
                reader = amf3.rest
                throw failure(error.message)
            }
        case .movieClip, .recordSet:
            throw failure("AMF0 marker 0x\(String(markerByte, radix: 16)) is not supported")
        }
    }

    private mutating func readProperties(depth: Int) throws(FLVError) -> [AMF0Property] {
        var properties: [AMF0Property] = []
        while true {
            let key = try readShortString()
            if key.isEmpty, reader.peekUInt8() == AMF0Marker.objectEnd.rawValue {
                _ = reader.readUInt8()
                return properties
            }
            properties.append(AMF0Property(key, try decodeValue(depth: depth + 1)))
        }
    }

    private mutating func readShortString() throws(FLVError) -> String {
        guard let length = reader.readUInt16() else { throw failure("truncated string length") }
        guard let bytes = reader.readBytes(Int(length)) else {
            throw failure("string claims \(length) bytes, \(reader.remaining) left")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func readLongString() throws(FLVError) -> String {
        guard let length = reader.readUInt32() else { throw failure("truncated long string length") }
        guard let bytes = reader.readBytes(Int(length)) else {
            throw failure("long string claims \(length) bytes, \(reader.remaining) left")
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Encodes AMF0 values; the inverse of ``AMF0Decoder`` (used by test servers and writers).
public struct AMF0Encoder: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func encode(_ value: AMF0Value) {
        switch value {
        case .number(let number):
            bytes.append(AMF0Marker.number.rawValue)
            appendDouble(number)
        case .boolean(let flag):
            bytes.append(AMF0Marker.boolean.rawValue)
            bytes.append(flag ? 1 : 0)
        case .string(let string):
            if string.utf8.count > Int(UInt16.max) {
                encode(.longString(string))
                return
            }
            bytes.append(AMF0Marker.string.rawValue)
            appendShortString(string)
        case .longString(let string):
            bytes.append(AMF0Marker.longString.rawValue)
            appendLongString(string)
        case .xmlDocument(let string):
            bytes.append(AMF0Marker.xmlDocument.rawValue)
            appendLongString(string)
        case .object(let properties):
            bytes.append(AMF0Marker.object.rawValue)
            appendProperties(properties)
        case .typedObject(let className, let properties):
            bytes.append(AMF0Marker.typedObject.rawValue)
            appendShortString(className)
            appendProperties(properties)
        case .ecmaArray(let properties):
            bytes.append(AMF0Marker.ecmaArray.rawValue)
            appendUInt32(UInt32(properties.count))
            appendProperties(properties)
        case .strictArray(let elements):
            bytes.append(AMF0Marker.strictArray.rawValue)
            appendUInt32(UInt32(elements.count))
            for element in elements { encode(element) }
        case .null:
            bytes.append(AMF0Marker.null.rawValue)
        case .undefined:
            bytes.append(AMF0Marker.undefined.rawValue)
        case .reference(let index):
            bytes.append(AMF0Marker.reference.rawValue)
            bytes.append(UInt8(index >> 8))
            bytes.append(UInt8(index & 0xFF))
        case .date(let milliseconds, let zone):
            bytes.append(AMF0Marker.date.rawValue)
            appendDouble(milliseconds)
            let zoneBits = UInt16(bitPattern: zone)
            bytes.append(UInt8(zoneBits >> 8))
            bytes.append(UInt8(zoneBits & 0xFF))
        }
    }

    private mutating func appendProperties(_ properties: [AMF0Property]) {
        for property in properties {
            appendShortString(property.key)
            encode(property.value)
        }
        bytes += [0, 0, AMF0Marker.objectEnd.rawValue]
    }

    private mutating func appendDouble(_ value: Double) {
        let bits = value.bitPattern
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
    }

    private mutating func appendUInt32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }

    private mutating func appendShortString(_ string: String) {
        let utf8 = Array(string.utf8.prefix(Int(UInt16.max)))
        bytes.append(UInt8(utf8.count >> 8))
        bytes.append(UInt8(utf8.count & 0xFF))
        bytes += utf8
    }

    private mutating func appendLongString(_ string: String) {
        let utf8 = Array(string.utf8)
        appendUInt32(UInt32(utf8.count))
        bytes += utf8
    }
}
