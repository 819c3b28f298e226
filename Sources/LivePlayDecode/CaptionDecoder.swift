import CFFmpeg
public import LivePlayCore

/// A caption: text shown from `start` until `end`, on a caption channel (`CC1`, `CC3`).
public struct Caption: Sendable, Hashable {
    public var start: MediaTimestamp
    public var end: MediaTimestamp
    /// Plain text, lines separated by `\n`.
    public var text: String
    public var channel: CaptionChannel
}

/// The CEA-608 channels libavcodec decodes: the first of each field (CC2 and CC4 are not decoded).
public enum CaptionChannel: String, Sendable, Hashable, CaseIterable {
    /// Field 1: what players show.
    case cc1 = "CC1"
    /// Field 2.
    case cc3 = "CC3"
}

/// CEA-608 captions from the pictures' ATSC A/53 data (``VideoFrame/closedCaptionData``), decoded by libavcodec's
/// `cc_dec` (EIA-608): fed in presentation order, it gives each caption once the screen has moved on from it
/// (erased, or replaced), with when it appeared and for how long, as `ffmpeg -f lavfi movie=F[out+subcc]` does.
///
/// One channel per decoder (``CaptionChannel``).
public final class CaptionDecoder {
    public let channel: CaptionChannel
    private let session: CodecSession
    /// The caption on screen, from its start.
    private var showing: (start: MediaTimestamp, text: String)?

    public init(channel: CaptionChannel = .cc1) throws(DecodeError) {
        guard let descriptor = avcodec_descriptor_get_by_name("eia_608") else {
            throw DecodeError(.decoderNotFound, "this libavcodec has no EIA-608 decoder")
        }
        self.channel = channel
        session = try CodecSession(
            codecID: descriptor.pointee.id, name: "eia_608", extradata: [], threadCount: 1, maximumPixels: 0,
            options: ["data_field": channel == .cc1 ? "first" : "second"])
    }

    /// The captions that ended with `frame`'s data (the frames in presentation order).
    public func decode(_ frame: VideoFrame) throws(DecodeError) -> [Caption] {
        guard let data = frame.closedCaptionData else { return [] }
        guard let subtitle = try session.decodeSubtitle(data, pts: frame.pts.milliseconds) else { return [] }
        let at = MediaTimestamp(milliseconds: subtitle.start)
        let text = subtitle.lines.map(Self.plainText).filter { !$0.isEmpty }.joined(separator: "\n")
        // With its length known the caption is whole; without, it shows until the next change.
        if let duration = subtitle.duration {
            return text.isEmpty ? [] : [Caption(start: at, end: at + duration, text: text, channel: channel)]
        }
        var ended: [Caption] = []
        if let showing, at > showing.start {
            ended.append(Caption(start: showing.start, end: at, text: showing.text, channel: channel))
        }
        showing = text.isEmpty ? nil : (at, text)
        return ended
    }

    /// The caption still on screen, ended at `end` (the end of the stream).
    public func finish(at end: MediaTimestamp) -> Caption? {
        defer { showing = nil }
        guard let showing, end > showing.start else { return nil }
        return Caption(start: showing.start, end: end, text: showing.text, channel: channel)
    }

    /// An ASS event line (`ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text`) as plain text: the
    /// override blocks (`{\an7}`) removed, `\N` a line break, `\h` a space.
    static func plainText(_ line: String) -> String {
        let text = line.split(separator: ",", maxSplits: 8, omittingEmptySubsequences: false).last.map(String.init) ?? ""
        var plain = ""
        var inBlock = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            let next = text.index(after: index)
            if inBlock {
                if character == "}" { inBlock = false }
            } else if character == "{" {
                inBlock = true
            } else if character == "\\", next < text.endIndex, "Nnh".contains(text[next]) {
                plain.append(text[next] == "h" ? " " : "\n")
                index = text.index(after: next)
                continue
            } else {
                plain.append(character)
            }
            index = next
        }
        return plain.split(separator: "\n").map { $0.trimmingSpaces() }.joined(separator: "\n")
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
