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
}
