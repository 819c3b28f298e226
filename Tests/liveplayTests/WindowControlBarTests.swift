import Foundation
import LivePlay
import LivePlayLab
@testable import LivePlayWindow
import LivePlayTesting
import Testing

/// The control bar of `liveplay --window` under Xvfb, driven with xdotool's pointer: it shows on a move and hides
/// 3 s later, and each control clicked where the bar's layout puts it does its control. Its words are read back from
/// screenshots by OCR (Debian's tesseract-ocr).
extension WindowCommandTests {
    static var hasOCR: Bool {
        guard ExternalTool.find("tesseract") == nil else { return true }
        if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("tesseract is required under CI") }
        return false
    }

    /// The mean gray of the bar's band (the bottom of the window, the bar's height), and its share of dark pixels.
    static func barBand(_ shot: (width: Int, height: Int, gray: [UInt8])) -> (mean: Double, dark: Double) {
        let bar = ControlBar.height(forWindowHeight: shot.height)
        var sum = 0, dark = 0, count = 0
        for row in (shot.height - bar + 2)..<(shot.height - 2) {
            for column in 0..<shot.width {
                let value = Int(shot.gray[row * shot.width + column])
                sum += value
                if value <= 70 { dark += 1 }
                count += 1
            }
        }
        return (Double(sum) / Double(count), Double(dark) / Double(count))
    }

    @Test func theControlBarShowsOnAMoveAndHidesThreeSecondsLater() async throws {
        guard Self.hasDisplay else { return }
        let run = try WindowRun(["--duration", "60"])
        #expect(await run.playing())
        let before = Self.barBand(try run.screenshot())
        try run.move(toX: 300, y: 200)
        let moved = ContinuousClock.now
        var shown = before
        _ = try await eventually(within: .seconds(2)) {
            shown = Self.barBand(try run.screenshot())
            return shown.dark > 0.85
        }
        var hidden = shown
        _ = try await eventually(within: .seconds(8)) {
            hidden = Self.barBand(try run.screenshot())
            return hidden.dark < before.dark + 0.1
        }
        let hiddenAfter = ContinuousClock.now - moved
        print("bar band (mean, dark share): \(before) before, \(shown) after a move, \(hidden) \(hiddenAfter) later")
        #expect(shown.dark > 0.85 && before.dark < 0.6, "the dark bar over the picture: \(before) → \(shown)")
        #expect(hidden.dark < before.dark + 0.1, "gone again: \(hidden)")
        // 3 s after the move, give or take the screenshots' time (x11grab takes 0.2–0.5 s a shot here).
        #expect(hiddenAfter > .milliseconds(2_800) && hiddenAfter < .milliseconds(5_000), "\(hiddenAfter)")
        try run.press("q")
        run.process.waitUntilExit()
    }

    /// The live layout (the demo is a live stream): play / pause, mute, the volume slider and fullscreen, each
    /// clicked at its place.
    @Test func theLiveBarsControlsDoTheirControl() async throws {
        guard Self.hasDisplay else { return }
        let run = try WindowRun(["--duration", "60"])
        #expect(await run.playing())
        try run.clickBar(.playPause, timeline: .live)
        #expect(await run.waitFor("LIVEPLAY_EVT_PAUSED", seconds: 5), "play / pause pauses: 9007")
        try run.clickBar(.playPause, timeline: .live)
        #expect(await run.waitFor("LIVEPLAY_EVT_RESUMED", seconds: 5), "and resumes: 9008")

        let full = await run.level(after: .zero)
        try run.clickBar(.mute, timeline: .live)
        let muted = await run.level()
        try run.clickBar(.mute, timeline: .live)
        try run.clickBar(.volume, timeline: .live, fraction: 0.5)
        let half = await run.level()
        print("device levels (RMS): \(full), muted \(muted), volume slider at half \(half)")
        #expect(muted >= 0 && muted < 1e-5, "mute silences the device: \(muted)")
        #expect(abs(half / full - 0.5) < 0.06, "the slider's middle: volume 50: \(half / full)")
        // No click on the bar became a pause: only the play / pause button's.
        #expect(run.log.get().components(separatedBy: "LIVEPLAY_EVT_PAUSED").count == 2)

        try run.clickBar(.fullscreen, timeline: .live)
        var fullscreen = try run.display.geometry(ofWindowNamed: run.title)
        _ = try await eventually {
            fullscreen = try run.display.geometry(ofWindowNamed: run.title)
            return (fullscreen.width, fullscreen.height) == (1280, 720)
        }
        #expect((fullscreen.width, fullscreen.height) == (1280, 720), "fullscreen fills the screen: \(fullscreen)")
        try run.press("q")
        run.process.waitUntilExit()
        #expect(run.process.terminationStatus == 0)
    }

    /// The on-demand layout (a 20 s file with a 1 s GOP): the time reads `0:0S / 0:20` (by OCR), a click at three
    /// quarters of the seek bar seeks to 15 s, play / pause pauses and resumes.
    @Test func theOnDemandBarShowsTheTimeSeeksAndPauses() async throws {
        guard Self.hasDisplay, Self.hasOCR else { return }
        let run = try WindowRun([], source: try Fixture.flashBeep.path())
        #expect(await run.playing())
        let timeline = PlayerWindow.Timeline.onDemand(position: 0, duration: 20)
        try run.move(toX: 300, y: 200)
        let time = try run.bar(.time, timeline: timeline)
        var read = ""
        // Until the bar the move showed is drawn (the window's next frame): its time has a slash.
        _ = try await eventually(within: .seconds(3)) {
            read = try run.ocr(x: time.x, y: time.y, width: time.width, height: time.height, singleLine: true)
            return read.contains(" / ")
        }
        print("the bar's time, by OCR: \(read)")
        let parts = read.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " / ")
        #expect(parts.count == 2 && parts.last == "0:20", "the duration: \(read)")
        let seconds = parts.first.flatMap { $0.count == 4 && $0.hasPrefix("0:") ? Int($0.dropFirst(2)) : nil }
        #expect(seconds.map { (1...10).contains($0) } == true, "the position, a few seconds in: \(read)")

        let position = try await run.clickSeekBarAtThreeQuarters(timeline: timeline)
        #expect(position >= 13_500 && position <= 18_000, "a click at three quarters seeks to 15 s: \(position) ms")
        try run.clickBar(.playPause, timeline: timeline)
        #expect(await run.waitFor("LIVEPLAY_EVT_PAUSED", seconds: 5), "play / pause pauses a file too: 9007")
        try run.clickBar(.playPause, timeline: timeline)
        #expect(await run.waitFor("LIVEPLAY_EVT_RESUMED", seconds: 5), "and resumes it: 9008")
        try run.press("q")
        run.process.waitUntilExit()
    }

    /// A seek while paused plays from its target and says so (9008 after 9009), and the play / pause button follows:
    /// the next space pauses again (9007), where it used to resume what was playing already (issue 45, point 6).
    @Test func aSeekWhilePausedResumesAndTheButtonFollows() async throws {
        guard Self.hasDisplay else { return }
        let run = try WindowRun([], source: try Fixture.flashBeep.path())
        #expect(await run.playing())
        try run.press("space")
        #expect(await run.waitFor("LIVEPLAY_EVT_PAUSED", seconds: 5))
        try run.press("Right")
        #expect(await run.waitFor("LIVEPLAY_EVT_SEEK_START", seconds: 5))
        #expect(await run.waitFor("LIVEPLAY_EVT_RESUMED", seconds: 5), "the seek resumed: 9008")
        #expect(run.log.get().contains(#""by":"seek""#), "told as the seek's")
        try run.press("space")
        #expect(await run.waitFor("LIVEPLAY_EVT_PAUSED", count: 2, seconds: 5), "space pauses again: the button is ⏸")
        try run.press("q")
        run.process.waitUntilExit()
    }

    /// The compact layout on the screen: the window resized to 480×360 (xdotool, as a viewer's window manager would)
    /// leaves one row's seek bar under four bar heights, so the bar takes two rows: the top row's time reads
    /// `0:0S / 0:20` by OCR, its seek bar seeks, and play / pause on the row below pauses.
    @Test func aNarrowWindowsBarTakesTwoRowsAndItsControlsWork() async throws {
        guard Self.hasDisplay, Self.hasOCR else { return }
        let run = try WindowRun([], source: try Fixture.flashBeep.path())
        #expect(await run.playing())
        let window = try run.display.windowID(named: run.title)
        _ = try run.display.xdotool(["windowsize", window, "480", "360"])
        _ = try await eventually(within: .seconds(5)) {
            let geometry = try run.display.geometry(ofWindowNamed: run.title)
            return geometry.width == 480 && geometry.height == 360
        }
        let timeline = PlayerWindow.Timeline.onDemand(position: 0, duration: 20)
        let (time, seekBar, playPause) = (
            try run.bar(.time, timeline: timeline), try run.bar(.seekBar, timeline: timeline),
            try run.bar(.playPause, timeline: timeline)
        )
        #expect(time.y == seekBar.y && playPause.y > seekBar.y, "two rows: \(time), \(seekBar), \(playPause)")
        // The pointer was left outside by the shrink. Its jump in is a motion with no relative move, which the window
        // cannot tell from the window moving under a still pointer (and ignores); the next move shows the bar. The X
        // server delivers the two in order: no wait between them.
        try run.move(toX: 200, y: 100)
        try run.move(toX: 220, y: 110)
        var read = ""
        _ = try await eventually(within: .seconds(2)) {
            read = try run.ocr(x: time.x, y: time.y, width: time.width, height: time.height, singleLine: true)
            return read.contains("/")
        }
        print("the compact bar's time, by OCR: \(read)")
        let parts = read.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " / ")
        #expect(parts.count == 2 && parts.last == "0:20", "the duration on the top row: \(read)")

        let position = try await run.clickSeekBarAtThreeQuarters(timeline: timeline)
        #expect(position >= 13_500 && position <= 18_000, "the top row's seek bar seeks to 15 s: \(position) ms")
        try run.clickBar(.playPause, timeline: timeline)
        #expect(await run.waitFor("LIVEPLAY_EVT_PAUSED", seconds: 5), "play / pause on the lower row pauses: 9007")
        try run.press("q")
        run.process.waitUntilExit()
    }

    /// A pointer resting on the on-demand seek bar shows the keyframe there above it. The file's pictures are black
    /// but for a white flash at the start of each second, and x264 put a keyframe on each flash (23 ms into the
    /// second) and on the black after it (123 ms): resting where the time is 15.05 s or so shows a white box over
    /// the black picture, with `0:15` along its foot (OCR); off the bar it is gone.
    @Test func aPointerOnTheSeekBarShowsTheKeyframeThere() async throws {
        guard Self.hasDisplay, Self.hasOCR else { return }
        let run = try WindowRun([], source: try Fixture.flashBeep.path())
        #expect(await run.playing())
        let timeline = PlayerWindow.Timeline.onDemand(position: 0, duration: 20)
        let seekBar = try run.bar(.seekBar, timeline: timeline)
        var layout = ControlBar()
        layout.timeline = timeline
        // The first pixel from three quarters on where the time is between the flash's keyframe and the next.
        let x = try #require(
            (seekBar.x + (seekBar.width - 1) * 3 / 4..<seekBar.x + seekBar.width).first { x in
                let seconds = layout.seekSeconds(at: Double(x - seekBar.x) / Double(seekBar.width - 1)) ?? 0
                return seconds >= 15.045 && seconds <= 15.1
            })
        /// The mean gray where the thumbnail goes (above its time strip, around the pointer) and at the picture's
        /// left edge, the same rows: white over black, or black beside black (a flash whitens both).
        func thumbnailAndBeside() throws -> (thumbnail: Double, beside: Double) {
            let shot = try run.screenshot()
            func mean(_ columns: Range<Int>) -> Double {
                let rows = (seekBar.y - 110)..<(seekBar.y - 45)
                let sum = rows.reduce(0) { total, row in
                    columns.reduce(total) { $0 + Int(shot.gray[row * shot.width + $1]) }
                }
                return Double(sum) / Double(rows.count * columns.count)
            }
            return (mean((x - 50)..<(x + 50)), mean(40..<140))
        }
        try run.move(toX: x, y: seekBar.y + seekBar.height / 2)
        var shown = (thumbnail: 0.0, beside: 0.0)
        _ = try await eventually(within: .seconds(2)) {
            shown = try thumbnailAndBeside()
            return shown.thumbnail > 180 && shown.beside < 80
        }
        let strip = ControlBar.height(forWindowHeight: try run.display.geometry(ofWindowNamed: run.title).height)
        let textSize = max(10, strip * 2 / 5)
        let time = try run.ocr(
            x: x - 60, y: seekBar.y - strip / 4 - 2 - textSize * 3 / 2, width: 120, height: textSize * 3 / 2,
            singleLine: true, binarized: true)
        try run.move(toX: x, y: 200)
        var gone = shown
        _ = try await eventually(within: .seconds(2)) {
            gone = try thumbnailAndBeside()
            return gone.thumbnail < 80 && gone.beside < 80
        }
        print("thumbnail region (mean gray, beside): \(shown) on the bar, \(gone) off it; its time by OCR: \(time)")
        #expect(shown.thumbnail > 180 && shown.beside < 80, "a white keyframe over the black picture: \(shown)")
        #expect(time.trimmingCharacters(in: .whitespacesAndNewlines) == "0:15", "the time under the pointer: \(time)")
        #expect(gone.thumbnail < 80, "gone off the bar: \(gone)")
        try run.press("q")
        run.process.waitUntilExit()
    }

    /// CC on the on-demand bar (a file with a caption and no duration in its metadata) hides the caption.
    @Test func theCaptionsButtonHidesTheCaptions() async throws {
        guard Self.hasDisplay else { return }
        let path = try CaptionFixture.make(seconds: 12, pictureCaptions: [("HELLO WORLD", 5, 295)])
        let run = try WindowRun(["--captions", "cc1"], source: path)
        #expect(await run.playing())
        /// The share of white where a caption goes above the bar (centred, in the bottom fifth).
        func captionWhite() throws -> Double {
            let shot = try run.screenshot()
            let rows = (shot.height * 70 / 100)..<(shot.height * 90 / 100)
            let (left, right) = (shot.width * 35 / 100, shot.width * 65 / 100)
            let pixels: [UInt8] = rows.flatMap { (row: Int) -> ArraySlice<UInt8> in
                let start = row * shot.width
                return shot.gray[(start + left)..<(start + right)]
            }
            return Double(pixels.filter { $0 >= 240 }.count) / Double(max(1, pixels.count))
        }
        let shown = try captionWhite()
        // Its metadata gives no duration: the time is the position alone (`0:03`).
        try run.clickBar(.captions, timeline: .onDemand(position: 0, duration: 0))
        var hidden = shown
        _ = try await eventually {
            hidden = try captionWhite()
            return hidden < shown / 4
        }
        print("caption white: \(shown) shown, \(hidden) after CC")
        #expect(shown > 0.02 && hidden < shown / 4, "CC hides the caption: \(shown) → \(hidden)")
        try run.press("q")
        run.process.waitUntilExit()
    }

    /// A LAS manifest's renditions in the window (the lab's two, on one clock): `b` goes from adaptation to the lowest
    /// rendition, the bar's rendition button to the next one up, and once more to adaptation; each switch is 2015 with
    /// `reason` `manual`.
    @Test func theRenditionKeyAndButtonStepThroughAManifestsRenditions() async throws {
        guard Self.hasDisplay else { return }
        let server = LiveFLVServer(
            renditions: [
                ("high", try LiveFLVProgram(contentsOfFile: try Fixture.renditionHigh.path())),
                ("low", try LiveFLVProgram(contentsOfFile: try Fixture.renditionLow.path())),
            ],
            configuration: .init(port: 0, threads: 1))
        let port = try await server.start()
        let manifest = NSTemporaryDirectory() + "liveplay-window-\(UUID().uuidString).json"
        try Data(#"""
            {"version": "1.0.0", "adaptationSet": [{"representation": [
             {"id": 1, "url": "http://127.0.0.1:\#(port)/low.flv", "maxBitrate": 250, "height": 120},
             {"id": 2, "url": "http://127.0.0.1:\#(port)/high.flv", "maxBitrate": 700, "height": 240,
              "defaultSelected": true}]}]}
            """#.utf8).write(to: URL(fileURLWithPath: manifest))
        defer {
            try? FileManager.default.removeItem(atPath: manifest)
            Task { await server.stop() }
        }
        let run = try WindowRun(["--duration", "60"], source: manifest)
        #expect(await run.playing())
        let switched = #""symbol":"PLAY_EVT_STREAM_SWITCH_SUCC""#
        try run.press("b")
        #expect(await run.waitFor(switched, seconds: 10), "b: to the lowest rendition")
        // The button's right edge is the same whatever its label (the bar's flexible gap is left of it).
        try run.clickBar(.rendition, timeline: .live, fraction: 0.9, rendition: "120P")
        #expect(await run.waitFor(switched, count: 2, seconds: 10), "the button: the next one up")
        try run.press("q")
        run.process.waitUntilExit()
        let switches = run.log.get().split(separator: "\n").filter { $0.contains(switched) }
        #expect(switches.count == 2, "\(switches)")
        #expect(switches.first?.contains(#""to":1"#) == true && switches.last?.contains(#""to":2"#) == true, "\(switches)")
        #expect(switches.allSatisfy { $0.contains(#""reason":"manual""#) }, "\(switches)")
    }

    /// The key list read back by OCR: its words, as they are written.
    @Test func theKeyListReadsBackByOCR() async throws {
        guard Self.hasDisplay, Self.hasOCR else { return }
        let run = try WindowRun(["--duration", "60"])
        #expect(await run.playing())
        try run.press("h")
        let window = try run.display.geometry(ofWindowNamed: run.title)
        var read = ""
        // Until the list the key showed is drawn: its last line is there.
        _ = try await eventually(within: .seconds(5)) {
            read = try run.ocr(x: window.width / 10, y: window.height / 10, width: window.width * 8 / 10,
                               height: window.height * 8 / 10, singleLine: false)
            return read.lowercased().contains("quit")
        }
        print("the key list, by OCR:\n\(read)")
        for words in [
            "pause / resume", "fullscreen", "mute", "volume", "back / on 10", "auto / speed / smooth", "live edge", "snapshot",
            "rotate", "figures", "captions", "next / previous stream", "next video / audio track", "next rendition",
            "this list", "quit",
            "control bar",
        ] {
            // Spaces and case as tesseract reads them: "auto/ speed", "thislist", "Snapshot".
            let squeezed = { (text: String) in text.lowercased().filter { !$0.isWhitespace } }
            #expect(squeezed(read).contains(squeezed(words)), "\(words) in the key list")
        }
        try run.press("q")
        run.process.waitUntilExit()
    }

    /// `position_ms` of a JSON status line.
    static func positionMilliseconds(_ line: String) -> Int? {
        guard line.contains("\"kind\":\"status\""), let range = line.range(of: "\"position_ms\":") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }
}

extension WindowCommandTests {
    /// The progress events (2005) of a run's log so far, their parameters.
    static func progress(_ log: String) -> [[String: Any]] {
        log.split(separator: "\n").filter { $0.contains("\"code\":2005") }.compactMap { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["params"] as? [String: Any]
        }
    }

    /// `--timeshift`: left pressed twice quickly goes 20 s back, the second seek from where the first goes (9009 /
    /// 9010; the progress says 20 s behind, off the live edge) and the bar's badge then reads GO LIVE (by OCR); a click on it returns to the live edge (9003), where the badge reads LIVE;
    /// resting on the seek bar shows a keyframe from the time-shift ring, with its time.
    @Test func theTimeShiftBarGoesBackWithLeftAndLiveWithItsBadgeAndPreviewsTheRing() async throws {
        guard Self.hasDisplay, Self.hasOCR else { return }
        let run = try WindowRun(["--duration", "90", "--timeshift", "60s"])
        #expect(await run.playing())
        // 25 s recorded, so 20 s back is inside the window.
        #expect(await eventually(within: .seconds(40)) {
            (Self.progress(run.log.get()).last?["EVT_PLAY_DURATION"] as? Double ?? 0) >= 25
        })
        try run.press("Left", "Left")
        #expect(await run.waitFor("LIVEPLAY_EVT_SEEK_DONE", seconds: 10), "left seeks: 9010")
        var behind: [String: Any] = [:]
        #expect(await eventually(within: .seconds(10)) {
            behind = Self.progress(run.log.get()).last ?? [:]
            return behind["live_edge"] as? Bool == false
        })
        let behindMilliseconds = behind["behind_live_ms"] as? Int ?? 0
        #expect((18_500...23_000).contains(behindMilliseconds), "20 s back, and the 1 s the mode kept: \(behind)")
        let timeline = PlayerWindow.Timeline.timeShift(position: 5, start: 0, end: 20, atLiveEdge: false)
        try run.move(toX: 300, y: 200)
        let badge = try run.bar(.goLive, timeline: timeline)
        var read = ""
        // Until the bar the move showed is drawn (the window's next frame) and reads as it should.
        _ = try await eventually(within: .seconds(3)) {
            read = try run.ocr(
                x: badge.x, y: badge.y, width: badge.width, height: badge.height, singleLine: true, binarized: true)
            return read.trimmingCharacters(in: .whitespacesAndNewlines) == "GO LIVE"
        }
        #expect(read.trimmingCharacters(in: .whitespacesAndNewlines) == "GO LIVE", "the badge behind: \(read)")
        // Behind the edge, the bar says how far (`-0:20`; the 18.5–23 s measured above, read when the bar was drawn).
        let label = try run.bar(.time, timeline: timeline)
        let readTime = try run.ocr(
            x: label.x, y: label.y, width: label.width, height: label.height, singleLine: true, binarized: true)
        #expect(
            readTime.trimmingCharacters(in: .whitespacesAndNewlines).wholeMatch(of: /[-–—]0:(1[89]|2[0-4])/) != nil,
            "how far behind the live edge: \(readTime)")

        try run.clickBar(.goLive, timeline: timeline)
        #expect(await run.waitFor("LIVEPLAY_EVT_CATCH_UP_SKIP", seconds: 5), "GO LIVE goes live: 9003")
        #expect(await eventually(within: .seconds(10)) {
            Self.progress(run.log.get()).last?["live_edge"] as? Bool == true
        })
        let live = PlayerWindow.Timeline.timeShift(position: 19, start: 0, end: 20, atLiveEdge: true)
        try run.move(toX: 320, y: 220)
        let edge = try run.bar(.liveBadge, timeline: live)
        var readLive = ""
        _ = try await eventually(within: .seconds(3)) {
            readLive = try run.ocr(
                x: edge.x, y: edge.y, width: edge.width, height: edge.height, singleLine: true, binarized: true)
            return readLive.trimmingCharacters(in: .whitespacesAndNewlines) == "LIVE"
        }
        #expect(readLive.trimmingCharacters(in: .whitespacesAndNewlines) == "LIVE", "the badge at the edge: \(readLive)")

        // A thumbnail from the ring over the seek bar, a quarter of the way in: the strip under it reads the time
        // there, seconds from the window's start (the window is 30-odd seconds long by now).
        let seekBar = try run.bar(.seekBar, timeline: live)
        let x = seekBar.x + seekBar.width / 4
        try run.move(toX: x, y: seekBar.y + seekBar.height / 2)
        let strip = ControlBar.height(forWindowHeight: try run.display.geometry(ofWindowNamed: run.title).height)
        let textSize = max(10, strip * 2 / 5)
        var time = ""
        _ = try await eventually(within: .seconds(3)) {
            time = try run.ocr(
                x: x - 60, y: seekBar.y - strip / 4 - 2 - textSize * 3 / 2, width: 120, height: textSize * 3 / 2,
                singleLine: true, binarized: true
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            return time.wholeMatch(of: /0:0[3-9]|0:1[0-9]/) != nil
        }
        #expect(time.wholeMatch(of: /0:0[3-9]|0:1[0-9]/) != nil, "a thumbnail from the ring, with its time: \(time)")
        try run.press("q")
        run.process.waitUntilExit()
        #expect(run.process.terminationStatus == 0)
    }
}

extension WindowCommandTests.WindowRun {
    /// Moves the pointer to (`x`, `y`) in the window.
    func move(toX x: Int, y: Int) throws {
        let window = try display.geometry(ofWindowNamed: title)
        try display.xdotool(["mousemove", String(window.x + x), String(window.y + y)])
    }

    /// Where `control` is in the window's bar, as the window lays it out for `timeline`.
    func bar(
        _ control: ControlBar.Control, timeline: PlayerWindow.Timeline, rendition: String? = nil, audioOnly: Bool = false
    ) throws -> BarRectangle {
        let window = try display.geometry(ofWindowNamed: title)
        var bar = ControlBar()
        bar.timeline = timeline
        bar.rendition = rendition
        bar.audioOnly = audioOnly
        let frame = bar.layout(in: PictureSize(width: window.width, height: window.height)).controls
            .first { $0.control == control }?.frame
        return try #require(frame, "\(control) in the \(timeline) layout")
    }

    /// Shows the bar (a move) and clicks `control` at `fraction` of its width (a slider's place; its middle else).
    func clickBar(
        _ control: ControlBar.Control, timeline: PlayerWindow.Timeline, fraction: Double = 0.5, rendition: String? = nil,
        audioOnly: Bool = false
    ) throws {
        let frame = try bar(control, timeline: timeline, rendition: rendition, audioOnly: audioOnly)
        try move(toX: frame.x + 2, y: frame.y - 20)
        // A person's pointer: it rests near the bar before it clicks (a move and a click in one X event are not what
        // the bar is made for), as xdotool's own scripts pause between steps.
        Thread.sleep(forTimeInterval: 0.2)
        try move(toX: frame.x + Int(Double(frame.width - 1) * fraction), y: frame.y + frame.height / 2)
        try display.xdotool(["click", "1"])
        // Past the double-click time: two controls clicked in a row are not one double-click.
        Thread.sleep(forTimeInterval: 0.4)
    }

    /// Clicks three quarters along the seek bar and returns the position the progress lines then reach (ms), 13.5 s
    /// or more within the usual wait (a 20 s file: 15 s).
    func clickSeekBarAtThreeQuarters(timeline: PlayerWindow.Timeline) async throws -> Int {
        let seekLine = log.get().components(separatedBy: "\n").count
        try clickBar(.seekBar, timeline: timeline, fraction: 0.75)
        var position = 0
        _ = await eventually {
            let lines = log.get().components(separatedBy: "\n").dropFirst(seekLine)
            position = lines.compactMap(WindowCommandTests.positionMilliseconds).last ?? 0
            return position >= 13_500
        }
        return position
    }

    /// The text tesseract reads in a part of the window: grabbed by x11grab, white-on-dark turned dark-on-white and
    /// scaled three times (tesseract reads dark glyphs of 20–40 pixels best); `binarized`, also cut to black and white
    /// (a badge's box, gray once turned, reads as strokes otherwise).
    func ocr(x: Int, y: Int, width: Int, height: Int, singleLine: Bool, binarized: Bool = false) throws -> String {
        let window = try display.geometry(ofWindowNamed: title)
        let image = directory + "/ocr-\(UUID().uuidString).png"
        try ExternalTool.check(
            "ffmpeg",
            ["-v", "error", "-nostdin", "-y", "-f", "x11grab", "-video_size", "\(width)x\(height)",
             "-i", "\(display.name)+\(window.x + x),\(window.y + y)", "-frames:v", "1",
             "-vf", "format=gray,negate,scale=iw*3:ih*3:flags=lanczos" + (binarized ? ",lutyuv=y='if(gt(val,128),255,0)'" : ""),
             image])
        return try ExternalTool.check("tesseract", [image, "stdout", "--psm", singleLine ? "7" : "6"]).text
    }
}
