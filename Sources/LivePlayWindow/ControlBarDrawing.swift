internal import CSDL2

/// The control bar drawn where ``ControlBar/layout(in:)`` puts its controls: a dark band, white icons made of filled
/// rectangles (no image files), the time and badges in the window's font.
extension WindowRenderer {
    func drawBar() {
        let (frame, controls) = bar.layout(in: size)
        fillBox(x: frame.x, y: frame.y, width: frame.width, height: frame.height, alpha: 192)
        // One row's height: the bar is two rows high in a narrow window.
        let row = ControlBar.height(forWindowHeight: size.height)
        let textSize = max(10, row * 2 / 5)
        for (control, box) in controls {
            // The icons' square, centred in the control: two fifths of the bar's height.
            let side = max(8, box.height * 2 / 5)
            let icon = BarRectangle(
                x: box.x + (box.width - side) / 2, y: box.y + (box.height - side) / 2, width: side, height: side)
            switch control {
            case .playPause:
                if bar.paused { fillRects(Self.playTriangle(in: icon)) } else { fillRects(Self.pauseBars(in: icon)) }
            case .time:
                switch bar.timeline {
                case .onDemand(let position, let duration):
                    drawCentred(ControlBar.timeText(position: position, duration: duration), in: box, size: textSize)
                case .timeShift(let position, _, let end, _):
                    drawCentred(ControlBar.behindText(position: position, end: end), in: box, size: textSize)
                case .live:
                    break
                }
            case .seekBar:
                drawSlider(in: box, fraction: bar.seekFraction)
            case .liveBadge:
                // Red while at the live edge (Brightcove's live layout).
                let badge = Self.inset(box, by: box.height / 5)
                fillBox(x: badge.x, y: badge.y, width: badge.width, height: badge.height, alpha: 255, red: 204)
                drawCentred("LIVE", in: box, size: textSize)
            case .goLive:
                let badge = Self.inset(box, by: box.height / 5)
                fillBox(x: badge.x, y: badge.y, width: badge.width, height: badge.height, alpha: 255, gray: 80)
                drawCentred("GO LIVE", in: box, size: textSize)
            case .mute:
                fillRects(Self.speaker(in: icon, muted: bar.muted))
            case .volume:
                drawSlider(in: box, fraction: bar.volumeFraction)
            case .rendition:
                drawCentred(bar.rendition ?? "", in: box, size: textSize)
            case .captions:
                let outline = Self.inset(box, by: box.height / 4)
                fillRects(Self.outline(outline, thickness: max(1, box.height / 24)))
                if bar.captions {
                    let underline = outline.y + outline.height + 2
                    fillRects([SDL_Rect(x: Int32(outline.x), y: Int32(underline), w: Int32(outline.width), h: 3)])
                }
                drawCentred("CC", in: box, size: textSize * 4 / 5)
            case .fullscreen:
                fillRects(Self.corners(in: icon))
            }
        }
        if let hover = bar.hover, let thumbnail {
            let top = BarRectangle(x: frame.x, y: frame.y, width: frame.width, height: row)
            drawThumbnail(thumbnail, at: hover, above: top, textSize: textSize)
        }
    }

    /// The thumbnail above the seek bar, centred on the pointer (kept inside the window), framed in white, with the
    /// time it shows along its foot.
    private func drawThumbnail(
        _ thumbnail: (texture: OpaquePointer, width: Int, height: Int), at hover: (x: Int, seconds: Double),
        above bar: BarRectangle, textSize: Int
    ) {
        let border = 2
        let x = min(max(border, hover.x - thumbnail.width / 2), size.width - thumbnail.width - border)
        let y = bar.y - thumbnail.height - border - bar.height / 4
        fillBox(
            x: x - border, y: y - border, width: thumbnail.width + 2 * border, height: thumbnail.height + 2 * border,
            alpha: 255, gray: 255)
        var destination = SDL_Rect(x: Int32(x), y: Int32(y), w: Int32(thumbnail.width), h: Int32(thumbnail.height))
        SDL_RenderCopy(renderer, thumbnail.texture, nil, &destination)
        let stripHeight = textSize * 3 / 2
        let strip = BarRectangle(
            x: x, y: y + thumbnail.height - stripHeight, width: thumbnail.width, height: stripHeight)
        fillBox(x: strip.x, y: strip.y, width: strip.width, height: strip.height, alpha: 160)
        drawCentred(ControlBar.clock(hover.seconds), in: strip, size: textSize)
    }

    /// `words` in the window's font, centred in `box`.
    private func drawCentred(_ words: String, in box: BarRectangle, size: Int) {
        let (width, height) = text.measure(words, size: size)
        text.draw(words, x: box.x + (box.width - width) / 2, y: box.y + (box.height - height) / 2, size: size)
    }

    /// A gray track across `box`, white up to `fraction`, with a white knob there.
    private func drawSlider(in box: BarRectangle, fraction: Double) {
        let thickness = max(2, box.height / 10)
        let y = box.y + (box.height - thickness) / 2
        let filled = Int(Double(box.width) * fraction)
        fillBox(x: box.x, y: y, width: box.width, height: thickness, alpha: 255, gray: 110)
        fillBox(x: box.x, y: y, width: filled, height: thickness, alpha: 255, gray: 255)
        let knob = max(6, box.height / 3)
        let knobX = min(box.x + box.width - knob, max(box.x, box.x + filled - knob / 2))
        fillBox(x: knobX, y: box.y + (box.height - knob) / 2, width: knob, height: knob, alpha: 255, gray: 255)
    }

    private func fillRects(_ rectangles: [SDL_Rect]) {
        SDL_SetRenderDrawColor(renderer, 255, 255, 255, 255)
        rectangles.withUnsafeBufferPointer { _ = SDL_RenderFillRects(renderer, $0.baseAddress, Int32($0.count)) }
    }

    private static func inset(_ box: BarRectangle, by margin: Int) -> BarRectangle {
        BarRectangle(x: box.x, y: box.y + margin, width: box.width, height: box.height - 2 * margin)
    }

    /// ▶, a row of pixels at a time.
    static func playTriangle(in icon: BarRectangle) -> [SDL_Rect] {
        (0..<icon.height).map { row in
            let half = icon.height / 2
            let width = (half - abs(row - half)) * icon.width / max(1, half)
            return SDL_Rect(x: Int32(icon.x), y: Int32(icon.y + row), w: Int32(max(1, width)), h: 1)
        }
    }

    /// ❚❚: two bars, each a third of the icon wide.
    static func pauseBars(in icon: BarRectangle) -> [SDL_Rect] {
        let bar = max(2, icon.width / 3)
        return [
            SDL_Rect(x: Int32(icon.x), y: Int32(icon.y), w: Int32(bar), h: Int32(icon.height)),
            SDL_Rect(x: Int32(icon.x + icon.width - bar), y: Int32(icon.y), w: Int32(bar), h: Int32(icon.height)),
        ]
    }

    /// A speaker (a box and a cone), with a wave beside it, or a cross when muted.
    static func speaker(in icon: BarRectangle, muted: Bool) -> [SDL_Rect] {
        let unit = max(1, icon.height / 8)
        func rectangle(_ x: Int, _ y: Int, _ width: Int, _ height: Int) -> SDL_Rect {
            SDL_Rect(x: Int32(x), y: Int32(y), w: Int32(width), h: Int32(height))
        }
        var rectangles = [rectangle(icon.x, icon.y + 3 * unit, 2 * unit, 2 * unit)]
        // The cone widens from the box's height to the icon's, a column at a time.
        for column in 0..<(3 * unit) {
            let reach = unit + column
            rectangles.append(rectangle(icon.x + 2 * unit + column, icon.y + 4 * unit - reach, 1, 2 * reach))
        }
        let right = icon.x + 6 * unit
        if muted {
            // A cross of small squares, two diagonals.
            for step in 0..<(4 * unit) {
                let y = icon.y + 2 * unit + step
                rectangles.append(rectangle(right + step / 2, y, unit, unit))
                rectangles.append(rectangle(right + 2 * unit - step / 2, y, unit, unit))
            }
        } else {
            rectangles.append(rectangle(right, icon.y + 3 * unit, unit, 2 * unit))
            rectangles.append(rectangle(right + 2 * unit, icon.y + unit, unit, 6 * unit))
        }
        return rectangles
    }

    /// ⛶: four corners, each two strokes a third of the icon long.
    static func corners(in icon: BarRectangle) -> [SDL_Rect] {
        let (length, stroke) = (max(3, icon.width / 3), max(2, icon.width / 10))
        let (left, top, right, bottom) = (icon.x, icon.y, icon.x + icon.width - stroke, icon.y + icon.height - stroke)
        let farX = icon.x + icon.width - length, farY = icon.y + icon.height - length
        return [
            (left, top, length, stroke), (left, top, stroke, length), (farX, top, length, stroke),
            (right, top, stroke, length), (left, bottom, length, stroke), (left, farY, stroke, length),
            (farX, bottom, length, stroke), (right, farY, stroke, length),
        ].map { SDL_Rect(x: Int32($0.0), y: Int32($0.1), w: Int32($0.2), h: Int32($0.3)) }
    }

    /// The four edges of `box`, `thickness` wide.
    static func outline(_ box: BarRectangle, thickness: Int) -> [SDL_Rect] {
        [
            (box.x, box.y, box.width, thickness), (box.x, box.y + box.height - thickness, box.width, thickness),
            (box.x, box.y, thickness, box.height), (box.x + box.width - thickness, box.y, thickness, box.height),
        ].map { SDL_Rect(x: Int32($0.0), y: Int32($0.1), w: Int32($0.2), h: Int32($0.3)) }
    }
}
