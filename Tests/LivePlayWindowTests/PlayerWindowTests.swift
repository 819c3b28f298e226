import Foundation
import LivePlay
import LivePlayTesting
import LivePlayWindow
import Testing

/// The window under a virtual X display (Xvfb): what it draws, read back from SDL's renderer, against ffmpeg's
/// decode of the same frame turned and fitted the same way by ffmpeg's own filters (with accurate chroma
/// interpolation: SDL's renderer interpolates chroma as a GPU does).
@Suite(.serialized) struct PlayerWindowTests {
    /// A virtual display with `DISPLAY` pointing at it, or nil where Xvfb is missing (a failure under CI).
    static func display() throws -> XvfbDisplay? {
        if let reason = XvfbDisplay.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("Xvfb is required under CI: \(reason)") }
            return nil
        }
        let display = try XvfbDisplay()
        setenv("DISPLAY", display.name, 1)
        return display
    }

    /// A window open for `body`, closed however `body` ends (before the display it is on stops).
    static func withWindow<Result>(
        _ options: PlayerWindow.Options, onAction: @escaping @Sendable (PlayerWindow.Action) -> Void = { _ in },
        _ body: (PlayerWindow) async throws -> Result
    ) async throws -> Result {
        let window = try await PlayerWindow(options: options, onAction: onAction)
        return try await withCleanup { try await body(window) } cleanup: { await window.close() }
    }

    /// ffmpeg's picture of frame `index` of `path`, rotated and fitted into `size` as `mode` asks.
    static func ffmpegPicture(
        _ path: String, index: Int, mode: RenderMode, rotation: RenderRotation, size: PictureSize
    ) throws -> RGBPicture {
        let turn = [.rotation90: "transpose=clock,", .rotation180: "hflip,vflip,", .rotation270: "transpose=cclock,"][rotation] ?? ""
        let (w, h) = (size.width, size.height)
        let flags = "flags=bilinear+accurate_rnd+full_chroma_int+full_chroma_inp"
        let fit = mode == .fillEdge
            ? "scale=\(w):\(h):force_original_aspect_ratio=decrease:\(flags),pad=\(w):\(h):(ow-iw)/2:(oh-ih)/2"
            : "scale=\(w):\(h):force_original_aspect_ratio=increase:\(flags),crop=\(w):\(h)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(ExternalTool.find("ffmpeg")))
        process.arguments = [
            "-v", "error", "-i", path, "-vf", "select=eq(n\\,\(index)),\(turn)\(fit),format=rgb24", "-frames:v", "1", "-f", "rawvideo",
            "-pix_fmt", "rgb24", "-",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(data.count == w * h * 3)
        return RGBPicture(width: w, height: h, pixels: [UInt8](data))
    }

    static func frames() throws -> [VideoFrame] {
        let reader = try MediaReader(path: try Fixture.h264AAC.path(), options: .init(decodes: true))
        var frames: [VideoFrame] = []
        while let event = try reader.next() {
            if case .videoFrame(let frame) = event { frames.append(frame) }
        }
        return frames
    }

    /// Peak signal-to-noise ratio of two RGB pictures of the same size, dB.
    static func psnr(_ a: RGBPicture, _ b: RGBPicture) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var squares = 0.0
        for (x, y) in zip(a.pixels, b.pixels) {
            let difference = Double(x) - Double(y)
            squares += difference * difference
        }
        let mean = squares / Double(a.pixels.count)
        return mean == 0 ? 99 : 10 * log10(255 * 255 / mean)
    }

    static let cases: [(RenderMode, RenderRotation)] = [
        (.fillEdge, .rotation0), (.fillScreen, .rotation0), (.fillEdge, .rotation90), (.fillEdge, .rotation180),
        (.fillEdge, .rotation270), (.fillScreen, .rotation90),
    ]

    @Test(arguments: cases) func theWindowShowsWhatFFmpegDecodes(_ mode: RenderMode, _ rotation: RenderRotation)
        async throws
    {
        guard let display = try Self.display() else { return }
        defer { display.stop() }
        let frame = try #require(try Self.frames().dropFirst(10).first)
        let size = PictureSize(width: 480, height: 300)
        try await Self.withWindow(.init(title: "liveplay window test", size: size)) { window in
            window.present(
                frame,
                timing: FrameTiming(pts: frame.pts, position: frame.pts, rate: 1, droppedBefore: 0, renderMode: mode, rotation: rotation))
            let shown = try #require(await window.readBack())
            // 480×300: every case scales the 320×240 picture (at exactly 1:1 ffmpeg's reference would take its fast
            // unscaled path, which interpolates no chroma).
            #expect(shown.width == 480 && shown.height == 300)
            let expected = try Self.ffmpegPicture(
                try Fixture.h264AAC.path(), index: 10, mode: mode, rotation: rotation,
                size: PictureSize(width: shown.width, height: shown.height))
            let psnr = Self.psnr(shown, expected)
            if ProcessInfo.processInfo.environment["LIVEPLAY_DUMP"] != nil {
                try Data(try PNGEncoder().encode(shown)).write(to: URL(fileURLWithPath: "/tmp/shown-\(mode)-\(rotation.rawValue).png"))
                try Data(try PNGEncoder().encode(expected)).write(to: URL(fileURLWithPath: "/tmp/expected-\(mode)-\(rotation.rawValue).png"))
            }
            print("window (\(window.rendererName)) \(mode) \(rotation.rawValue)°: PSNR \(String(format: "%.1f", psnr)) dB against ffmpeg's decode")
            #expect(psnr >= 35, "\(mode) \(rotation)")
            // The geometry: fill-edge leaves black bars where the rotated picture does not reach (320×240 fits
            // 480×300 as 400×300 with 40 px each side; a quarter turn as 225×300 with 127); fill-screen covers
            // everything.
            let column = { (x: Int) in (0..<shown.height).map { shown.pixels[($0 * shown.width + x) * 3] } }
            let barWidth = mode == .fillScreen ? 0 : (rotation == .rotation90 || rotation == .rotation270 ? 127 : 40)
            if barWidth > 0 {
                #expect(column(barWidth / 2).allSatisfy { $0 < 16 }, "a black bar at the left")
                #expect(column(shown.width - barWidth / 2).allSatisfy { $0 < 16 }, "a black bar at the right")
            }
            #expect(column(barWidth + 4).contains { $0 > 64 }, "the picture right after the bar")
        }
    }

    @Test func keysReachTheFrontEnd() async throws {
        guard let display = try Self.display() else { return }
        defer { display.stop() }
        let pressed = Locked<[PlayerWindow.Action]>([])
        let record: @Sendable (PlayerWindow.Action) -> Void = { pressed.set(pressed.get() + [$0]) }
        try await Self.withWindow(.init(title: "liveplay keys test"), onAction: record) { _ in
            for key in ["space", "m", "Up", "Down", "1", "2", "3", "l", "s", "r", "i", "q"] {
                try display.press(key, inWindowNamed: "liveplay keys test")
            }
            _ = await eventually { pressed.get().count >= 12 }
            #expect(
                pressed.get() == [
                    .togglePause, .toggleMute, .volume(delta: 10), .volume(delta: -10), .mode(.auto), .mode(.speed),
                    .mode(.smooth), .goLive, .snapshot, .rotate, .toggleOverlay, .quit,
                ])
        }
    }

    /// `f` fills the screen and `f` again gives the window back: on a desktop through its window manager (jwm here,
    /// EWMH's fullscreen state), and on a bare X server (a kiosk, a monitor wall) by covering the display itself.
    @Test(arguments: [false, true]) func fTogglesFullscreen(withWindowManager: Bool) async throws {
        guard let display = try Self.display() else { return }
        defer { display.stop() }
        if withWindowManager {
            if let reason = XvfbDisplay.windowManagerUnavailableReason {
                if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("required under CI: \(reason)") }
                return
            }
            try display.startWindowManager()
        }
        let title = "liveplay fullscreen test"
        try await Self.withWindow(.init(title: title, size: PictureSize(width: 480, height: 300))) { window in
            func waitForSize(_ width: Int, _ height: Int) async throws -> (width: Int, height: Int) {
                var now = (width: 0, height: 0)
                _ = try await eventually {
                    let geometry = try display.geometry(ofWindowNamed: title)
                    now = (geometry.width, geometry.height)
                    return now == (width, height)
                }
                return now
            }
            #expect(try await waitForSize(480, 300) == (480, 300), "the window opens at its size")
            try display.press("f", inWindowNamed: title)
            #expect(try await waitForSize(1280, 720) == (1280, 720), "f: the whole 1280×720 screen")
            let drawn = try #require(await window.readBack())
            #expect((drawn.width, drawn.height) == (1280, 720), "and the picture is drawn at that size")
            try display.press("f", inWindowNamed: title)
            #expect(try await waitForSize(480, 300) == (480, 300), "f again: the window as it was")
        }
    }

    @Test func iShowsTheFiguresOverThePicture() async throws {
        guard let display = try Self.display() else { return }
        defer { display.stop() }
        let frame = try #require(try Self.frames().dropFirst(10).first)
        let size = PictureSize(width: 480, height: 300)
        let pressed = Locked<[PlayerWindow.Action]>([])
        let record: @Sendable (PlayerWindow.Action) -> Void = { pressed.set(pressed.get() + [$0]) }
        try await Self.withWindow(.init(title: "liveplay overlay test", size: size), onAction: record) { window in
            window.setOverlay(["LATENCY 1.00 S"])
            window.present(frame, timing: FrameTiming(pts: frame.pts, position: frame.pts, rate: 1, droppedBefore: 0))
            let without = try #require(await window.readBack())
            try display.press("i", inWindowNamed: "liveplay overlay test")
            // The window thread reports the key, then turns the overlay on and redraws, then answers read-backs: one
            // asked for once the key is reported sees the overlay.
            #expect(await eventually { pressed.get().contains(.toggleOverlay) }, "i reached the window")
            let with = try #require(await window.readBack())
            // A 300-pixel window: the line is 12 pixels to the em, in a dark box from (6, 6), its text from (12, 9).
            let pixel = { (picture: RGBPicture, x: Int, y: Int) in
                Array(picture.pixels[(y * picture.width + x) * 3..<(y * picture.width + x) * 3 + 3])
            }
            /// White pixels where the line's words go: the text.
            let white = { (picture: RGBPicture) in
                (9..<26).reduce(0) { count, y in
                    count + (12..<130).filter { x in pixel(picture, x, y).allSatisfy { $0 > 240 } }.count
                }
            }
            print("white pixels in the overlay's line: \(white(without)) before i, \(white(with)) after")
            #expect(white(with) > 30 && white(with) > white(without) + 25, "the words in white (measured: 71)")
            #expect(pixel(with, 8, 8).allSatisfy { $0 < 100 }, "the box behind the text is dark")
        }
    }

    @Test func withoutADisplayTheWindowSaysSoAtOnce() throws {
        let reason = try #require(PlayerWindow.displayUnavailableReason(environment: [:]))
        #expect(reason.contains("DISPLAY") && reason.contains("WAYLAND_DISPLAY") && reason.contains("--video-out"))
        #expect(PlayerWindow.displayUnavailableReason(environment: ["WAYLAND_DISPLAY": "wayland-0"]) == nil)
    }
}
