internal import CLazyLibraries
internal import CSDL2
import Foundation

/// The window's words (badges, key list, captions, figures, the control bar's time), drawn in a TrueType font by
/// SDL2_ttf at a size that follows the window, white with smooth edges. Each text at each size is rendered once into
/// a texture and drawn from it while it stays on screen: a redraw costs a copy per text, not a rasterisation. Without
/// SDL2_ttf or a font file the built-in 5×7 ``BitmapFont`` draws them (upper-case), and ``fallbackReason`` says why.
/// Used on the window thread only.
final class WindowText {
    private let renderer: OpaquePointer
    /// The font file drawn with, or nil for the built-in font.
    let fontPath: String?
    /// Why the words are in the built-in font, or nil when they are not.
    let fallbackReason: String?
    /// The font opened at each pixel size asked for (a window's size asks for a few).
    private var fonts: [Int: OpaquePointer] = [:]
    private var textures: [Key: Texture] = [:]
    /// Counts redraws, so a texture not drawn in the last one is freed (an old time, a caption gone).
    private var generation = 0

    private struct Key: Hashable {
        var text: String
        var size: Int
    }

    private struct Texture {
        var texture: OpaquePointer
        var width: Int
        var height: Int
        var drawn: Int
    }

    /// Fonts tried first, by path: Debian's `fonts-dejavu-core` (which the package depends on) is found without
    /// starting a process; `fc-match` finds a sans-serif font elsewhere.
    static let knownFonts = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
    ]

    init(renderer: OpaquePointer) {
        self.renderer = renderer
        var error = [CChar](repeating: 0, count: 512)
        if liveplay_lazy_load(LIVEPLAY_LAZY_SDL2_TTF, &error, error.count) != 0 {
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            (fontPath, fallbackReason) = (nil, "\(reason) (Debian: apt-get install libsdl2-ttf-2.0-0)")
        } else if TTF_Init() != 0 {
            (fontPath, fallbackReason) = (nil, "SDL2_ttf: \(String(cString: SDL_GetError()))")
        } else if let path = Self.findFont() {
            // Opened once here, so a file that is there but is no font falls back now rather than draw nothing.
            if let font = TTF_OpenFont(path, 12) {
                TTF_CloseFont(font)
                (fontPath, fallbackReason) = (path, nil)
            } else {
                TTF_Quit()
                (fontPath, fallbackReason) = (nil, "\(path): \(String(cString: SDL_GetError()))")
            }
        } else {
            TTF_Quit()
            (fontPath, fallbackReason) = (nil, "no TrueType font found (Debian: apt-get install fonts-dejavu-core)")
        }
    }

    /// The first of ``knownFonts`` there, else what fontconfig matches for `sans-serif` (a `.ttf` or `.otf`).
    static func findFont() -> String? {
        if let known = knownFonts.first(where: { FileManager.default.isReadableFile(atPath: $0) }) { return known }
        let paths = ["/usr/bin/fc-match", "/usr/local/bin/fc-match"]
        guard let tool = paths.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-f", "%{file}", "sans-serif"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let path = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let usable = path.hasSuffix(".ttf") || path.hasSuffix(".otf")
        return process.terminationStatus == 0 && usable && FileManager.default.isReadableFile(atPath: path) ? path : nil
    }

    func close() {
        for texture in textures.values { SDL_DestroyTexture(texture.texture) }
        textures = [:]
        for font in fonts.values { TTF_CloseFont(font) }
        fonts = [:]
        if fontPath != nil { TTF_Quit() }
    }

    /// The width and height `text` takes at `size` pixels to the em.
    func measure(_ text: String, size: Int) -> (width: Int, height: Int) {
        guard fontPath != nil else {
            let scale = Self.bitmapScale(size)
            return (text.count * BitmapFont.advance * scale, (BitmapFont.height + 3) * scale)
        }
        guard let texture = texture(text, size: size) else { return (0, 0) }
        return (texture.width, texture.height)
    }

    /// Draws `text` in white with its top-left corner at (`x`, `y`), `size` pixels to the em.
    func draw(_ text: String, x: Int, y: Int, size: Int) {
        guard fontPath != nil else {
            let scale = Self.bitmapScale(size)
            SDL_SetRenderDrawColor(renderer, 255, 255, 255, 255)
            let dots = BitmapFont.dots(text, x: x, y: y + scale, scale: scale)
            dots.withUnsafeBufferPointer { _ = SDL_RenderFillRects(renderer, $0.baseAddress, Int32($0.count)) }
            return
        }
        guard let entry = texture(text, size: size) else { return }
        textures[Key(text: text, size: size)]?.drawn = generation
        var destination = SDL_Rect(x: Int32(x), y: Int32(y), w: Int32(entry.width), h: Int32(entry.height))
        SDL_RenderCopy(renderer, entry.texture, nil, &destination)
    }

    /// Ends a redraw: the textures of texts it did not draw are freed.
    func endFrame() {
        for (key, texture) in textures where texture.drawn < generation {
            SDL_DestroyTexture(texture.texture)
            textures[key] = nil
        }
        generation += 1
    }

    /// The bitmap font's dot size for an em of `size` pixels (its 7 dots are a capital's height, about 3/4 em),
    /// rounded: the control bar's small words stay readable at two-pixel dots.
    private static func bitmapScale(_ size: Int) -> Int {
        max(1, (size * 3 / 4 + BitmapFont.height / 2) / BitmapFont.height)
    }

    private func texture(_ text: String, size: Int) -> Texture? {
        let key = Key(text: text, size: size)
        if let texture = textures[key] { return texture }
        guard !text.isEmpty, let font = font(size: size) else { return nil }
        guard let surface = TTF_RenderUTF8_Blended(font, text, SDL_Color(r: 255, g: 255, b: 255, a: 255)) else {
            return nil
        }
        defer { SDL_FreeSurface(surface) }
        guard let texture = SDL_CreateTextureFromSurface(renderer, surface) else { return nil }
        let entry = Texture(
            texture: texture, width: Int(surface.pointee.w), height: Int(surface.pointee.h), drawn: generation)
        textures[key] = entry
        return entry
    }

    private func font(size: Int) -> OpaquePointer? {
        if let font = fonts[size] { return font }
        guard let path = fontPath, let font = TTF_OpenFont(path, Int32(size)) else { return nil }
        fonts[size] = font
        return font
    }
}
