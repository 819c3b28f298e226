/// Keeps one data channel of one CEA-608 field in ATSC A/53 `cc_data` (triplets: a marker byte with `cc_valid` and
/// `cc_type`, then the two 608 bytes), so that libavcodec's `cc_dec`, which reads a field as one channel, decodes
/// just that channel.
///
/// A field carries two data channels: each control code names its channel (bit 3 of its first byte: 0x14 is CC1's
/// or CC3's, 0x1C CC2's or CC4's), and the characters that follow belong to the channel the last control code named.
/// Extended data services (XDS, field 2's codes 0x01–0x0F up to the end code 0x0F) belong to neither. A pair of the
/// chosen channel is kept, a second channel's control code rewritten as the first's (parity set again); any other
/// pair of the field is marked not valid, so `cc_dec` skips it without touching its state. Until the first control
/// code, characters count as the first channel's.
struct CEA608ChannelFilter {
    let fieldType: UInt8
    let dataChannel: Int
    private var current = 1
    private var inExtendedData = false

    init(fieldType: UInt8, dataChannel: Int) {
        self.fieldType = fieldType
        self.dataChannel = dataChannel
    }

    mutating func keep(_ data: [UInt8]) -> [UInt8] {
        var kept = data
        for index in stride(from: 0, to: kept.count - 2, by: 3) {
            let marker = kept[index]
            // Not valid, or not this 608 field (the other field, or 708's DTVCC packets).
            guard marker & 0x04 != 0, marker & 0x03 == fieldType else { continue }
            let (first, second) = (kept[index + 1] & 0x7F, kept[index + 2] & 0x7F)
            if first == 0, second == 0 { continue }  // padding
            switch first {
            case 0x01...0x0F:
                inExtendedData = first != 0x0F
                kept[index] &= ~0x04
                continue
            case 0x10...0x1F:
                inExtendedData = false
                current = first & 0x08 == 0 ? 1 : 2
            default: break
            }
            guard !inExtendedData, current == dataChannel else {
                kept[index] &= ~0x04
                continue
            }
            if (0x18...0x1F).contains(first) { kept[index + 1] = Self.oddParity(first - 0x08) }
        }
        return kept
    }

    /// Forgets the channel (a seek).
    mutating func reset() {
        current = 1
        inExtendedData = false
    }

    /// 608 bytes carry 7 bits and odd parity in the eighth.
    static func oddParity(_ byte: UInt8) -> UInt8 {
        let low = byte & 0x7F
        return low.nonzeroBitCount % 2 == 0 ? low | 0x80 : low
    }
}
