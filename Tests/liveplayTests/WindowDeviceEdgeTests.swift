import Foundation
import LivePlayTesting
import Testing

/// The window's devices when they are not there or not right (issue 45): a sound device that does not open or that
/// takes the sound faster than real time is replaced by liveplay's own clock with one warning, and a display that does
/// not answer is an error. Under Xvfb, with SDL's own drivers.
@Suite(.serialized) struct WindowDeviceEdgeTests {
    /// `liveplay FILE --window --json` under a fresh Xvfb with `environment` added: the exit status, stderr, and the
    /// times of the first 2004 and 2006 in ms.
    static func play(_ file: String, _ environment: [String: String]) throws
        -> (status: Int32, errors: String, begin: Int?, end: Int?)?
    {
        if let reason = XvfbDisplay.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("Xvfb is needed under CI: \(reason)") }
            return nil
        }
        let display = try XvfbDisplay()
        defer { display.stop() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = [file, "--window", "--json"]
        process.environment = ProcessInfo.processInfo.environment.merging(["DISPLAY": display.name]) { $1 }
            .merging(environment) { $1 }
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let errors = Locked(Data())
        let reader = Thread { errors.set(stderr.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        _ = LoopbackPort.wait(timeout: .seconds(5)) { !reader.isExecuting }
        let events = try EdgeTests.lines(String(decoding: output, as: UTF8.self)).filter { $0["kind"] as? String == "event" }
        let time = { (code: Int) in events.first { $0["code"] as? Int == code }?["time_ms"] as? Int }
        return (process.terminationStatus, String(decoding: errors.get(), as: UTF8.self), time(2004), time(2006))
    }

    static func warnings(_ errors: String) -> [Substring] {
        errors.split(separator: "\n").filter { $0.hasPrefix("liveplay: no sound:") }
    }

    /// ALSA with no card (`AUDIODEV=hw:99`, a card no machine has): the window used to play the file 6× too fast; it
    /// now plays it at 1.0× (10 s of media from 2004 to 2006, ± 2 %) and says once that there is no sound.
    @Test func withNoSoundCardTheWindowPlaysInRealTimeAndSaysSoOnce() throws {
        guard let run = try Self.play(try Fixture.longH264AAC.path(), ["SDL_AUDIODRIVER": "alsa", "AUDIODEV": "hw:99"])
        else { return }
        #expect(run.status == 0, "\(run.errors)")
        let played = try #require(run.end) - (try #require(run.begin))
        #expect(abs(played - 10_000) <= 200, "10 s of media in \(played) ms")
        #expect(Self.warnings(run.errors).count == 1, "\(run.errors)")
    }

    /// SDL's disk driver with no delay takes the sound as fast as it can (about 6×): given up within 100 ms, so the
    /// file plays in about 9.5 s instead of 2 (what it raced at), with one warning that names the rate.
    @Test func aSoundDeviceThatDrainsInstantlyIsGivenUpForTheClock() throws {
        let sound = NSTemporaryDirectory() + "liveplay-instant-\(UUID().uuidString).raw"
        defer { try? FileManager.default.removeItem(atPath: sound) }
        guard
            let run = try Self.play(
                try Fixture.longH264AAC.path(),
                ["SDL_AUDIODRIVER": "disk", "SDL_DISKAUDIOFILE": sound, "SDL_DISKAUDIODELAY": "0"])
        else { return }
        #expect(run.status == 0, "\(run.errors)")
        let played = try #require(run.end) - (try #require(run.begin))
        #expect(played >= 8_500 && played <= 10_200, "10 s of media in \(played) ms")
        let warnings = Self.warnings(run.errors)
        #expect(warnings.count == 1 && warnings.first?.contains("× real time") == true, "\(run.errors)")
    }

    /// A display that does not answer (no X server at :99… here, one never started) is an error with a sentence and
    /// exit 69, not a run that plays to nobody and exits 0.
    @Test func aDisplayThatDoesNotAnswerIsAnError() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.path)
        process.arguments = [try Fixture.h264AAC.path(), "--window", "-t", "2", "--json"]
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = ":\(Int.random(in: 900...999))"
        environment["WAYLAND_DISPLAY"] = nil
        process.environment = environment
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 69, "\(message)")
        #expect(message.contains("liveplay: cannot open a window: no display answers at DISPLAY=:"), "\(message)")
    }
}
