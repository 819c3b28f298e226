import LivePlayCore
import LivePlayFLV
import Testing

/// Caption text in script data: `onTextData {text}` and `onCaption "text"`; anything else is not a caption, and a
/// caption is held to a screenful however much text it brings.
@Suite struct ScriptCaptionsTests {
    static func message(_ name: String, _ arguments: [AMF0Value]) -> FLVDataMessage {
        FLVDataMessage(name: name, arguments: arguments, timestamp: MediaTimestamp(milliseconds: 400))
    }

    @Test func textDataAndCaptionMessagesCarryText() {
        let object = AMF0Value.object([AMF0Property("text", .string("HELLO\r\nWORLD")), AMF0Property("trackid", .number(99))])
        #expect(ScriptCaptions.text(of: Self.message("onTextData", [object])) == "HELLO\nWORLD")
        #expect(ScriptCaptions.text(of: Self.message("onTextData", [.ecmaArray([AMF0Property("text", .string(""))])])) == "")
        #expect(ScriptCaptions.text(of: Self.message("onCaption", [.string("SPOKEN"), .number(1)])) == "SPOKEN")
        // Not captions: another handler, or a caption message without its text.
        #expect(ScriptCaptions.text(of: Self.message("onMetaData", [object])) == nil)
        #expect(ScriptCaptions.text(of: Self.message("onTextData", [.object([AMF0Property("language", .string("en"))])])) == nil)
        #expect(ScriptCaptions.text(of: Self.message("onCaption", [.number(3)])) == nil)
        #expect(ScriptCaptions.text(of: Self.message("onTextData", [])) == nil)
    }

    @Test func aCaptionIsAtMostAScreenful() {
        let line = String(repeating: "W", count: 500)
        let flood = Array(repeating: line, count: 40).joined(separator: "\n")
        let text = ScriptCaptions.text(of: Self.message("onCaption", [.longString(flood)]))
        let lines = text?.split(separator: "\n") ?? []
        #expect(lines.count == 15 && lines.allSatisfy { $0.count == 128 }, "\(lines.count) lines")
    }
}
