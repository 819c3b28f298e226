import Foundation
import LivePlayTesting
import Testing

/// The window's player on a private session bus (`dbus-daemon --session`, started here): Debian's `playerctl` lists
/// it, reads its status and metadata, and its play-pause, position and next act on it, as the events say;
/// `PropertiesChanged` arrives for the status and the metadata (`dbus-monitor`); the player leaves the bus when it
/// exits. Without a session bus: one line at `--log-level debug`, and the window plays.
@Suite(.serialized) struct MPRISCommandTests {
    /// A session bus of the test's own, stopped when released.
    final class SessionBus {
        let daemon = Process()
        let address: String

        init() throws {
            daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
            daemon.arguments = ["--session", "--nofork", "--print-address=1"]
            let output = Pipe()
            daemon.standardOutput = output
            try ChildProcess.run(daemon)
            var line = Data()
            while !line.contains(0x0A), case let byte = output.fileHandleForReading.readData(ofLength: 1), !byte.isEmpty {
                line.append(byte)
            }
            address = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// `playerctl ARGUMENTS` on this bus: its output, trimmed.
        func playerctl(_ arguments: [String]) throws -> String {
            let output = try ExternalTool.run("env", ["DBUS_SESSION_BUS_ADDRESS=\(address)", "playerctl"] + arguments)
            return output.text.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func stop() {
            ChildProcess.terminate(daemon, signal: SIGTERM)
        }
    }

    /// The events of a JSON log, as `CODE message` lines.
    static func events(_ log: String) -> String {
        log.split(separator: "\n").filter { $0.contains("\"kind\":\"event\"") }.map { line in
            let code = line.range(of: "\"code\":").map { line[$0.upperBound...].prefix { $0 != "," } } ?? ""
            let message = line.range(of: "\"message\":\"").map { line[$0.upperBound...].prefix { $0 != "\"" } } ?? ""
            return "\(code) \(message)"
        }.joined(separator: "; ")
    }

    static var hasTools: Bool {
        let missing = ["dbus-daemon", "playerctl", "dbus-monitor"].filter { ExternalTool.find($0) == nil }
        guard !missing.isEmpty else { return WindowCommandTests.hasDisplay }
        if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("\(missing) are required under CI") }
        return false
    }

    @Test func playerctlSeesAndDrivesTheWindowsPlayer() async throws {
        guard Self.hasTools else { return }
        let bus = try SessionBus()
        defer { bus.stop() }
        let folder = NSTemporaryDirectory() + "liveplay-mpris-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["a.flv", "b.flv"] {
            try FileManager.default.copyItem(atPath: try Fixture.longH264AAC.path(), toPath: "\(folder)/\(name)")
        }
        try Data("#EXTM3U\n#EXTINF:10,Alpha\na.flv\n#EXTINF:10,Beta\nb.flv\n".utf8)
            .write(to: URL(fileURLWithPath: "\(folder)/list.m3u"))
        let monitor = Process()
        monitor.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-monitor")
        monitor.arguments = ["--address", bus.address, "type='signal',interface='org.freedesktop.DBus.Properties'"]
        let signals = try WindowCommandTests.start(monitor, spawn: ChildProcess.run)
        defer { ChildProcess.terminate(monitor, signal: SIGTERM) }
        let run = try WindowCommandTests.WindowRun(
            [], source: "\(folder)/list.m3u", environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        #expect(await run.playing(), "\(run.log.get().suffix(600))")
        let name = "liveplay.instance\(run.process.processIdentifier)"
        #expect(try bus.playerctl(["-l"]).split(separator: "\n").contains { $0 == name })
        func playerctl(_ arguments: String...) throws -> String { try bus.playerctl(["-p", name] + arguments) }
        #expect(try playerctl("status") == "Playing")
        #expect(try playerctl("metadata", "xesam:title") == "Alpha")
        #expect(try playerctl("metadata", "mpris:length") == "10000000" || (try playerctl("metadata", "mpris:length")).hasPrefix("100"))

        _ = try playerctl("play-pause")
        #expect(await run.waitFor("LIVEPLAY_EVT_PAUSED"), "the event says so")
        _ = await eventually { (try? playerctl("status")) == "Paused" }
        #expect(try playerctl("status") == "Paused")
        _ = try playerctl("play-pause")
        #expect(await run.waitFor("LIVEPLAY_EVT_RESUMED"))

        _ = try playerctl("position", "6")
        #expect(await run.waitFor("LIVEPLAY_EVT_SEEK_DONE"), "SetPosition seeks")
        // The position the controls read: the seek's (`Seeked`), then the player's timeline, once a second; a state
        // that changes something else does not take it back to the tick before the seek.
        let positions = Locked<[Double]>([])
        _ = await eventually {
            let position = Double((try? playerctl("position")) ?? "") ?? -1
            positions.withLock { $0.append(position) }
            return positions.get().count >= 15
        }
        let afterSeek = positions.get().drop { $0 < 5.5 }
        #expect(!afterSeek.isEmpty && afterSeek.allSatisfy { $0 >= 5.5 && $0 < 9 }, "\(positions.get()): \(Self.events(run.log.get()))")

        _ = try playerctl("next")
        #expect(await run.waitFor("LIVEPLAY_EVT_PLAYLIST_ITEM", count: 2), "Next moves along the playlist")
        _ = await eventually { (try? playerctl("metadata", "xesam:title")) == "Beta" }
        #expect(try playerctl("metadata", "xesam:title") == "Beta")

        _ = await eventually { signals.get().contains("Beta") }
        let told = signals.get()
        #expect(told.contains("\"PlaybackStatus\"") && told.contains("\"Paused\""), "PropertiesChanged for the status")
        #expect(told.contains("\"Metadata\"") && told.contains("\"Beta\""), "PropertiesChanged for the metadata")

        run.process.terminate()
        run.process.waitUntilExit()
        _ = await eventually { (try? bus.playerctl(["-l"]))?.contains(name) == false }
        #expect(try !bus.playerctl(["-l"]).contains(name), "off the bus once it exits")
    }

    @Test func withoutASessionBusOneDebugLineAndTheWindowPlays() async throws {
        guard WindowCommandTests.hasDisplay else { return }
        let run = try WindowCommandTests.WindowRun(
            ["--log-level", "debug"], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"],
            keepsStandardError: true)
        #expect(await run.playing(), "\(run.log.get().suffix(600))")
        #expect(run.log.get().components(separatedBy: "no MPRIS on the session bus").count == 2, "one line")
    }
}
