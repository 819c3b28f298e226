import Foundation
import LivePlayLab
import LivePlayTesting
import Testing

/// `liveplay --window`: headless, it fails at once and says why; under a virtual display (Xvfb) it plays the demo in
/// a window, with its sound on SDL's disk driver, and the keys act on the player.
@Suite(.serialized) struct WindowCommandTests {
    /// Starts `process` and collects its stdout as it comes (stderr is dropped, or collected with it).
    static func start(
        _ process: Process, keepsStandardError: Bool = false, spawn: (Process) throws -> Void = { try $0.run() }
    ) throws -> Locked<String> {
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = keepsStandardError ? stdout : FileHandle.nullDevice
        try spawn(process)
        let log = Locked("")
        Thread {
            let handle = stdout.fileHandleForReading
            while case let chunk = handle.availableData, !chunk.isEmpty {
                log.set(log.get() + String(decoding: chunk, as: UTF8.self))
            }
        }.start()
        return log
    }

    @Test func withoutADisplayItFailsAtOnceNamingTheAlternatives() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = ["demo", "--window", "--json"]
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        process.environment = environment
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        let started = Date()
        try process.run()
        let message = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 69)
        #expect(Date().timeIntervalSince(started) < 5, "at once, before any connection")
        #expect(message.contains("DISPLAY") && message.contains("WAYLAND_DISPLAY") && message.contains("--video-out"))
    }

    /// `liveplay demo --window` under Xvfb with its sound on the disk driver, in a temporary working directory.
    final class WindowRun {
        let display: XvfbDisplay
        let process = Process()
        let sound = NSTemporaryDirectory() + "liveplay-window-sound-\(UUID().uuidString).raw"
        let directory = NSTemporaryDirectory() + "liveplay-window-\(UUID().uuidString)"
        let started = Date()
        let log: Locked<String>
        let title = "liveplay"

        /// - Parameters:
        ///   - source: what to play: the built-in demo, or a URL.
        ///   - environment: more of the process's environment (a session bus's address).
        ///   - keepsStandardError: stderr's lines go to ``log`` too.
        init(
            _ arguments: [String], source: String = "demo", environment: [String: String] = [:],
            keepsStandardError: Bool = false
        ) throws {
            display = try XvfbDisplay()
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            process.executableURL = URL(fileURLWithPath: Binary.path)
            process.arguments = [source, "--window", "--json"] + arguments
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.environment = ProcessInfo.processInfo.environment.merging([
                "DISPLAY": display.name, "SDL_AUDIODRIVER": "disk", "SDL_DISKAUDIOFILE": sound,
            ].merging(environment) { $1 }) { $1 }
            log = try WindowCommandTests.start(process, keepsStandardError: keepsStandardError)
        }

        deinit {
            if process.isRunning { process.terminate() }
            display.stop()
            try? FileManager.default.removeItem(atPath: sound)
            try? FileManager.default.removeItem(atPath: directory)
        }

        func waitFor(_ text: String, count: Int = 1, seconds: Int64 = 15) async -> Bool {
            await eventually(within: .seconds(seconds)) { log.get().components(separatedBy: text).count > count }
        }

        func press(_ keys: String...) throws { try display.press(keys, inWindowNamed: title) }

        /// The device's output file so far, as samples (the disk driver writes it at the device's pace).
        var heard: [Float] {
            ((try? Data(contentsOf: URL(fileURLWithPath: sound))) ?? Data()).withUnsafeBytes {
                Array($0.bindMemory(to: Float.self))
            }
        }

        /// How many samples the device has played so far (its output file's size: no need to read it).
        var heardCount: Int {
            let attributes = try? FileManager.default.attributesOfItem(atPath: sound)
            return ((attributes?[.size] as? NSNumber)?.intValue ?? 0) / MemoryLayout<Float>.size
        }

        /// The RMS of the half second of sound the device plays after `settle` more (the change and the 120 ms the
        /// player keeps queued ahead are through by then), counted in the device's samples (44.1 kHz mono), so a
        /// loaded machine does not shorten either stretch.
        func level(after settle: Duration = .milliseconds(600)) async -> Double {
            let samplesPerSecond = 44_100.0
            let settled = heardCount + Int(samplesPerSecond * (settle / .seconds(1)))
            _ = await eventually { heardCount >= settled }
            let from = heardCount
            _ = await eventually { heardCount >= from + Int(samplesPerSecond / 2) }
            let played = heard.dropFirst(from).prefix(Int(samplesPerSecond / 2))
            return played.isEmpty ? -1 : sqrt(played.reduce(0.0) { $0 + Double($1 * $1) } / Double(played.count))
        }

        /// The window's picture as 8-bit gray, grabbed from the X server by ffmpeg's x11grab.
        func screenshot() throws -> (width: Int, height: Int, gray: [UInt8]) {
            let shot = try grab(pixelFormat: "gray")
            return (shot.width, shot.height, shot.bytes)
        }

        /// The window's picture in `pixelFormat` (`gray`, `rgb24`), grabbed by x11grab.
        func grab(pixelFormat: String) throws -> (width: Int, height: Int, bytes: [UInt8]) {
            let window = try display.geometry(ofWindowNamed: title)
            let output = try ExternalTool.check(
                "ffmpeg",
                ["-v", "error", "-nostdin", "-f", "x11grab", "-video_size", "\(window.width)x\(window.height)",
                 "-i", "\(display.name)+\(window.x),\(window.y)", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt",
                 pixelFormat, "-"])
            return (window.width, window.height, [UInt8](output.standardOutput))
        }

        /// Waits for the first picture and two net-status lines (two seconds of playing).
        func playing() async -> Bool {
            guard await waitFor("PLAY_EVT_PLAY_BEGIN") else { return false }
            return await waitFor("\"kind\":\"status\"", count: 2)
        }
    }

    static var hasDisplay: Bool {
        guard let reason = XvfbDisplay.unavailableReason else { return true }
        if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("Xvfb is required under CI: \(reason)") }
        return false
    }

    @Test func keysPauseChangeTheModeAndQuit() async throws {
        guard Self.hasDisplay else { return }
        let run = try WindowRun(["--duration", "30"])
        #expect(await run.playing())
        // The title as window managers read it: UTF-8 in _NET_WM_NAME, the dash and all.
        let title = try run.display.property("_NET_WM_NAME", ofWindowNamed: run.title)
        #expect(title.hasPrefix("_NET_WM_NAME(UTF8_STRING) = \"liveplay — http://127.0.0.1:"), "\(title)")
        try run.press("space")
        #expect(await run.waitFor("LIVEPLAY_EVT_PAUSED"), "space pauses: 9007")
        try run.press("space")
        #expect(await run.waitFor("LIVEPLAY_EVT_RESUMED"))
        try run.press("2")
        #expect(await run.waitFor("LIVEPLAY_EVT_LATENCY_CHANGED"), "2 switches to speed: 9004")
        try run.press("q")
        run.process.waitUntilExit()
        #expect(run.process.terminationReason == .exit && run.process.terminationStatus == 0)
        #expect(Date().timeIntervalSince(run.started) < 25, "q quit before --duration")
        #expect(await run.waitFor("LIVEPLAY_EVT_SESSION_SUMMARY"), "the usual summary")
        // The demo's sound is 44.1 kHz mono, 32-bit float at the device: 176 400 bytes a second. Over the 1.5 s or
        // more of playing before the keys (begin at about 0.5 s, the second status at 2 s), the device took at
        // least a second of it (measured: 1.2 s).
        #expect(run.heard.count * 4 >= 176_400, "sound reached the device: \(run.heard.count * 4) bytes")
    }

    /// The rest of the keys, through the CLI: `s` writes a PNG of the picture, `m` silences the device and brings
    /// the sound back, down lowers it by 10 a press, `l` drops smooth's 5 s cache to the newest keyframe (9003),
    /// `r` turns the picture a quarter (pillarboxed in the landscape window), `f` fills the screen.
    @Test func keysSnapshotMuteVolumeGoLiveRotateAndFullscreen() async throws {
        guard Self.hasDisplay else { return }
        let run = try WindowRun(["--duration", "60", "--mode", "smooth"])
        #expect(await run.playing())

        try run.press("s")
        var snapshot: Data?
        _ = try await eventually {
            let names = try FileManager.default.contentsOfDirectory(atPath: run.directory)
            snapshot = names.first { $0.hasPrefix("liveplay-snapshot-") && $0.hasSuffix(".png") }
                .flatMap { FileManager.default.contents(atPath: run.directory + "/" + $0) }
            return snapshot != nil
        }
        let png = try #require(snapshot, "s writes liveplay-snapshot-N.png in the working directory")
        #expect(await run.waitFor("\"kind\":\"snapshot\""), "the log says where it was written")
        #expect(run.log.get().contains("\"path\":\"\(run.directory)/liveplay-snapshot-"), "\(run.log.get().suffix(400))")
        // PNG signature, then IHDR's width and height: the demo's 640×360.
        #expect(png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        #expect(png.count > 24 && png[16..<24] == Data([0, 0, 2, 0x80, 0, 0, 1, 0x68]), "640×360")

        let full = await run.level(after: .zero)
        try run.press("m")
        let muted = await run.level()
        try run.press("m")
        let unmuted = await run.level()
        try run.press("Down")
        try run.press("Down")
        let lowered = await run.level()
        print("device levels (RMS): \(full), muted \(muted), unmuted \(unmuted), two presses down \(lowered)")
        #expect(full > 0.02, "the demo's tone is heard: \(full)")
        #expect(muted >= 0 && muted < 1e-5, "m silences the device: \(muted)")
        #expect(abs(unmuted / full - 1) < 0.05, "m again brings it back: \(unmuted / full)")
        #expect(abs(lowered / full - 0.8) < 0.05, "two presses down: volume 80: \(lowered / full)")

        // Smooth holds 5 s: by now more than a GOP is buffered ahead.
        #expect(await run.waitFor("\"kind\":\"status\"", count: 6))
        try run.press("l")
        #expect(await run.waitFor("LIVEPLAY_EVT_CATCH_UP_SKIP", seconds: 5), "l goes to the live edge: 9003")

        func meanOfLeftFifth(_ shot: (width: Int, height: Int, gray: [UInt8])) -> Double {
            var sum = 0
            var count = 0
            for row in 0..<shot.height {
                for column in 0..<(shot.width / 5) {
                    sum += Int(shot.gray[row * shot.width + column])
                    count += 1
                }
            }
            return Double(sum) / Double(max(1, count))
        }
        let before = try run.screenshot()
        try run.press("r")
        // Until the turned picture is drawn: its pillarbox is what the last expectation below looks for.
        var after = before
        _ = try await eventually {
            after = try run.screenshot()
            return meanOfLeftFifth(after) < 2
        }
        print("left fifth of the window: \(meanOfLeftFifth(before)) before r, \(meanOfLeftFifth(after)) after")
        #expect(meanOfLeftFifth(before) > 20, "the landscape picture fills the landscape window")
        #expect(meanOfLeftFifth(after) < 2, "turned a quarter, the picture is pillarboxed: black at the sides")

        let windowed = try run.display.geometry(ofWindowNamed: run.title)
        try run.press("f")
        var fullscreen = windowed
        _ = try await eventually {
            fullscreen = try run.display.geometry(ofWindowNamed: run.title)
            return (fullscreen.width, fullscreen.height) == (1280, 720)
        }
        #expect((windowed.width, windowed.height) != (1280, 720), "\(windowed)")
        #expect(
            (fullscreen.width, fullscreen.height) == (1280, 720),
            "f fills the 1280×720 screen, with no window manager too: \(fullscreen)")

        try run.press("Escape")
        run.process.waitUntilExit()
        #expect(run.process.terminationReason == .exit && run.process.terminationStatus == 0, "Escape quits")
    }

    /// Samples/WindowPlayer: the smallest window front end on the public API plays, says what happened, and `q`
    /// ends it.
    /// `v` and `a` step a multitrack stream (Enhanced RTMP v2, live from the lab server) to its next video and audio
    /// tracks: 9016 says so, and the picture becomes the other rendition's size.
    @Test func keysStepThroughTheTracksOfAMultitrackStream() async throws {
        guard Self.hasDisplay else { return }
        let renditions = try EnhancedFixture.renditions(seconds: 6)
        let server = try LiveFLVServer(path: renditions.path, configuration: .init(port: 0, threads: 1))
        let port = try await server.start()
        let run = try WindowRun(["--duration", "30"], source: "http://127.0.0.1:\(port)/live.flv")
        #expect(await run.playing())
        try run.press("v")
        #expect(await run.waitFor("video 1 vp9 256x144 (playing)"), "v: the second video track")
        #expect(await run.waitFor("\"message\":\"256x144\""), "the picture is the VP9 rendition's")
        try run.press("a")
        #expect(await run.waitFor("audio 1 opus 2ch 48000Hz (playing)"), "a: the second audio track")
        try run.press("v")
        #expect(await run.waitFor("\"message\":\"320x240\"", count: 2), "v again: back to the first")
        try run.press("q")
        run.process.waitUntilExit()
        await server.stop()
        #expect(run.process.terminationStatus == 0)
        #expect(!run.log.get().contains("\"code\":2103"), "no reconnect")
    }

    /// Paused and muted are shown on the picture (top centre, top right), not only in the title: white words on a
    /// dark box that come with space and m and go with them again.
    @Test func pausedAndMutedAreShownOnThePicture() async throws {
        guard Self.hasDisplay else { return }
        let run = try WindowRun(["--duration", "60"])
        #expect(await run.playing())
        /// The share of white in the top eighth of the window, between two fractions of its width.
        func white(_ from: Int, _ to: Int) throws -> Double {
            let shot = try run.screenshot()
            var white = 0, count = 0
            for row in 0..<(shot.height / 8) {
                for column in (shot.width * from / 100)..<(shot.width * to / 100) {
                    if shot.gray[row * shot.width + column] >= 240 { white += 1 }
                    count += 1
                }
            }
            return Double(white) / Double(count)
        }
        let centre = { try white(40, 60) }, right = { try white(85, 100) }
        let before = (try centre(), try right())
        try run.press("space")
        #expect(await run.waitFor("LIVEPLAY_EVT_PAUSED"))
        var paused = 0.0
        _ = try await eventually { paused = try centre(); return paused > before.0 + 0.02 }
        try run.press("m")
        var muted = 0.0
        _ = try await eventually { muted = try right(); return muted > before.1 + 0.02 }
        try run.press("space")
        #expect(await run.waitFor("LIVEPLAY_EVT_RESUMED"))
        var resumed = paused
        _ = try await eventually { resumed = try centre(); return resumed < before.0 + 0.01 }
        try run.press("m")
        var unmuted = muted
        _ = try await eventually { unmuted = try right(); return unmuted < before.1 + 0.01 }
        print("white on the picture: top centre \(before.0) → paused \(paused) → \(resumed); top right \(before.1) → muted \(muted) → \(unmuted)")
        #expect(paused > before.0 + 0.02, "PAUSED on the picture")
        #expect(muted > before.1 + 0.02, "MUTED on the picture")
        #expect(resumed < before.0 + 0.01 && unmuted < before.1 + 0.01, "both gone again")
    }

    /// The mouse: a click on the picture pauses (9007) and another resumes (9008); a double-click fills the screen
    /// and leaves playback as it was (no pause between its two clicks).
    @Test func aClickPausesAndADoubleClickFillsTheScreen() async throws {
        guard Self.hasDisplay else { return }
        let run = try WindowRun(["--duration", "60"])
        #expect(await run.playing())
        try run.display.click(inWindowNamed: run.title)
        #expect(await run.waitFor("LIVEPLAY_EVT_PAUSED", seconds: 5), "a click pauses")
        try run.display.click(inWindowNamed: run.title)
        #expect(await run.waitFor("LIVEPLAY_EVT_RESUMED", seconds: 5), "another resumes")
        let windowed = try run.display.geometry(ofWindowNamed: run.title)
        try run.display.click(2, inWindowNamed: run.title)
        var fullscreen = windowed
        _ = try await eventually {
            fullscreen = try run.display.geometry(ofWindowNamed: run.title)
            return (fullscreen.width, fullscreen.height) == (1280, 720)
        }
        #expect((fullscreen.width, fullscreen.height) == (1280, 720), "a double-click fills the screen: \(fullscreen)")
        // Past the time a single click waits for a second one, and a status line more: no pause came of it.
        let statuses = run.log.get().components(separatedBy: "\"kind\":\"status\"").count
        #expect(await run.waitFor("\"kind\":\"status\"", count: statuses))
        #expect(run.log.get().components(separatedBy: "LIVEPLAY_EVT_PAUSED").count == 2, "one pause: the first click's")
        try run.press("q")
        run.process.waitUntilExit()
        #expect(run.process.terminationStatus == 0)
    }

    /// `h`, `?` and F1 show and hide the key list over the middle of the picture.
    @Test func helpKeysShowAndHideTheKeyList() async throws {
        guard Self.hasDisplay else { return }
        let run = try WindowRun(["--duration", "60"])
        #expect(await run.playing())
        /// The share of white in the middle of the window (the demo's picture has little there).
        func white() throws -> Double {
            let shot = try run.screenshot()
            var white = 0, count = 0
            for row in (shot.height * 3 / 10)..<(shot.height * 7 / 10) {
                for column in (shot.width * 2 / 10)..<(shot.width * 8 / 10) {
                    if shot.gray[row * shot.width + column] >= 240 { white += 1 }
                    count += 1
                }
            }
            return Double(white) / Double(count)
        }
        let before = try white()
        var seen: [Double] = []
        for (key, shows) in [("h", true), ("question", false), ("F1", true), ("h", false)] {
            try run.press(key)
            var now = 0.0
            _ = try await eventually {
                now = try white()
                return shows ? now > before + 0.05 : now < before + 0.01
            }
            seen.append(now)
        }
        print("white in the middle: \(before), then \(seen) after h, ?, F1, h")
        #expect(seen[0] > before + 0.05 && seen[2] > before + 0.05, "h and F1 show the list: \(seen)")
        #expect(seen[1] < before + 0.01 && seen[3] < before + 0.01, "? and h hide it: \(seen)")
    }

    /// `--captions cc1` shows the caption on the picture from the start, in a dark box near the bottom; `c` hides it.
    @Test func captionsShowOnThePictureAndCHidesThem() async throws {
        guard Self.hasDisplay else { return }
        // One caption from the sixth picture to the 295th of 12 s (25 fps): on screen for almost all of it.
        let path = try CaptionFixture.make(seconds: 12, pictureCaptions: [("HELLO WORLD", 5, 295)])
        let run = try WindowRun(["--captions", "cc1"], source: path)
        #expect(await run.playing())
        /// The share of where a one-line caption goes (centred, just above the bottom twelfth) that is dark (the box)
        /// or white (the text).
        func captionLike(_ shot: (width: Int, height: Int, gray: [UInt8])) -> (dark: Double, white: Double) {
            var dark = 0, white = 0, count = 0
            for row in (shot.height * 80 / 100)..<(shot.height * 93 / 100) {
                for column in (shot.width * 38 / 100)..<(shot.width * 62 / 100) {
                    let value = shot.gray[row * shot.width + column]
                    if value <= 60 { dark += 1 } else if value >= 240 { white += 1 }
                    count += 1
                }
            }
            return (Double(dark) / Double(count), Double(white) / Double(count))
        }
        let shown = captionLike(try run.screenshot())
        try run.press("c")
        var hidden = shown
        _ = try await eventually {
            hidden = captionLike(try run.screenshot())
            return hidden.white < shown.white / 4
        }
        print("caption region: shown \(shown), hidden \(hidden)")
        #expect(shown.white > 0.03, "white text: \(shown)")
        // testsrc2 has no white there, and dark parts that move: the text's white is what tells (the box's dark is
        // printed, not held to a bound).
        #expect(hidden.white < shown.white / 4, "c hides it: \(hidden)")
        try run.press("q")
        run.process.waitUntilExit()
        #expect(run.process.terminationStatus == 0)
        #expect(run.log.get().contains("\"kind\":\"caption\""), "and it is logged as it leaves the screen")
    }

    @Test func theWindowPlayerSamplePlaysAndQuitsOnQ() async throws {
        guard Self.hasDisplay else { return }
        let display = try XvfbDisplay()
        defer { display.stop() }
        let server = try LiveFLVServer(path: try Fixture.h264AAC.path(), configuration: .init(port: 0, threads: 1))
        let port = try await server.start()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SampleTests.executable("window-player"))
        process.arguments = ["http://127.0.0.1:\(port)/live.flv", "30"]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "DISPLAY": display.name, "SDL_AUDIODRIVER": "dummy",
        ]) { $1 }
        let log = try Self.start(process)
        _ = await eventually(within: .seconds(15)) { log.get().contains("latency") }
        #expect(log.get().contains("2004 PLAY_EVT_PLAY_BEGIN"), "\(log.get())")
        try display.press("q", inWindowNamed: "window-player")
        let quitAt = Date()
        process.waitUntilExit()
        await server.stop()
        #expect(process.terminationStatus == 0)
        #expect(Date().timeIntervalSince(quitAt) < 5, "q ends it")
        #expect(await eventually { log.get().contains("window-player: stopped") }, "\(log.get())")
    }
}
