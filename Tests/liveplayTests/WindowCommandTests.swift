import Foundation
import LivePlayLab
import LivePlayTesting
import Testing

/// `liveplay --window`: headless, it fails at once and says why; under a virtual display (Xvfb) it plays the demo in
/// a window, with its sound on SDL's disk driver, and the keys act on the player.
@Suite(.serialized) struct WindowCommandTests {
    /// Starts `process` and collects its stdout as it comes (stderr is dropped).
    static func start(_ process: Process) throws -> Locked<String> {
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
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

    @Test func keysPauseChangeTheModeAndQuit() async throws {
        if let reason = XvfbDisplay.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("Xvfb is required under CI: \(reason)") }
            return
        }
        let display = try XvfbDisplay()
        defer { display.stop() }
        let sound = NSTemporaryDirectory() + "liveplay-window-sound-\(UUID().uuidString).raw"
        defer { try? FileManager.default.removeItem(atPath: sound) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = ["demo", "--window", "--json", "--duration", "30"]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "DISPLAY": display.name, "SDL_AUDIODRIVER": "disk", "SDL_DISKAUDIOFILE": sound,
        ]) { $1 }
        let started = Date()
        let log = try Self.start(process)
        func waitFor(_ text: String) async -> Bool {
            let deadline = Date().addingTimeInterval(15)
            while !log.get().contains(text), Date() < deadline { try? await Task.sleep(for: .milliseconds(50)) }
            return log.get().contains(text)
        }
        #expect(await waitFor("PLAY_EVT_PLAY_BEGIN"))
        // Two seconds of playing (two net-status lines) before the keys.
        let deadline = Date().addingTimeInterval(15)
        while log.get().components(separatedBy: "\"kind\":\"status\"").count < 3, Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let title = "liveplay"
        try display.press("space", inWindowNamed: title)
        #expect(await waitFor("LIVEPLAY_EVT_PAUSED"), "space pauses: 9007")
        try display.press("space", inWindowNamed: title)
        #expect(await waitFor("LIVEPLAY_EVT_RESUMED"))
        try display.press("2", inWindowNamed: title)
        #expect(await waitFor("LIVEPLAY_EVT_LATENCY_CHANGED"), "2 switches to speed: 9004")
        try display.press("q", inWindowNamed: title)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        #expect(Date().timeIntervalSince(started) < 25, "q quit before --duration")
        try await Task.sleep(for: .milliseconds(200))
        #expect(log.get().contains("LIVEPLAY_EVT_SESSION_SUMMARY"), "the usual summary")
        // The demo's sound is 44.1 kHz mono, 32-bit float at the device: 176 400 bytes a second. Over the 1.5 s or
        // more of playing before the keys (begin at about 0.5 s, the second status at 2 s), the device took at
        // least a second of it (measured: 1.2 s).
        let heard = (try? FileManager.default.attributesOfItem(atPath: sound)[.size] as? Int) ?? 0
        #expect(heard >= 176_400, "sound reached the device: \(heard) bytes")
    }

    /// Samples/WindowPlayer: the smallest window front end on the public API plays, says what happened, and `q`
    /// ends it.
    @Test func theWindowPlayerSamplePlaysAndQuitsOnQ() async throws {
        if let reason = XvfbDisplay.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("Xvfb is required under CI: \(reason)") }
            return
        }
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
        let deadline = Date().addingTimeInterval(15)
        while !log.get().contains("latency"), Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(log.get().contains("2004 PLAY_EVT_PLAY_BEGIN"), "\(log.get())")
        try display.press("q", inWindowNamed: "window-player")
        let quitAt = Date()
        process.waitUntilExit()
        await server.stop()
        #expect(process.terminationStatus == 0)
        #expect(Date().timeIntervalSince(quitAt) < 5, "q ends it")
        try await Task.sleep(for: .milliseconds(200))
        #expect(log.get().contains("window-player: stopped"))
    }
}
