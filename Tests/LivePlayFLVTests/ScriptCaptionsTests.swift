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

    /// `onCaptionInfo {type: "708", data}`: the base64 data; another type (WebVTT) or message is none.
    @Test func captionInfoOf708CarriesItsData() {
        let info = AMF0Value.object([AMF0Property("type", .string("708")), AMF0Property("data", .string("AAEC"))])
        #expect(ScriptCaptions.captionInfoData(of: Self.message("onCaptionInfo", [info])) == "AAEC")
        let vtt = AMF0Value.object([AMF0Property("type", .string("WebVTT")), AMF0Property("data", .string("HELLO"))])
        #expect(ScriptCaptions.captionInfoData(of: Self.message("onCaptionInfo", [vtt])) == nil)
        #expect(ScriptCaptions.captionInfoData(of: Self.message("onTextData", [info])) == nil)
        #expect(ScriptCaptions.text(of: Self.message("onCaptionInfo", [info])) == nil)
    }

    /// The three layouts writers use give the same triplets, no more than `cc_count` says; others give none.
    @Test func captionInfoPayloadsInEachLayoutGiveTheirTriplets() {
        let triplets: [UInt8] = [0xFC, 0x94, 0x20, 0xFD, 0x80, 0x80]
        let flagsOn: [UInt8] = [0x40 | 2, 0xFF] + triplets
        let identifier: [UInt8] = [0x47, 0x41, 0x39, 0x34, 0x03]
        #expect(ScriptCaptions.ccData(ofCaptionInfo: [0xB5, 0x00, 0x31] + identifier + flagsOn + [0xFF]) == triplets)
        #expect(ScriptCaptions.ccData(ofCaptionInfo: identifier + flagsOn) == triplets)
        #expect(ScriptCaptions.ccData(ofCaptionInfo: [0, 0, 0, UInt8(flagsOn.count)] + flagsOn) == triplets)
        // cc_count 1: the second triplet is not read; a cut one is not either.
        #expect(ScriptCaptions.ccData(ofCaptionInfo: identifier + [0x41, 0xFF] + triplets) == Array(triplets.prefix(3)))
        #expect(ScriptCaptions.ccData(ofCaptionInfo: identifier + flagsOn.dropLast()) == Array(triplets.prefix(3)))
        #expect(ScriptCaptions.ccData(ofCaptionInfo: identifier + [0x40, 0xFF]) == nil, "cc_count 0")
        #expect(ScriptCaptions.ccData(ofCaptionInfo: Array("not captions".utf8)) == nil)
        #expect(ScriptCaptions.ccData(ofCaptionInfo: []) == nil)
    }
}
