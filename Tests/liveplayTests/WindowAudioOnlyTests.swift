import Foundation
import LivePlay
@testable import LivePlayWindow
import LivePlayTesting
import Testing

/// `liveplay --window` on a stream without video (issue 49, point 5): the poster in place of pictures (`--poster`, or
/// a playlist item's own), else a card with the title and a level meter of what is heard; the control bar in its
/// audio-only layout, shown without a pointer move and without picture controls. Read back from the X server.
extension WindowCommandTests {
    /// A 320×180 poster: a blue field (32, 96, 192) with a white square in its middle.
    static func makePoster(in directory: String) throws -> String {
        let path = directory + "/poster.png"
        try ExternalTool.check(
            "ffmpeg",
            ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
             "color=c=0x2060C0:size=320x180,drawbox=x=140:y=70:w=40:h=40:color=white:t=fill", "-frames:v", "1",
             path])
        return path
    }

    /// Where a 320×180 poster lands: fitted, centred, above the bar.
    static func posterFrame(in window: PictureSize) -> BarRectangle {
        let area = (width: window.width, height: window.height - ControlBar.height(forWindowHeight: window.height))
        let scale = min(Double(area.width) / 320, Double(area.height) / 180)
        let (width, height) = (Int(320 * scale), Int(180 * scale))
        return BarRectangle(x: (area.width - width) / 2, y: (area.height - height) / 2, width: width, height: height)
    }

    static func close(_ red: UInt8, _ green: UInt8, _ blue: UInt8, to colour: (Int, Int, Int)) -> Bool {
        abs(Int(red) - colour.0) <= 24 && abs(Int(green) - colour.1) <= 24 && abs(Int(blue) - colour.2) <= 24
    }

    @Test func anAudioOnlyFileShowsThePosterAndTheAudioOnlyBar() async throws {
        guard Self.hasDisplay else { return }
        let directory = NSTemporaryDirectory() + "liveplay-poster-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let poster = try Self.makePoster(in: directory)
        let run = try WindowRun(["--poster", poster, "--duration", "60"], source: try Fixture.longAudioOnly.path())
        #expect(await run.playing())
        let geometry = try run.display.geometry(ofWindowNamed: run.title)
        let frame = Self.posterFrame(in: PictureSize(width: geometry.width, height: geometry.height))
        var shot = try run.screenshotRGB()
        _ = try await eventually(within: .seconds(3)) {
            shot = try run.screenshotRGB()
            let field = shot.pixel(frame.x + frame.width / 4, frame.y + frame.height / 2)
            return Self.close(field.0, field.1, field.2, to: (32, 96, 192))
        }
        let field = shot.pixel(frame.x + frame.width / 4, frame.y + frame.height / 2)
        let square = shot.pixel(frame.x + frame.width / 2, frame.y + frame.height / 2)
        let beside = frame.x > 4 ? shot.pixel(frame.x / 2, frame.y + frame.height / 2) : (0, 0, 0)
        print("poster \(frame): field \(field), square \(square), beside \(beside)")
        #expect(Self.close(field.0, field.1, field.2, to: (32, 96, 192)), "the poster's blue: \(field)")
        #expect(Self.close(square.0, square.1, square.2, to: (255, 255, 255)), "its white square, centred: \(square)")
        #expect(Self.close(beside.0, beside.1, beside.2, to: (0, 0, 0)), "fitted, the rest black: \(beside)")

        // The bar shows with no pointer move (audio-only, it does not hide), and its controls are where the audio-only
        // layout puts them: the volume slider's middle is where the picture layout has its captions and fullscreen.
        let band = Self.barBand(try run.screenshot())
        #expect(band.dark > 0.85, "the bar is shown without a move: \(band)")
        let timeline = PlayerWindow.Timeline.onDemand(position: 0, duration: 30)
        let full = await run.level(after: .zero)
        try run.clickBar(.volume, timeline: timeline, fraction: 0.5, audioOnly: true)
        let half = await run.level()
        try run.clickBar(.mute, timeline: timeline, audioOnly: true)
        let muted = await run.level()
        print("device levels (RMS): \(full), the slider's middle \(half), muted \(muted)")
        #expect(abs(half / full - 0.5) < 0.06, "the audio-only slider's middle is volume 50: \(half / full)")
        #expect(muted >= 0 && muted < 1e-5, "its mute button mutes: \(muted)")
        #expect(try run.display.geometry(ofWindowNamed: run.title).width == geometry.width, "no fullscreen was hit")
        try run.press("q")
        run.process.waitUntilExit()
        #expect(run.process.terminationStatus == 0)
    }

    /// A playlist's audio-only items: the first has no poster (the card: its title by OCR, the meter lit by the
    /// tone and dark once muted), the second its own (`#EXTIMG`), shown when `n` moves to it.
    @Test func aPlaylistsAudioOnlyItemsShowTheCardAndTheirOwnPoster() async throws {
        guard Self.hasDisplay, Self.hasOCR else { return }
        let directory = NSTemporaryDirectory() + "liveplay-card-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try Self.makePoster(in: directory)
        let audio = try Fixture.longAudioOnly.path()
        let playlist = directory + "/radio.m3u"
        try "#EXTM3U\n#EXTINF:-1,RADIO ONE\n\(audio)\n#EXTIMG:poster.png\n#EXTINF:-1,RADIO TWO\n\(audio)\n"
            .write(toFile: playlist, atomically: true, encoding: .utf8)
        let run = try WindowRun([], source: playlist)
        #expect(await run.playing())
        let geometry = try run.display.geometry(ofWindowNamed: run.title)
        let view = PictureSize(width: geometry.width, height: geometry.height)
        let area = PictureSize(width: view.width, height: view.height - ControlBar.height(forWindowHeight: view.height))
        let meter = WindowRenderer.meterFrame(in: area)
        /// The lit share of the meter's middle row.
        func lit() throws -> Double {
            let shot = try run.screenshotRGB()
            let row = meter.y + meter.height / 2
            let bright = (meter.x..<(meter.x + meter.width)).filter { shot.pixel($0, row).0 > 160 }.count
            return Double(bright) / Double(meter.width)
        }
        var playing = 0.0
        _ = try await eventually(within: .seconds(3)) {
            playing = try lit()
            return playing > 0.7
        }
        // A −6 dBFS tone on a −60…0 dB meter: nine tenths lit.
        #expect(playing > 0.8 && playing < 0.98, "the meter follows the tone: \(playing)")
        var title = ""
        _ = try await eventually(within: .seconds(3)) {
            title = try run.ocr(x: 0, y: area.height / 5, width: view.width, height: area.height / 4, singleLine: true)
            return title.contains("RADIO ONE")
        }
        #expect(title.contains("RADIO ONE"), "the card's title is the item's: \(title)")
        try run.press("m")
        var quiet = playing
        _ = try await eventually(within: .seconds(6)) {
            quiet = try lit()
            return quiet < 0.02
        }
        #expect(quiet < 0.02, "muted, the meter falls to nothing: \(quiet)")
        try run.press("m")

        try run.press("n")
        #expect(await run.waitFor("LIVEPLAY_EVT_PLAYLIST_ITEM", count: 2, seconds: 10), "the second item: 9023")
        let frame = Self.posterFrame(in: view)
        var field = (UInt8(0), UInt8(0), UInt8(0))
        _ = try await eventually(within: .seconds(5)) {
            field = try run.screenshotRGB().pixel(frame.x + frame.width / 4, frame.y + frame.height / 2)
            return Self.close(field.0, field.1, field.2, to: (32, 96, 192))
        }
        #expect(Self.close(field.0, field.1, field.2, to: (32, 96, 192)), "the item's own poster (#EXTIMG): \(field)")
        try run.press("q")
        run.process.waitUntilExit()
        #expect(run.process.terminationStatus == 0)
    }
}

extension WindowCommandTests {
    /// A poster that cannot be shown is a sentence and an exit status before anything plays (74 would be an output):
    /// not a picture 65, not there 66; `--poster` without a window is a usage error.
    @Test func aPosterThatCannotBeShownIsRefusedWithASentence() async throws {
        guard Self.hasDisplay else { return }
        let text = NSTemporaryDirectory() + "liveplay-poster-\(UUID().uuidString).png"
        try "not a picture".write(toFile: text, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: text) }
        for (poster, status, says) in [
            (text, Int32(65), "cannot be shown: the image is not a PNG or a JPEG file"),
            ("/nonexistent/poster.png", 66, "/nonexistent/poster.png cannot be read"),
        ] {
            let run = try WindowRun(["--poster", poster], keepsStandardError: true)
            run.process.waitUntilExit()
            #expect(run.process.terminationStatus == status, "\(poster)")
            #expect(run.log.get().contains("liveplay: --poster: "), "\(run.log.get())")
            #expect(run.log.get().contains(says), "\(run.log.get())")
            #expect(!run.log.get().contains("PLAY_EVT_PLAY_BEGIN"))
        }
        let alone = try Binary.run(["demo", "--poster", text])
        #expect(alone.status == 64 && alone.standardError.contains("--poster is shown in the window: add --window"))
    }
}

extension WindowCommandTests.WindowRun {
    /// The window's picture as RGB.
    func screenshotRGB() throws -> RGBShot {
        let shot = try grab(pixelFormat: "rgb24")
        return RGBShot(width: shot.width, height: shot.height, bytes: shot.bytes)
    }
}

struct RGBShot {
    var width: Int, height: Int, bytes: [UInt8]

    func pixel(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) {
        let at = (min(max(0, y), height - 1) * width + min(max(0, x), width - 1)) * 3
        guard at + 2 < bytes.count else { return (0, 0, 0) }
        return (bytes[at], bytes[at + 1], bytes[at + 2])
    }
}
