// The readers the codec configuration parsers (AVC, HEVC, audio) share: byte fields and Exp-Golomb bit fields,
// each throwing `.malformedConfiguration` when the bytes run out, never trapping.

/// Reads a configuration record's byte fields; running out of bytes throws `.malformedConfiguration`.
struct ConfigurationByteReader {
    private var reader: ByteReader
    /// The record being read, named in error messages.
    let structure: String

    init(_ bytes: [UInt8], structure: String) {
        reader = ByteReader(bytes)
        self.structure = structure
    }

    var remaining: Int { reader.remaining }

    func malformed(_ message: String) -> FLVError {
        FLVError(.malformedConfiguration, "\(structure): \(message)", offset: Int64(reader.offset))
    }

    mutating func uint8(_ field: String) throws(FLVError) -> UInt8 {
        guard let value = reader.readUInt8() else { throw malformed("\(field) is truncated") }
        return value
    }

    mutating func uint16(_ field: String) throws(FLVError) -> UInt16 {
        guard let value = reader.readUInt16() else { throw malformed("\(field) is truncated") }
        return value
    }

    mutating func uint32(_ field: String) throws(FLVError) -> UInt32 {
        guard let value = reader.readUInt32() else { throw malformed("\(field) is truncated") }
        return value
    }

    /// Reads `count` units, each with a 16-bit length in front; the count is trusted only as far as bytes last.
    mutating func lengthPrefixedUnits(_ count: Int, _ field: String) throws(FLVError) -> [[UInt8]] {
        var units: [[UInt8]] = []
        for index in 0..<count {
            guard let length = reader.readUInt16() else {
                throw malformed("length of \(field) \(index + 1) of \(count) is truncated")
            }
            guard let unit = reader.readBytes(Int(length)) else {
                throw malformed("\(field) \(index + 1) of \(count) claims \(length) bytes, \(reader.remaining) remain")
            }
            units.append(Array(unit))
        }
        return units
    }
}

/// Reads parameter-set syntax elements; running out of bits or a value out of range throws `.malformedConfiguration`.
struct ParameterSetBitReader {
    private var reader: BitReader
    /// The structure being read, named in error messages.
    let structure: String

    init(_ rbsp: [UInt8], structure: String) {
        reader = BitReader(rbsp)
        self.structure = structure
    }

    var bitsRemaining: Int { reader.bitsRemaining }

    func malformed(_ message: String) -> FLVError {
        FLVError(.malformedConfiguration, "\(structure): \(message)")
    }

    mutating func bits(_ count: Int, _ field: String) throws(FLVError) -> UInt32 {
        guard let value = reader.readBits(count) else { throw malformed("\(field) is truncated") }
        return value
    }

    mutating func flag(_ field: String) throws(FLVError) -> Bool {
        guard let value = reader.readFlag() else { throw malformed("\(field) is truncated") }
        return value
    }

    mutating func skip(_ count: Int, _ field: String) throws(FLVError) {
        guard reader.skipBits(count) else { throw malformed("\(field) is truncated") }
    }

    /// `ue(v)`, rejected above `maximum` (the syntax element's range in the spec).
    mutating func unsignedExpGolomb(_ field: String, maximum: UInt32 = UInt32.max - 1) throws(FLVError) -> Int {
        guard let value = reader.readUnsignedExpGolomb() else {
            throw malformed("\(field) is truncated or longer than 32 bits")
        }
        guard value <= maximum else { throw malformed("\(field) is \(value), above its maximum \(maximum)") }
        return Int(value)
    }

    /// `se(v)`, rejected outside `range`.
    mutating func signedExpGolomb(
        _ field: String, range: ClosedRange<Int32> = Int32.min...Int32.max
    ) throws(FLVError) -> Int {
        guard let value = reader.readSignedExpGolomb() else {
            throw malformed("\(field) is truncated or longer than 32 bits")
        }
        guard range.contains(value) else { throw malformed("\(field) is \(value), outside \(range)") }
        return Int(value)
    }
}
