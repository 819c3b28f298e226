internal import CSDL2
import LivePlay
import Foundation
import Glibc

/// The SDL window, renderer and picture texture: created, used and destroyed on the window thread only.
final class WindowRenderer {
    private let window: OpaquePointer
    /// SDL's renderer (the control bar's drawing, in its own file, uses it too).
    let renderer: OpaquePointer
    private var texture: OpaquePointer?
    private var textureFormat: (format: UInt32, width: Int, height: Int)?
    /// What was drawn last, to draw again on a resize or expose.
    private var last: FrameTiming?
    private var title: String
    private var shownStatus: String?
    /// The figures drawn over the picture while ``overlayVisible`` (`i`).
    var overlay: [String] = []
    var overlayVisible = false
    /// What the player is doing when it is not simply playing (“paused”, “loading…”), drawn on the picture.
    var status: String?
    /// The sound is muted: drawn on the picture.
    var muted = false
    /// The key list is shown (`h`, `?`, F1).
    var helpVisible = false
    /// What `h` shows: every key and what it does.
    static let help = [
        "Space, click   pause / resume", "F, double-click   fullscreen", "M   mute      Up / Down   volume",
        "Left / Right   back / on 10 s", "1 / 2 / 3   auto / speed / smooth", "L   live edge      S   snapshot",
        "R   rotate    I   figures    C   captions", "N / P   next / previous stream    B   next rendition",
        "V / A   next video / audio track", "H, ?, F1   this list      Q   quit",
        "Move the mouse for the control bar",
    ]
    /// The control bar: its layout, what it shows, and when it hides.
    var bar = ControlBar()
    /// The control bar's time now (``PlayerWindow``'s clock), for whether to draw it.
    var now = Duration.zero
    /// The last redraw drew the control bar.
    private(set) var barDrawn = false
    /// The picture over the seek bar where the pointer rests (``PlayerWindow/setThumbnail(_:seconds:)``), its size,
    /// and the time it was asked for.
    var thumbnail: (texture: OpaquePointer, width: Int, height: Int)?
    private(set) var thumbnailSeconds: Double?
    /// Audio-only: what shows in place of pictures (``AudioOnlyCard``), its poster uploaded, and the meter's level.
    private(set) var audioOnly: AudioOnlyCard?
    var poster: (texture: OpaquePointer, width: Int, height: Int)?
    var soundLevel = -Double.infinity
    /// The words on the picture, in a TrueType font.
    let text: WindowText
    /// The caption on screen with the picture (``FrameTiming/caption``) is drawn (`c`).
    var captionsVisible: Bool
    let wakeEvent: UInt32
    /// SDL's name for the renderer it chose (`opengl`, `software`, …).
    let name: String

    /// Which display did not answer, for the sentence.
    private static func unreachableDisplay(driver: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        let named = [("DISPLAY", environment["DISPLAY"]), ("WAYLAND_DISPLAY", environment["WAYLAND_DISPLAY"])]
            .compactMap { name, value in value.flatMap { $0.isEmpty ? nil : "\(name)=\($0)" } }
        let fallback = driver.isEmpty ? "" : " (SDL fell back to its \(driver) driver, which shows nothing)"
        return "no display answers at \(named.joined(separator: " or "))\(fallback): is the X server or Wayland "
            + "compositor running, and may this user reach it?"
    }

    init(options: PlayerWindow.Options) throws(WindowError) {
        try WindowError.loadSDL()
        Self.useUTF8Characters()
        guard SDL_InitSubSystem(SDL_INIT_VIDEO) == 0 else { throw .sdl(.noDisplay, "cannot open the display") }
        // A display that does not answer (DISPLAY=:99 with no X server there) leaves SDL on a driver that shows
        // nothing (offscreen, KMS/DRM without a console): a window nobody sees is an error, not a success. A driver
        // asked for by name (SDL_VIDEODRIVER) is taken as meant.
        let driver = SDL_GetCurrentVideoDriver().map { String(cString: $0) } ?? ""
        if getenv("SDL_VIDEODRIVER") == nil, !["x11", "wayland"].contains(driver) {
            SDL_QuitSubSystem(SDL_INIT_VIDEO)
            throw WindowError(.noDisplay, Self.unreachableDisplay(driver: driver))
        }
        // Linear filtering when scaling, like the picture conversions liveplay draws on the CPU.
        SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "1")
        // Two clicks count as a double-click within the time a single click waits for a second one.
        SDL_SetHint(SDL_HINT_MOUSE_DOUBLE_CLICK_TIME, String(Int(PlayerWindow.doubleClickTime / .milliseconds(1))))
        let centered = Int32(liveplay_sdl_windowpos_centered())
        let flags = SDL_WINDOW_RESIZABLE.rawValue
        guard
            let window = SDL_CreateWindow(
                options.title, centered, centered, Int32(options.size.width), Int32(options.size.height), flags)
        else {
            SDL_QuitSubSystem(SDL_INIT_VIDEO)
            throw .sdl(.noDisplay, "cannot open a window")
        }
        guard let renderer = SDL_CreateRenderer(window, -1, 0) ?? SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE.rawValue)
        else {
            SDL_DestroyWindow(window)
            SDL_QuitSubSystem(SDL_INIT_VIDEO)
            throw .sdl(.noDisplay, "cannot draw in the window")
        }
        self.window = window
        self.renderer = renderer
        title = options.title
        captionsVisible = options.showsCaptions
        wakeEvent = SDL_RegisterEvents(1)
        text = WindowText(renderer: renderer)
        var info = SDL_RendererInfo()
        name = SDL_GetRendererInfo(renderer, &info) == 0 && info.name != nil ? String(cString: info.name) : "unknown"
        clear()
        SDL_RenderPresent(renderer)
        if options.fullscreen { setFullscreen(true) }
    }

    func close() {
        text.close()
        if let texture { SDL_DestroyTexture(texture) }
        setThumbnail(nil, seconds: nil)
        setAudioOnly(nil)
        SDL_DestroyRenderer(renderer)
        SDL_DestroyWindow(window)
        SDL_QuitSubSystem(SDL_INIT_VIDEO)
    }

    /// The window's size in pixels.
    var size: PictureSize {
        var width: Int32 = 0
        var height: Int32 = 0
        SDL_GetRendererOutputSize(renderer, &width, &height)
        return PictureSize(width: Int(width), height: Int(height))
    }

    /// Uploads `frame` and draws it as `timing` asks.
    func draw(_ frame: VideoFrame, timing: FrameTiming) {
        guard upload(frame) else { return }
        last = timing
        redraw()
    }

    /// Draws the last picture again (a resize, an expose, a new status line).
    func redraw() {
        clear()
        if audioOnly != nil {
            drawAudioOnly()
        } else if let texture, let format = textureFormat, let timing = last {
            var destination = Self.destination(
                picture: PictureSize(width: format.width, height: format.height), view: size, mode: timing.renderMode,
                rotation: timing.rotation)
            SDL_RenderCopyExF(renderer, texture, nil, &destination, Double(timing.rotation.rawValue), nil, SDL_FLIP_NONE)
        }
        if captionsVisible, let caption = last?.caption { drawCaption(caption) }
        if let status { drawBadge(status, right: false) }
        if muted { drawBadge("muted", right: true) }
        barDrawn = bar.isVisible(at: now)
        if barDrawn { drawBar() }
        if overlayVisible, !overlay.isEmpty { drawOverlay() }
        if helpVisible { drawHelp() }
        text.endFrame()
        SDL_RenderPresent(renderer)
    }

    /// Makes the C library's characters UTF-8 before SDL opens the display. A Swift program runs in the "C"
    /// locale, where Xlib cannot convert SDL's UTF-8 title: the window manager's `_NET_WM_NAME` is never set and
    /// `WM_NAME` holds the bytes as Latin-1 ("liveplay â\u{80}\u{94}…"). Only `LC_CTYPE` changes, and only when it is
    /// not UTF-8 already; the environment's own UTF-8 locale is kept.
    private static func useUTF8Characters() {
        let current = setlocale(LC_CTYPE, "").map { String(cString: $0) } ?? ""
        guard !current.uppercased().contains("UTF-8") && !current.uppercased().contains("UTF8") else { return }
        _ = setlocale(LC_CTYPE, "C.UTF-8")
    }

    /// The title, and the status after it (“loading…”), so a frozen picture says why.
    func setTitle(_ title: String, status: String?) {
        guard title != self.title || status != shownStatus else { return }
        self.title = title
        shownStatus = status
        SDL_SetWindowTitle(window, status.map { "\(title) — \($0)" } ?? title)
    }

    /// Fullscreen is asked of the window manager (SDL's desktop fullscreen). With none, on a bare X server (a
    /// kiosk, a wall of monitors, Xvfb), SDL takes the request as done while the window keeps its size, so the
    /// window covers its display itself, borderless, and goes back to where it was after.
    func setFullscreen(_ on: Bool) {
        guard !hasWindowManager else {
            SDL_SetWindowFullscreen(window, on ? SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue : 0)
            return
        }
        if on, coveringBounds == nil {
            var display = SDL_Rect()
            guard SDL_GetDisplayBounds(max(0, SDL_GetWindowDisplayIndex(window)), &display) == 0 else { return }
            var windowed = SDL_Rect()
            SDL_GetWindowPosition(window, &windowed.x, &windowed.y)
            SDL_GetWindowSize(window, &windowed.w, &windowed.h)
            coveringBounds = windowed
            SDL_SetWindowBordered(window, SDL_FALSE)
            SDL_SetWindowPosition(window, display.x, display.y)
            SDL_SetWindowSize(window, display.w, display.h)
        } else if !on, let windowed = coveringBounds {
            coveringBounds = nil
            SDL_SetWindowBordered(window, SDL_TRUE)
            SDL_SetWindowSize(window, windowed.w, windowed.h)
            SDL_SetWindowPosition(window, windowed.x, windowed.y)
        }
    }

    /// Whether a window manager can make the window fullscreen (``setFullscreen(_:)``).
    private lazy var hasWindowManager = liveplay_sdl_has_window_manager(window) != 0
    /// Where the window was before it covered the display itself.
    private var coveringBounds: SDL_Rect?

    /// The drawn window, as RGB.
    func readPixels() -> RGBPicture? {
        let size = self.size
        guard size.width > 0, size.height > 0 else { return nil }
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 3)
        let status = pixels.withUnsafeMutableBytes {
            SDL_RenderReadPixels(renderer, nil, SDL_PIXELFORMAT_RGB24.rawValue, $0.baseAddress, Int32(size.width * 3))
        }
        guard status == 0 else { return nil }
        return RGBPicture(width: size.width, height: size.height, pixels: pixels)
    }

    /// Where the picture goes, unrotated, so that SDL's rotation about its centre lands it as `mode` asks:
    /// fill-edge fits the rotated picture inside the view (bars left over, split evenly, the odd pixel to the
    /// right or bottom), fill-screen covers the view (the overflow is cropped by the window's edges). The rotated
    /// picture's edges fall on whole pixels, so a quarter turn is not resampled half a pixel off.
    static func destination(picture: PictureSize, view: PictureSize, mode: RenderMode, rotation: RenderRotation)
        -> SDL_FRect
    {
        let quarter = rotation == .rotation90 || rotation == .rotation270
        let turned = quarter ? PictureSize(width: picture.height, height: picture.width) : picture
        guard turned.width > 0, turned.height > 0 else { return SDL_FRect() }
        let horizontal = Double(view.width) / Double(turned.width)
        let vertical = Double(view.height) / Double(turned.height)
        let scale = mode == .fillEdge ? min(horizontal, vertical) : max(horizontal, vertical)
        let width = (Double(turned.width) * scale).rounded()
        let height = (Double(turned.height) * scale).rounded()
        let left = ((Double(view.width) - width) / 2).rounded(.down)
        let top = ((Double(view.height) - height) / 2).rounded(.down)
        let (unturnedWidth, unturnedHeight) = quarter ? (height, width) : (width, height)
        return SDL_FRect(
            x: Float(left + width / 2 - unturnedWidth / 2), y: Float(top + height / 2 - unturnedHeight / 2),
            w: Float(unturnedWidth), h: Float(unturnedHeight))
    }

    /// The figures at the top left, white on a dark box, a line a thirtieth of the window's height.
    private func drawOverlay() {
        let size = max(12, self.size.height / 30)
        let lines = overlay.map { text.measure($0, size: size) }
        let lineHeight = lines.map(\.height).max() ?? size
        let margin = size / 2
        let widest = lines.map(\.width).max() ?? 0
        let height = overlay.count * lineHeight + margin
        fillBox(x: margin, y: margin, width: widest + 2 * margin, height: height, alpha: 176)
        for (index, line) in overlay.enumerated() {
            text.draw(line, x: 2 * margin, y: margin + margin / 2 + index * lineHeight, size: size)
        }
    }

    /// The key list in a dark box in the middle, as large as the window allows (its lines at most a sixteenth of the
    /// window's height, its widest at most eight tenths of its width).
    private func drawHelp() {
        let view = self.size
        let lines = Self.help
        var size = max(10, view.height / 16)
        let widest = { lines.map { self.text.measure($0, size: size).width }.max() ?? 0 }
        if widest() > view.width * 8 / 10 { size = max(8, size * view.width * 8 / 10 / max(1, widest())) }
        let lineHeight = lines.map { text.measure($0, size: size).height }.max() ?? size
        let width = widest(), height = lines.count * lineHeight
        let left = (view.width - width) / 2, top = (view.height - height) / 2
        let margin = size / 2
        fillBox(x: left - margin, y: top - margin, width: width + 2 * margin, height: height + 2 * margin, alpha: 216)
        for (index, line) in lines.enumerated() { text.draw(line, x: left, y: top + index * lineHeight, size: size) }
    }

    /// A word in a dark box at the top, centred or at the right, its size following the window's height.
    private func drawBadge(_ word: String, right: Bool) {
        let view = self.size
        let word = word.uppercased()
        let size = max(12, view.height / 20)
        let (width, height) = text.measure(word, size: size)
        let margin = size / 3
        let left = right ? view.width - width - 2 * margin : (view.width - width) / 2
        fillBox(x: left - margin, y: margin, width: width + 2 * margin, height: height + margin, alpha: 204)
        text.draw(word, x: left, y: margin + margin / 2, size: size)
    }

    /// The caption centred near the bottom, white on black as 608 decoders draw it, its size following the window's
    /// height (a line is about a fifteenth of it, as a caption row is of the picture).
    private func drawCaption(_ caption: String) {
        let view = self.size
        let lines = caption.split(separator: "\n").map(String.init)
        guard !lines.isEmpty, view.height > 0 else { return }
        let size = max(12, view.height / 18)
        let padding = size / 6
        // Above the control bar while it shows.
        let bottom = view.height - (barDrawn ? bar.layout(in: view).bar.height : 0) - view.height / 12
        let lineHeight = lines.map { text.measure($0, size: size).height }.max() ?? size
        for (index, line) in lines.enumerated() {
            let width = text.measure(line, size: size).width
            let left = max(0, (view.width - width) / 2)
            let top = bottom - (lines.count - index) * lineHeight
            fillBox(x: left - padding, y: top, width: width + 2 * padding, height: lineHeight, alpha: 204)
            text.draw(line, x: left, y: top, size: size)
        }
    }

    /// A box of `gray` (or of `red`), `alpha` opaque, over what is drawn.
    func fillBox(x: Int, y: Int, width: Int, height: Int, alpha: UInt8, gray: UInt8 = 0, red: UInt8? = nil) {
        var box = SDL_Rect(x: Int32(x), y: Int32(y), w: Int32(width), h: Int32(height))
        SDL_SetRenderDrawBlendMode(renderer, alpha == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND)
        SDL_SetRenderDrawColor(renderer, red ?? gray, gray, gray, alpha)
        SDL_RenderFillRect(renderer, &box)
        SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_NONE)
    }

    private func clear() {
        SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255)
        SDL_RenderClear(renderer)
    }

    /// The frame's planes into the texture: YUV as decoded where SDL has the format, RGB otherwise.
    private func upload(_ frame: VideoFrame) -> Bool {
        let format: UInt32 =
            switch frame.pixelFormat {
            case "yuv420p", "yuvj420p": SDL_PIXELFORMAT_IYUV.rawValue
            case "nv12": SDL_PIXELFORMAT_NV12.rawValue
            default: SDL_PIXELFORMAT_RGB24.rawValue
            }
        guard let texture = texture(format: format, width: frame.width, height: frame.height) else { return false }
        if format == SDL_PIXELFORMAT_RGB24.rawValue {
            guard let picture = try? frame.rgbPicture() else { return false }
            return picture.pixels.withUnsafeBytes {
                SDL_UpdateTexture(texture, nil, $0.baseAddress, Int32(picture.width * 3)) == 0
            }
        }
        SDL_SetYUVConversionMode(
            frame.pixelFormat == "yuvj420p" ? SDL_YUV_CONVERSION_JPEG
                : frame.height > 576 ? SDL_YUV_CONVERSION_BT709 : SDL_YUV_CONVERSION_BT601)
        return frame.withPlanes { planes in
            func base(_ index: Int) -> UnsafePointer<UInt8>? {
                planes[index].bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
            }
            if format == SDL_PIXELFORMAT_NV12.rawValue, planes.count >= 2 {
                return SDL_UpdateNVTexture(
                    texture, nil, base(0), Int32(planes[0].stride), base(1), Int32(planes[1].stride)) == 0
            }
            guard planes.count >= 3 else { return false }
            return SDL_UpdateYUVTexture(
                texture, nil, base(0), Int32(planes[0].stride), base(1), Int32(planes[1].stride), base(2),
                Int32(planes[2].stride)) == 0
        }
    }

    /// Uploads the seek bar's thumbnail (nil: none).
    func setThumbnail(_ picture: RGBPicture?, seconds: Double?) {
        if let old = thumbnail { SDL_DestroyTexture(old.texture) }
        thumbnail = picture.flatMap(staticTexture)
        thumbnailSeconds = seconds
    }

    /// Audio-only with `card` (its poster uploaded when it is new), or pictures again (nil).
    func setAudioOnly(_ card: AudioOnlyCard?) {
        if card?.poster != audioOnly?.poster {
            if let old = poster { SDL_DestroyTexture(old.texture) }
            poster = card?.poster.flatMap(staticTexture)
        }
        audioOnly = card
    }

    /// A texture holding `picture`, or nil when SDL could not make one.
    private func staticTexture(_ picture: RGBPicture) -> (texture: OpaquePointer, width: Int, height: Int)? {
        guard picture.width > 0, picture.height > 0,
            let texture = SDL_CreateTexture(
                renderer, SDL_PIXELFORMAT_RGB24.rawValue, Int32(SDL_TEXTUREACCESS_STATIC.rawValue),
                Int32(picture.width), Int32(picture.height))
        else { return nil }
        let uploaded = picture.pixels.withUnsafeBytes {
            SDL_UpdateTexture(texture, nil, $0.baseAddress, Int32(picture.width * 3)) == 0
        }
        guard uploaded else {
            SDL_DestroyTexture(texture)
            return nil
        }
        return (texture, picture.width, picture.height)
    }

    private func texture(format: UInt32, width: Int, height: Int) -> OpaquePointer? {
        if let texture, let current = textureFormat, current == (format, width, height) { return texture }
        if let texture { SDL_DestroyTexture(texture) }
        texture = SDL_CreateTexture(
            renderer, format, Int32(SDL_TEXTUREACCESS_STREAMING.rawValue), Int32(width), Int32(height))
        textureFormat = texture == nil ? nil : (format, width, height)
        return texture
    }

    // MARK: events

    /// The player action a key (or closing the window) asks for.
    static func action(for event: SDL_Event) -> PlayerWindow.Action? {
        if event.type == SDL_QUIT.rawValue { return .quit }
        guard event.type == SDL_KEYDOWN.rawValue else { return nil }
        switch Int(event.key.keysym.sym) {
        case Int(SDLK_q.rawValue), Int(SDLK_ESCAPE.rawValue): return .quit
        case Int(SDLK_SPACE.rawValue): return .togglePause
        case Int(SDLK_m.rawValue): return .toggleMute
        case Int(SDLK_UP.rawValue): return .volume(delta: 10)
        case Int(SDLK_DOWN.rawValue): return .volume(delta: -10)
        case Int(SDLK_LEFT.rawValue): return .seekBy(seconds: -10)
        case Int(SDLK_RIGHT.rawValue): return .seekBy(seconds: 10)
        case Int(SDLK_1.rawValue): return .mode(.auto)
        case Int(SDLK_2.rawValue): return .mode(.speed)
        case Int(SDLK_3.rawValue): return .mode(.smooth)
        case Int(SDLK_l.rawValue): return .goLive
        case Int(SDLK_s.rawValue): return .snapshot
        case Int(SDLK_r.rawValue): return .rotate
        case Int(SDLK_i.rawValue): return .toggleOverlay
        case Int(SDLK_c.rawValue): return .toggleCaptions
        case Int(SDLK_n.rawValue): return .nextStream
        case Int(SDLK_p.rawValue): return .previousStream
        case Int(SDLK_v.rawValue): return .nextVideoTrack
        case Int(SDLK_a.rawValue): return .nextAudioTrack
        case Int(SDLK_b.rawValue): return .nextRendition
        default: return nil
        }
    }

    /// What the mouse did, in the window's pixels.
    enum Pointer {
        /// The left button went down; `clicks` counts those in a row (2: a double-click).
        case press(x: Int, y: Int, clicks: Int)
        /// The left button came up.
        case release
        case motion(x: Int, y: Int)
        /// The pointer left the window.
        case left
    }

    static func pointer(_ event: SDL_Event) -> Pointer? {
        switch event.type {
        case SDL_MOUSEBUTTONDOWN.rawValue where Int32(event.button.button) == SDL_BUTTON_LEFT:
            return .press(x: Int(event.button.x), y: Int(event.button.y), clicks: Int(event.button.clicks))
        case SDL_MOUSEBUTTONUP.rawValue where Int32(event.button.button) == SDL_BUTTON_LEFT:
            return .release
        // A motion that moved nothing says where the pointer is: SDL sends one when the window opens under it, which
        // is no reason to show the control bar.
        case SDL_MOUSEMOTION.rawValue where event.motion.xrel != 0 || event.motion.yrel != 0:
            return .motion(x: Int(event.motion.x), y: Int(event.motion.y))
        case SDL_WINDOWEVENT.rawValue where UInt32(event.window.event) == SDL_WINDOWEVENT_LEAVE.rawValue:
            return .left
        default:
            return nil
        }
    }

    func isOverlayKey(_ event: SDL_Event) -> Bool {
        event.type == SDL_KEYDOWN.rawValue && Int(event.key.keysym.sym) == Int(SDLK_i.rawValue)
    }

    /// `h`, `?` (shift and `/` on most layouts) or F1: the key list.
    func isHelpKey(_ event: SDL_Event) -> Bool {
        guard event.type == SDL_KEYDOWN.rawValue else { return false }
        let key = Int(event.key.keysym.sym)
        let shifted = UInt32(event.key.keysym.mod) & KMOD_SHIFT.rawValue != 0
        return key == Int(SDLK_h.rawValue) || key == Int(SDLK_F1.rawValue) || key == Int(SDLK_QUESTION.rawValue)
            || (key == Int(SDLK_SLASH.rawValue) && shifted)
    }

    func isCaptionsKey(_ event: SDL_Event) -> Bool {
        event.type == SDL_KEYDOWN.rawValue && Int(event.key.keysym.sym) == Int(SDLK_c.rawValue)
    }

    func isFullscreenKey(_ event: SDL_Event) -> Bool {
        event.type == SDL_KEYDOWN.rawValue && Int(event.key.keysym.sym) == Int(SDLK_f.rawValue)
    }

    func needsRedraw(_ event: SDL_Event) -> Bool {
        guard event.type == SDL_WINDOWEVENT.rawValue else { return false }
        let kind = UInt32(event.window.event)
        return kind == SDL_WINDOWEVENT_EXPOSED.rawValue || kind == SDL_WINDOWEVENT_SIZE_CHANGED.rawValue
    }
}
