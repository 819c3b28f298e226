public import Foundation

/// Starting long-running test servers so that signals reach them.
public enum ChildProcess {
    /// Starts `process` with no signals blocked.
    ///
    /// A child inherits the signal mask of the thread that spawns it, and on Linux Swift concurrency runs
    /// on libdispatch worker threads, which block nearly every signal. Spawned from there, nginx and
    /// ffmpeg would ignore SIGTERM (measured: nginx kept running, and `waitUntilExit` hung). So the mask is
    /// cleared on this thread for the spawn and restored after.
    public static func run(_ process: Process) throws {
        var none = sigset_t()
        var previous = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
    }

    /// Sends `signal` and waits for the exit; after `grace` without one, SIGKILL. Never hangs a test.
    public static func terminate(_ process: Process, signal: Int32, grace: Duration = .seconds(3)) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, signal)
        if signal != SIGKILL, !LoopbackPort.wait(timeout: grace, until: { !process.isRunning }) {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }
}
