/// Reads big-endian integers and byte runs from an immutable byte array.
///
/// A read that lacks bytes returns `nil` and leaves the reader where it was (SwiftNIO's
/// `ByteBuffer.readInteger` contract), so callers can treat shortness as "need more data".
public struct ByteReader: Sendable {
    public let bytes: [UInt8]
    /// Index of the next unread byte.
    public private(set) var offset: Int
    /// One past the last readable byte.
    public let end: Int

    public init(_ bytes: [UInt8], offset: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.offset = offset
        self.end = end ?? bytes.count
    }

    public var remaining: Int { end - offset }
    public var isAtEnd: Bool { offset >= end }

    /// The next byte, without consuming it.
    public func peekUInt8() -> UInt8? {
        remaining >= 1 ? bytes[offset] : nil
    }

    public mutating func readUInt8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func readUInt16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    public mutating func readUInt24() -> UInt32? {
        guard remaining >= 3 else { return nil }
        defer { offset += 3 }
        return UInt32(bytes[offset]) << 16 | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2])
    }

    /// A signed 24-bit integer (FLV's composition time offset).
    public mutating func readInt24() -> Int32? {
        guard let raw = readUInt24() else { return nil }
        return Int32(bitPattern: raw << 8) >> 8
    }

    public mutating func readUInt32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        defer { offset += 4 }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
            | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    public mutating func readUInt64() -> UInt64? {
        guard remaining >= 8 else { return nil }
        var value: UInt64 = 0
        for index in offset..<offset + 8 {
            value = value << 8 | UInt64(bytes[index])
        }
        offset += 8
        return value
    }

    public mutating func readDouble() -> Double? {
        readUInt64().map(Double.init(bitPattern:))
    }

    /// Reads `count` bytes, or nothing if fewer remain.
    public mutating func readBytes(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    public mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, remaining >= count else { return false }
        offset += count
        return true
    }

    /// Everything not yet read.
    public mutating func readRest() -> ArraySlice<UInt8> {
        defer { offset = end }
        return bytes[offset..<end]
    }
}
