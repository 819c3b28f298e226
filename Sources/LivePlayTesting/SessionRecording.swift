import Foundation
public import LivePlay
import Logging

/// Plays a URL with a ``LiveSession`` on the real clock and records every event, with a hard time limit
/// so a broken test ends instead of hanging.
public struct SessionRecording: Sendable {
    public var outcome: PlaybackOutcome
    public var events: [PlayEvent]

    /// The event codes in order.
    public var codes: [Int] { events.map(\.code.rawValue) }

    /// The first event with `code`.
    public func first(_ code: PlayEventCode) -> PlayEvent? { events.first { $0.code == code } }

    /// Plays until the session ends, `stopWhen` returns true for an event, or `limit` passes; `script`
    /// runs alongside and may wait for events (``EventProbe``) to act on servers at the right moment.
    public static func record(
        _ url: String, configuration: LivePlayConfiguration, limit: Duration = .seconds(20),
        stopWhen: @escaping @Sendable (PlayEvent) -> Bool = { _ in false },
        script: (@Sendable (EventProbe) async -> Void)? = nil
    ) async -> SessionRecording {
        let box = EventBox()
        var quiet = Logger(label: "test")
        quiet.logLevel = .critical
        let logger = quiet
        let outcome = await withTaskGroup(of: PlaybackOutcome?.self) { group in
            group.addTask {
                let session = LiveSession(
                    url: url, configuration: configuration, clock: ContinuousClock(), logger: logger)
                return await session.run { event in
                    box.append(event)
                    if stopWhen(event) { box.signalStop() }
                }
            }
            if let script {
                group.addTask {
                    await script(EventProbe(box: box))
                    // The script is done; keep waiting for the session (the watchdog below ends it).
                    try? await Task.sleep(for: limit)
                    return nil
                }
            }
            group.addTask {
                let deadline = ContinuousClock.now + limit
                while ContinuousClock.now < deadline, !box.shouldStop, !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(20))
                }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .stopped
        }
        return SessionRecording(outcome: outcome, events: box.events)
    }
}

/// Lets a test script wait for events while the session plays.
public struct EventProbe: Sendable {
    fileprivate let box: EventBox

    /// Waits until `count` events with `code` have arrived (or `timeout` passes); returns whether they did.
    @discardableResult
    public func wait(for code: PlayEventCode, count: Int = 1, timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !Task.isCancelled {
            if box.events.filter({ $0.code == code }).count >= count { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    public var events: [PlayEvent] { box.events }

    /// Ends the recording now (the session is cancelled).
    public func stop() { box.signalStop() }
}

fileprivate final class EventBox: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [PlayEvent] = []
    private var stop = false

    func append(_ event: PlayEvent) { lock.withLock { storage.append(event) } }
    func signalStop() { lock.withLock { stop = true } }
    var events: [PlayEvent] { lock.withLock { storage } }
    var shouldStop: Bool { lock.withLock { stop } }
}
