public import LivePlayCore

/// A caption: text shown from `start` until `end`, on a caption channel (`CC1` to `CC4`, `TEXT`).
public struct Caption: Sendable, Hashable {
    public var start: MediaTimestamp
    public var end: MediaTimestamp
    /// Plain text, lines separated by `\n`.
    public var text: String
    public var channel: CaptionChannel

    public init(start: MediaTimestamp, end: MediaTimestamp, text: String, channel: CaptionChannel) {
        self.start = start
        self.end = end
        self.text = text
        self.channel = channel
    }
}

/// Where a caption comes from: a CEA-608 channel (two fields of two data channels each), or the text of the
/// stream's script data (`onTextData`, `onCaption`).
public enum CaptionChannel: String, Sendable, Hashable, CaseIterable {
    /// Field 1, data channel 1: what players show.
    case cc1 = "CC1"
    /// Field 1, data channel 2: often a second language.
    case cc2 = "CC2"
    /// Field 2, data channel 1.
    case cc3 = "CC3"
    /// Field 2, data channel 2.
    case cc4 = "CC4"
    /// The stream's script-data captions, shown whichever 608 channel is chosen.
    case text = "TEXT"

    /// The 608 field (A/53 `cc_type`: 0 the first, 1 the second) and its data channel (1, 2); nil for `text`.
    public var field: (type: UInt8, dataChannel: Int)? {
        switch self {
        case .cc1: (0, 1)
        case .cc2: (0, 2)
        case .cc3: (1, 1)
        case .cc4: (1, 2)
        case .text: nil
        }
    }
}

/// What a caption channel shows from a picture on: its text (lines separated by `\n`), empty once erased.
public struct CaptionScreen: Sendable, Hashable {
    public var at: MediaTimestamp
    public var text: String
    public var channel: CaptionChannel

    public init(at: MediaTimestamp, text: String, channel: CaptionChannel) {
        self.at = at
        self.text = text
        self.channel = channel
    }
}

/// Whole captions from a channel's screen changes (``CaptionScreen``): a caption starts when its text is shown and
/// ends when the screen changes again (erased, or replaced), as a WebVTT cue or `ffmpeg`'s `subcc` output has it.
public struct CaptionTimeline: Sendable {
    /// The caption on screen now, from its start.
    public private(set) var onScreen: CaptionScreen?

    public init() {}

    /// The screen changed: the caption it replaced, if one was showing.
    public mutating func show(_ change: CaptionScreen) -> Caption? {
        let ended = finish(at: change.at)
        if !change.text.isEmpty { onScreen = change }
        return ended
    }

    /// The caption on screen, ended at `end` (the end of the stream, a seek): nothing shows after it.
    public mutating func finish(at end: MediaTimestamp) -> Caption? {
        defer { onScreen = nil }
        guard let showing = onScreen, end > showing.at else { return nil }
        return Caption(start: showing.at, end: end, text: showing.text, channel: showing.channel)
    }
}
