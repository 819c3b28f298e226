import Foundation
import LivePlay
import Synchronization

/// Where the event logs write, and the live status line drawn there on a terminal. Logs of several streams share
/// one output, so their lines never interleave: each line is written whole under the output's lock.
final class LogOutput: Sendable {
    let handle: FileHandle
    private let state = Mutex(State())

    private struct State {
        var statusShown = false
        /// The status line on a terminal, drawn again under each line.
        var statusText: String?
        /// The net status the line shows, made again to fit when the terminal's width changes.
        var lastStatus: NetStatus?
        var failedWrite = false
        var onBroken: (@Sendable () -> Void)?
    }

    init(_ handle: FileHandle) {
        self.handle = handle
    }

    /// Called once when writing fails because the reader went away (`| head`): the run stops then.
    var onBroken: (@Sendable () -> Void)? {
        get { state.withLock { $0.onBroken } }
        set { state.withLock { $0.onBroken = newValue } }
    }

    /// Whether writing failed (the reader went away): the command stops then.
    var broken: Bool { state.withLock { $0.failedWrite } }

    /// A line. On a terminal it takes the status line's place, and the status is drawn again below it, fitted to
    /// the width the terminal has now.
    func write(_ text: String) {
        locked { state in
            guard state.statusShown, let statusText = state.statusText else {
                put(text + "\n", &state)
                return
            }
            let erase = eraseStatus(state)
            let fitted = state.lastStatus.map {
                StatusLine.text($0, columns: Self.terminalColumns(handle.fileDescriptor))
            } ?? statusText
            state.statusText = fitted
            put(erase + text + "\n" + fitted, &state)
        }
    }

    /// The status line, in place of the one drawn last. One line that never wraps: a wrapped line cannot be redrawn
    /// in place. The width is read each time, so a resized terminal gets a clean line on the next second.
    func showStatus(_ status: NetStatus) {
        locked { state in
            let erase = eraseStatus(state)
            let text = StatusLine.text(status, columns: Self.terminalColumns(handle.fileDescriptor))
            state.statusShown = true
            state.statusText = text
            state.lastStatus = status
            put(erase + text, &state)
        }
    }

    /// Draws the status line again at once (the terminal was resized: `SIGWINCH`).
    func redrawStatus() {
        locked { state in
            guard state.statusShown, let status = state.lastStatus else { return }
            let erase = eraseStatus(state)
            let text = StatusLine.text(status, columns: Self.terminalColumns(handle.fileDescriptor))
            state.statusText = text
            put(erase + text, &state)
        }
    }

    /// A sentence for stderr; on a terminal the status line is redrawn below it.
    func error(_ text: String) {
        locked { state in
            let clears = state.statusShown && handle === FileHandle.standardOutput && isatty(STDERR_FILENO) == 1
            if clears { put(eraseStatus(state), &state) }
            FileHandle.standardError.write(Data((text + "\n").utf8))
            if clears, let statusText = state.statusText { put(statusText, &state) }
        }
    }

    /// Clears the live status line: the shell prompt starts on a clean line.
    func clearStatus() {
        locked { state in
            if state.statusShown { put(eraseStatus(state), &state) }
            state.statusShown = false
            state.statusText = nil
            state.lastStatus = nil
        }
    }

    /// The terminal's width, or 80 when it cannot be read.
    static func terminalColumns(_ descriptor: Int32) -> Int {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// Runs `body` under the lock, then tells ``onBroken`` (outside it) if a write in `body` failed first.
    private func locked(_ body: (inout State) -> Void) {
        let broke = state.withLock { state -> (@Sendable () -> Void)? in
            let wasBroken = state.failedWrite
            body(&state)
            return !wasBroken && state.failedWrite ? state.onBroken : nil
        }
        broke?()
    }

    /// Moves to the start of the status line drawn last and clears from there to the end of the screen. A
    /// terminal made narrower since wraps that line onto more rows: the cursor goes up over all of them, so
    /// no fragment of it is left behind.
    private func eraseStatus(_ state: State) -> String {
        guard state.statusShown, let statusText = state.statusText else { return "\r\u{1B}[K" }
        let columns = Self.terminalColumns(handle.fileDescriptor)
        let rows = max(1, (statusText.count + columns - 1) / columns)
        return (rows > 1 ? "\u{1B}[\(rows - 1)A" : "") + "\r\u{1B}[J"
    }

    /// Writes now (no buffering); a failed write is remembered, never fatal (SIGPIPE is ignored).
    private func put(_ text: String, _ state: inout State) {
        guard !state.failedWrite else { return }
        do {
            try handle.write(contentsOf: Data(text.utf8))
        } catch {
            state.failedWrite = true
        }
    }
}
