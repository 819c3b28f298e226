import Foundation
import LivePlayCore
import LivePlayFLV

/// H.264 with CEA-608 captions, as broadcasters carry them: ATSC A/53 `cc_data` in an SEI
/// (`user_data_registered_itu_t_t35`, "GA94") in every access unit, one byte pair of field 1 per picture in
/// presentation order. The source is ``EnhancedFixture``'s x264 stream (two B-frames, 25 fps), written as legacy
/// H.264 FLV tags, which Debian's ffmpeg reads too: `ffmpeg -f lavfi movie=F[out+subcc]` is the oracle.
///
/// The captions are pop-on (Resume Caption Loading, a row 15 preamble, the text, End Of Caption), each erased
/// (Erase Displayed Memory) some pictures later; control codes are sent twice, as encoders do.
public enum CaptionFixture {
    /// The captions: their text and the pictures (presentation index) where loading starts and the erase is sent.
    public static let captions: [(text: String, load: Int, erase: Int)] = [
        ("HELLO WORLD", 5, 40), ("SECOND LINE", 50, 90),
    ]

    /// The FLV file (video only).
    ///
    /// - Parameters:
    ///   - pictureCaptions: the 608 captions in the pictures' SEI (else the SEI carries only padding): their text,
    ///     and the pictures (presentation index) where loading starts and the erase is sent.
    ///   - scriptCaptions: `onTextData` messages (their text, and their time in milliseconds), each written before
    ///     the first picture decoded at or after its time.
    ///   - otherChannels: captions on CC2, CC3 or CC4 (`channel` 2, 3, 4) likewise. A field carries one pair per
    ///     picture: the pictures of CC1's and CC2's captions (field 1), and of CC3's and CC4's (field 2), must not
    ///     overlap.
    ///   - carriage: where the 608 captions travel.
    public static func make(
        seconds: Int = 4, pictureCaptions: [(text: String, load: Int, erase: Int)] = captions,
        scriptCaptions: [(text: String, at: UInt32)] = [],
        otherChannels: [(channel: Int, text: String, load: Int, erase: Int)] = [], carriage: Carriage = .sei
    ) throws -> String {
        let (_, source) = try EnhancedFixture.elementary(.h264, seconds: seconds)
        // Each field's pair per picture (presentation index).
        var schedule: [[Int: [UInt8]]] = [[:], [:]]
        let all = pictureCaptions.map { (channel: 1, text: $0.text, load: $0.load, erase: $0.erase) } + otherChannels
        for caption in all {
            let field = caption.channel <= 2 ? 0 : 1
            // Miscellaneous control codes: 0x14 CC1, 0x1C CC2, 0x15 CC3, 0x1D CC4; a preamble names only the data
            // channel (0x14 or 0x1C, row 15).
            let secondChannel: UInt8 = caption.channel % 2 == 0 ? 0x08 : 0
            let misc = 0x14 + UInt8(field) + secondChannel
            let loading = popOn(caption.text, misc: misc, preamble: 0x14 + secondChannel)
            let placed = loading.enumerated().map { (caption.load + $0.offset, $0.element) }
                + [(caption.erase, control(misc, 0x2C)), (caption.erase + 1, control(misc, 0x2C))]
            for (picture, pair) in placed {
                precondition(schedule[field][picture] == nil, "two captions at picture \(picture), field \(field + 1)")
                schedule[field][picture] = pair
            }
        }
        // Each picture's place in presentation order: its caption bytes travel with it whatever the decode order.
        let order = source.packets.indices.sorted { source.packets[$0].pts < source.packets[$1].pts }
        var displayIndex = [Int](repeating: 0, count: source.packets.count)
        for (position, index) in order.enumerated() { displayIndex[index] = position }
        var writer = FLVWriter(hasAudio: false)
        writer.writeVideo(codecID: 7, packetType: .sequenceHeader, keyframe: true, timestamp: 0, payload: source.extradata)
        let shift = -(source.packets.map(\.dts).min() ?? 0)
        var script = scriptCaptions[...]
        for (index, packet) in source.packets.enumerated() {
            let timestamp = UInt32(packet.dts + shift)
            while let next = script.first, next.at <= timestamp {
                writer.writeScript(
                    name: "onTextData", [.object([AMF0Property("text", .string(next.text))])], timestamp: next.at)
                script = script.dropFirst()
            }
            let scheduled = schedule.map { $0[displayIndex[index]] }
            let pairs = scheduled.map { $0 ?? [0x80, 0x80] }
            var payload = packet.data
            switch carriage {
            case .sei:
                payload = SEIFixture.lengthPrefixed(sei(pairs[0], pairs[1])) + packet.data
            case .captionInfoAMF0, .captionInfoAMF3:
                // Only the pictures that have a pair get a message, stamped with the picture's time.
                if scheduled.contains(where: { $0 != nil }) {
                    let at = UInt32(packet.pts + shift)
                    writer.writeTag(type: FLVTagType.script.rawValue, timestamp: at, body: captionInfo(pairs, carriage))
                }
            }
            writer.writeVideo(
                codecID: 7, packetType: .nalu, keyframe: packet.isKeyframe, timestamp: timestamp,
                compositionTime: Int32(packet.pts - packet.dts), payload: payload)
        }
        let name = "captions" + pictureCaptions.map { "-\($0.load)" }.joined() + scriptCaptions.map { "-\($0.at)" }.joined()
            + otherChannels.map { "-cc\($0.channel)-\($0.load)" }.joined() + (carriage == .sei ? "" : "-\(carriage)")
        return try Fixtures.write(writer.bytes, name: name)
    }

    /// The byte pairs of a pop-on caption, with the channel's first byte of its miscellaneous control codes and of
    /// its preambles (CC1's by default).
    static func popOn(_ text: String, misc: UInt8 = 0x14, preamble: UInt8 = 0x14) -> [[UInt8]] {
        var pairs = [control(misc, 0x20), control(misc, 0x20), control(preamble, 0x70), control(preamble, 0x70)]
        var characters = Array(text.utf8)
        if characters.count % 2 == 1 { characters.append(0) }
        for index in stride(from: 0, to: characters.count, by: 2) {
            pairs.append([oddParity(characters[index]), oddParity(characters[index + 1])])
        }
        return pairs + [control(misc, 0x2F), control(misc, 0x2F)]
    }

    private static func control(_ first: UInt8, _ second: UInt8) -> [UInt8] { [oddParity(first), oddParity(second)] }

    /// 608 bytes carry 7 bits and odd parity in the eighth (a zero byte is sent as 0x80).
    private static func oddParity(_ byte: UInt8) -> UInt8 {
        let low = byte & 0x7F
        return low.nonzeroBitCount % 2 == 0 ? low | 0x80 : low
    }

    /// Where a fixture's 608 captions travel.
    public enum Carriage: Sendable, Hashable {
        /// In each picture's SEI (A/53 `cc_data`), as broadcasters carry them.
        case sei
        /// In an `onCaptionInfo` script tag (`{type: "708", data: BASE64}`) before each picture with a pair, stamped
        /// with the picture's time: AMF0, the data the SEI's whole T.35 payload.
        case captionInfoAMF0
        /// The same in AMF3 behind AMF0's switch marker, the data a 32-bit length and the flags byte on: how Flash's
        /// HLS demuxers wrote it.
        case captionInfoAMF3
    }

    /// The T.35 payload of a caption SEI (ATSC A/53): `GA94`, then two triplets, a pair on each field.
    private static func t35(_ first: [UInt8], _ second: [UInt8]) -> [UInt8] {
        [0xB5, 0x00, 0x31] + Array("GA94".utf8) + [0x03] + flagsAndTriplets(first, second)
    }

    /// `process_cc_data_flag` and `cc_count` 2, `em_data`, then a triplet per field.
    private static func flagsAndTriplets(_ first: [UInt8], _ second: [UInt8]) -> [UInt8] {
        [0x40 | 2, 0xFF, 0xFC] + first + [0xFD] + second
    }

    /// The body of an `onCaptionInfo` script tag carrying `pairs` (one per field).
    private static func captionInfo(_ pairs: [[UInt8]], _ carriage: Carriage) -> [UInt8] {
        var encoder = AMF0Encoder()
        encoder.encode(.string("onCaptionInfo"))
        guard carriage == .captionInfoAMF3 else {
            let data = Data(t35(pairs[0], pairs[1])).base64EncodedString()
            encoder.encode(.object([AMF0Property("type", .string("708")), AMF0Property("data", .string(data))]))
            return encoder.bytes
        }
        let flagsOn = flagsAndTriplets(pairs[0], pairs[1])
        let length = withUnsafeBytes(of: UInt32(flagsOn.count).bigEndian, Array.init)
        let data = Data(length + flagsOn).base64EncodedString()
        // An anonymous dynamic object (traits inline, no sealed members), its members, the empty name that ends them.
        func amf3String(_ text: String) -> [UInt8] { u29(UInt32(text.utf8.count) << 1 | 1) + Array(text.utf8) }
        return encoder.bytes + [0x11, 0x0A, 0x0B, 0x01] + amf3String("type") + [0x06] + amf3String("708")
            + amf3String("data") + [0x06] + amf3String(data) + [0x01]
    }

    /// AMF3's variable-length integer (values below 2^21 here).
    private static func u29(_ value: UInt32) -> [UInt8] {
        if value < 0x80 { return [UInt8(value)] }
        if value < 0x4000 { return [UInt8(value >> 7) | 0x80, UInt8(value & 0x7F)] }
        return [UInt8(value >> 14) | 0x80, UInt8(value >> 7 & 0x7F) | 0x80, UInt8(value & 0x7F)]
    }

    /// An SEI NAL unit with one `user_data_registered_itu_t_t35` message: the A/53 `cc_data` with a pair on each
    /// field, emulation prevention applied.
    private static func sei(_ first: [UInt8], _ second: [UInt8]) -> [UInt8] {
        let body: [UInt8] = t35(first, second) + [0xFF]
        let rbsp: [UInt8] = [4, UInt8(body.count)] + body + [0x80]
        var unit: [UInt8] = [6]
        var zeros = 0
        for byte in rbsp {
            if zeros >= 2, byte <= 3 {
                unit.append(3)
                zeros = 0
            }
            unit.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return unit
    }
}
