import CFFmpeg
public import LivePlayCore

/// CEA-608 captions from the pictures' ATSC A/53 data (``VideoFrame/closedCaptionData``), decoded by libavcodec's
/// `cc_dec` (EIA-608) in its real-time mode: fed in presentation order, it tells each change of the screen (a
/// pop-on caption displayed, an erase, a roll-up line at most every 200 ms) at the picture that carried it, so a
/// player shows it with that picture. ``CaptionTimeline`` turns the changes into whole captions, with their ends.
///
/// One channel per decoder (``CaptionChannel``). `cc_dec` reads a whole field as one channel: it takes the second
/// data channel's control codes for the first's and writes both channels' text to one screen. So the pictures'
/// data goes through a ``CEA608ChannelFilter`` first, which keeps only the chosen channel's pairs of its field,
/// written as the first channel's.
public final class CaptionDecoder {
    public let channel: CaptionChannel
    private let session: CodecSession
    private var filter: CEA608ChannelFilter
    /// The text on screen, to tell a change from a repeat.
    private var screen = ""

    public init(channel: CaptionChannel = .cc1) throws(DecodeError) {
        guard let descriptor = avcodec_descriptor_get_by_name("eia_608") else {
            throw DecodeError(.decoderNotFound, "this libavcodec has no EIA-608 decoder")
        }
        let field = channel.field ?? (0, 1)
        self.channel = channel
        filter = CEA608ChannelFilter(fieldType: field.type, dataChannel: field.dataChannel)
        session = try CodecSession(
            codecID: descriptor.pointee.id, name: "eia_608", extradata: [], threadCount: 1, maximumPixels: 0,
            options: ["data_field": field.type == 0 ? "first" : "second", "real_time": "1"])
    }

    /// The screen from `frame` on, when its caption data changed it (the frames in presentation order).
    public func decode(_ frame: VideoFrame) throws(DecodeError) -> CaptionScreen? {
        guard let data = frame.closedCaptionData else { return nil }
        return try decode(data, at: frame.pts)
    }

    /// The screen from `pts` on, when the A/53 `cc_data` triplets `data` changed it (the picture stamped `pts`
    /// carried them: given in presentation order).
    public func decode(_ data: [UInt8], at pts: MediaTimestamp) throws(DecodeError) -> CaptionScreen? {
        // In real-time mode the subtitle's own time is the change before (libavcodec 5.1): the change is this
        // picture's.
        let kept = filter.keep(data)
        guard let subtitle = try session.decodeSubtitle(kept, pts: pts.milliseconds) else { return nil }
        let text = subtitle.lines.map(Self.plainText).filter { !$0.isEmpty }.joined(separator: "\n")
        guard text != screen else { return nil }
        screen = text
        return CaptionScreen(at: pts, text: text, channel: channel)
    }

    /// Forgets the screen (a seek: the pictures that follow are not the ones after it).
    public func reset() {
        session.reset()
        filter.reset()
        screen = ""
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
