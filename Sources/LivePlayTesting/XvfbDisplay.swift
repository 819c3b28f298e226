import Foundation

/// A virtual X display (Debian's `xvfb`) on a free display number, for window tests without a desktop: Xvfb
/// picks the number itself (`-displayfd`) and the test sets `DISPLAY` to it. Stopped by ``stop()``.
public final class XvfbDisplay: @unchecked Sendable {
    /// `:N`, for `DISPLAY`.
    public let name: String
    private let process: Process

    /// Why no Xvfb can start here (not installed), or nil.
    public static var unavailableReason: String? {
        ExternalTool.find("Xvfb") == nil ? "Xvfb is not installed (Debian's xvfb)" : nil
    }

    public init(width: Int = 1280, height: Int = 720) throws {
        guard let xvfb = ExternalTool.find("Xvfb") else { throw LoopbackError("Xvfb not found on PATH") }
        process = Process()
        process.executableURL = URL(fileURLWithPath: xvfb)
        process.arguments = ["-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try ChildProcess.run(process)
        // Xvfb writes the display number and a newline once it accepts clients.
        var text = ""
        let deadline = Date().addingTimeInterval(10)
        while !text.contains("\n"), Date() < deadline {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            ChildProcess.terminate(process, signal: SIGTERM)
            throw LoopbackError("Xvfb did not report a display (\(text))")
        }
        name = ":\(number)"
    }

    deinit { stop() }

    public func stop() {
        windowManager.map { ChildProcess.terminate($0, signal: SIGTERM) }
        ChildProcess.terminate(process, signal: SIGTERM)
    }

    /// Why no window manager can start here (Debian's `jwm`, a small EWMH one, is not installed), or nil.
    public static var windowManagerUnavailableReason: String? {
        ExternalTool.find("jwm") == nil ? "jwm is not installed (Debian's jwm)" : nil
    }

    private var windowManager: Process?

    /// Starts a window manager on this display, as a desktop has (Xvfb alone is a bare X server), and returns once
    /// it answers EWMH queries.
    public func startWindowManager() throws {
        guard let jwm = ExternalTool.find("jwm") else { throw LoopbackError("jwm not found (Debian's jwm)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: jwm)
        process.environment = ProcessInfo.processInfo.environment.merging(["DISPLAY": name]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcess.run(process)
        windowManager = process
        let deadline = Date().addingTimeInterval(10)
        // `get_num_desktops` fails until an EWMH window manager has set _NET_NUMBER_OF_DESKTOPS.
        while Int(try xdotool(["get_num_desktops"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 < 1 {
            guard Date() < deadline else { throw LoopbackError("jwm did not start on \(name)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// The first window whose title contains `title`, from the X server's window tree (`xwininfo -root -tree`).
    /// Not `xdotool search --name`: xdotool reads a UTF-8 `WM_NAME` in the C locale and finds nothing.
    public func windowID(named title: String) throws -> String {
        let tree = try ExternalTool.run("xwininfo", ["-display", name, "-root", "-tree"]).text
        for line in tree.split(separator: "\n") {
            let fields = line.trimmingCharacters(in: .whitespaces)
            guard fields.hasPrefix("0x"), let quote = fields.firstIndex(of: "\"") else { continue }
            if fields[quote...].contains(title) { return String(fields[..<quote]).trimmingCharacters(in: .whitespaces) }
        }
        throw LoopbackError("no window named \(title)")
    }

    /// A property of the first window whose title contains `title`, as `xprop` prints it (`_NET_WM_NAME(UTF8_STRING)
    /// = "…"`).
    public func property(_ property: String, ofWindowNamed title: String) throws -> String {
        try ExternalTool.run("xprop", ["-display", name, "-id", try windowID(named: title), property]).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Where the first window whose title contains `title` is, and its size (`xdotool getwindowgeometry`).
    public func geometry(ofWindowNamed title: String) throws -> (x: Int, y: Int, width: Int, height: Int) {
        let id = try windowID(named: title)
        var values: [String: Int] = [:]
        for line in try xdotool(["getwindowgeometry", "--shell", String(id)]).split(separator: "\n") {
            let parts = line.split(separator: "=")
            if parts.count == 2 { values[String(parts[0])] = Int(parts[1]) }
        }
        return (values["X"] ?? 0, values["Y"] ?? 0, values["WIDTH"] ?? 0, values["HEIGHT"] ?? 0)
    }

    /// Runs `xdotool ARGUMENTS` on this display and returns its output.
    @discardableResult
    public func xdotool(_ arguments: [String]) throws -> String {
        guard let tool = ExternalTool.find("xdotool") else { throw LoopbackError("xdotool not found (Debian's xdotool)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["DISPLAY": name]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Sends `key` (an X keysym name: `space`, `q`, `2`) to the first window whose title contains `title`.
    public func press(_ keys: String..., inWindowNamed title: String) throws {
        try press(keys, inWindowNamed: title)
    }

    /// Presses `keys` one after the other, as quickly as xdotool types (12 ms apart).
    public func press(_ keys: [String], inWindowNamed title: String) throws {
        try xdotool(["key", "--window", try windowID(named: title)] + keys)
    }

    /// Moves the pointer to the middle of the first window whose title contains `title` and clicks the left button
    /// `count` times, `interval` apart (two within SDL's double-click time: a double-click).
    public func click(_ count: Int = 1, interval: Duration = .milliseconds(60), inWindowNamed title: String) throws {
        let window = try geometry(ofWindowNamed: title)
        try xdotool(["mousemove", String(window.x + window.width / 2), String(window.y + window.height / 2)])
        let milliseconds = Int(interval / .milliseconds(1))
        try xdotool(["click", "--repeat", String(count), "--delay", String(milliseconds), "1"])
    }
}
