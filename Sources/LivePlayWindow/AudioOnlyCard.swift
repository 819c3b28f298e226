internal import CSDL2
public import LivePlay

/// What the window shows in place of pictures for a stream without video (Brightcove's audio-only layout): the poster,
/// fitted above the control bar, or, without one, a plain card with the title and a level meter of what is heard.
public struct AudioOnlyCard: Sendable, Equatable {
    public var title: String
    /// `--poster`, or the playlist item's own; nil: the card.
    public var poster: RGBPicture?

    public init(title: String, poster: RGBPicture? = nil) {
        self.title = title
        self.poster = poster
    }

    /// The card's background.
    static let cardGray: UInt8 = 28

    /// The meter's range: its empty end, in dBFS (a PPM's −60 dB), to full scale.
    static let meterFloor = -60.0

    /// How much of the meter `decibels` fills (0–1).
    static func meterFraction(_ decibels: Double) -> Double {
        guard decibels.isFinite else { return 0 }
        return min(1, max(0, (decibels - meterFloor) / -meterFloor))
    }
}

extension WindowRenderer {
    /// The poster fitted into the window above the control bar (which is always shown audio-only), or the card: the
    /// title a little above the middle, the meter under it.
    func drawAudioOnly() {
        guard let card = audioOnly else { return }
        let view = size
        let area = PictureSize(width: view.width, height: max(1, view.height - bar.layout(in: view).bar.height))
        if let poster {
            var destination = Self.destination(
                picture: PictureSize(width: poster.width, height: poster.height), view: area, mode: .fillEdge,
                rotation: .rotation0)
            SDL_RenderCopyExF(renderer, poster.texture, nil, &destination, 0, nil, SDL_FLIP_NONE)
            return
        }
        fillBox(x: 0, y: 0, width: view.width, height: area.height, alpha: 255, gray: AudioOnlyCard.cardGray)
        var size = max(12, area.height / 12)
        let widest = view.width * 8 / 10
        let measured = text.measure(card.title, size: size).width
        if measured > widest { size = max(8, size * widest / max(1, measured)) }
        let (width, height) = text.measure(card.title, size: size)
        text.draw(card.title, x: (view.width - width) / 2, y: area.height * 2 / 5 - height, size: size)
        let meter = Self.meterFrame(in: area)
        fillBox(x: meter.x, y: meter.y, width: meter.width, height: meter.height, alpha: 255, gray: 64)
        let lit = Int((Double(meter.width) * AudioOnlyCard.meterFraction(soundLevel)).rounded())
        if lit > 0 { fillBox(x: meter.x, y: meter.y, width: lit, height: meter.height, alpha: 255, gray: 232) }
    }

    /// Where the card's meter is in `area` (the window above the bar): six tenths of its width, centred, three fifths
    /// of the way down.
    static func meterFrame(in area: PictureSize) -> BarRectangle {
        let height = max(6, area.height / 24)
        return BarRectangle(x: area.width / 5, y: area.height * 3 / 5, width: area.width * 3 / 5, height: height)
    }
}
