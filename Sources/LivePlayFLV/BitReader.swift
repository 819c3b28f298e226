/// Reads bits most-significant first, with Exp-Golomb codes, as H.264 and HEVC parameter sets need.
///
/// Constructed from a NAL unit's RBSP (emulation-prevention bytes removed by ``BitReader/rbsp(_:)``).
/// Reads past the end return `nil`.
public struct BitReader: Sendable {
    private let bytes: [UInt8]
    private var bitOffset = 0

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var bitsRemaining: Int { bytes.count * 8 - bitOffset }

    public mutating func readBit() -> UInt32? {
        guard bitsRemaining >= 1 else { return nil }
        let byte = bytes[bitOffset >> 3]
        let bit = (byte >> (7 - UInt8(bitOffset & 7))) & 1
        bitOffset += 1
        return UInt32(bit)
    }

    public mutating func readFlag() -> Bool? {
        readBit().map { $0 == 1 }
    }

    /// Reads `count` bits (at most 32) as an unsigned integer.
    public mutating func readBits(_ count: Int) -> UInt32? {
        precondition(count >= 0 && count <= 32)
        guard bitsRemaining >= count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<count {
            value = value << 1 | readBit()!
        }
        return value
    }

    public mutating func skipBits(_ count: Int) -> Bool {
        guard count >= 0, bitsRemaining >= count else { return false }
        bitOffset += count
        return true
    }

    /// `ue(v)`: unsigned Exp-Golomb (ITU-T H.264 §9.1). Codes longer than 31 leading zeros are malformed.
    public mutating func readUnsignedExpGolomb() -> UInt32? {
        var leadingZeros = 0
        while true {
            guard let bit = readBit() else { return nil }
            if bit == 1 { break }
            leadingZeros += 1
            if leadingZeros > 31 { return nil }
        }
        guard let suffix = readBits(leadingZeros) else { return nil }
        return UInt32((UInt64(1) << leadingZeros) - 1 + UInt64(suffix))
    }

    /// `se(v)`: signed Exp-Golomb (ITU-T H.264 §9.1.1).
    public mutating func readSignedExpGolomb() -> Int32? {
        guard let code = readUnsignedExpGolomb() else { return nil }
        let magnitude = Int32((Int64(code) + 1) / 2)
        return code % 2 == 1 ? magnitude : -magnitude
    }

    /// Removes emulation-prevention bytes (`00 00 03` → `00 00`) from a NAL unit (H.264 §7.4.1).
    public static func rbsp(_ nalUnit: some Collection<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(nalUnit.count)
        var zeros = 0
        for byte in nalUnit {
            if zeros >= 2 && byte == 0x03 {
                zeros = 0
                continue
            }
            output.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return output
    }
}
