/// Caption text a stream carries in its script data, as Flash-era publishers and FFmpeg's FLV demuxer have it:
/// `onTextData` with an object whose `text` is the caption (from its tag's time until the next one; an empty text
/// clears it), and Adobe's `onCaption` with the text as its first argument. `onCaptionInfo` (base64 CEA-708 in an
/// AMF3 object) is not read: no publisher here writes it.
public enum ScriptCaptions {
    /// The caption text of `message`, when it is a caption message.
    public static func text(of message: FLVDataMessage) -> String? {
        let text: String?
        switch message.name {
        case "onTextData": text = message.arguments.first?["text"]?.stringValue
        case "onCaption": text = message.arguments.first?.stringValue
        default: return nil
        }
        guard let text else { return nil }
        // At most a screenful: the lines a 608 screen has, each as wide as a wide one.
        let lines = text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        return lines.prefix(15).map { String($0.prefix(128)) }.joined(separator: "\n")
    }

    /// The base64 CEA-708 data of an `onCaptionInfo` message (`{type: "708", data: BASE64}`, in AMF0, or in AMF3
    /// behind AMF0's switch marker as Flash writers sent it); nil for any other message, or caption info of another
    /// type (WebVTT text).
    public static func captionInfoData(of message: FLVDataMessage) -> String? {
        guard message.name == "onCaptionInfo", let info = message.arguments.first,
            info["type"]?.stringValue == "708"
        else { return nil }
        return info["data"]?.stringValue
    }

    /// The ATSC A/53 `cc_data` triplets of an `onCaptionInfo` payload, in the layouts writers use: the SEI's whole
    /// `user_data_registered_itu_t_t35` payload (country 0xB5, provider 0x0031, `GA94`, type 3, then the flags
    /// byte, `em_data` and the triplets), the same from `GA94` on, or the flags byte on behind a 32-bit length of
    /// what follows (Flash's HLS demuxers). No more triplets than the flags byte's `cc_count`; nil when none of
    /// these fits or no triplet is there.
    public static func ccData(ofCaptionInfo payload: [UInt8]) -> [UInt8]? {
        let identifier: [UInt8] = [0x47, 0x41, 0x39, 0x34, 0x03]  // "GA94", cc_data
        let start: Int
        if payload.starts(with: [0xB5, 0x00, 0x31] + identifier) {
            start = 8
        } else if payload.starts(with: identifier) {
            start = 5
        } else if payload.count >= 6, payload.prefix(4).reduce(0, { $0 << 8 | Int($1) }) == payload.count - 4 {
            start = 4
        } else {
            return nil
        }
        guard payload.count > start + 2 else { return nil }
        let count = Int(payload[start] & 0x1F)
        let triplets = payload[(start + 2)...].prefix(count * 3)
        let whole = triplets.count / 3 * 3
        return whole > 0 ? Array(triplets.prefix(whole)) : nil
    }
}
