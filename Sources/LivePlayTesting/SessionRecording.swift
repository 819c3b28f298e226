import Foundation
public import LivePlay
import Logging

/// Plays a URL with a ``LiveSession`` on the real clock and records every event, with a hard time limit
/// so a broken test ends instead of hanging.
public struct SessionRecording: Sendable {
    public var outcome: PlaybackOutcome
    /// Every event but the session summary, in order.
    public var events: [PlayEvent]
    /// The session summary (`LIVEPLAY_EVT_SESSION_SUMMARY`), always the last event of a session.
    public var summary: PlayEvent?
    /// The net status, once a second.
    public var statuses: [NetStatus] = []
    /// Every read as the play loop took it (with `recordsArrivals`).
    public var arrivals: [ArrivalRead] = []
    /// What the playback was, each time that changed (``PlaybackState``).
    public var states: [PlaybackState] = []

    /// The event codes in order.
    public var codes: [Int] { events.map(\.code.rawValue) }

    /// The first event with `code`.
    public func first(_ code: PlayEventCode) -> PlayEvent? { events.first { $0.code == code } }

    /// Plays until the session ends, `stopWhen` returns true for an event, or `limit` passes; `script`
    /// runs alongside and may wait for events (``EventProbe``) to act on servers at the right moment.
    public static func record(
        _ url: String, configuration: LivePlayConfiguration, limit: Duration = .seconds(20), sink: RecordingSink? = nil,
        videoSink: (any VideoSink & Sendable)? = nil, audioSink: (any AudioSink & Sendable)? = nil,
        recordsArrivals: Bool = false, stopWhen: @escaping @Sendable (PlayEvent) -> Bool = { _ in false },
        script: (@Sendable (EventProbe) async -> Void)? = nil
    ) async -> SessionRecording {
        let box = EventBox()
        let arrivals = recordsArrivals ? ArrivalRecorder() : nil
        let control = PlaybackControl()
        var quiet = Logger(label: "test")
        quiet.logLevel = .critical
        let logger = quiet
        let outcome = await withTaskGroup(of: PlaybackOutcome?.self) { group in
            group.addTask {
                let session = LiveSession(
                    url: url, configuration: configuration, clock: ContinuousClock(), logger: logger,
                    videoSink: videoSink ?? sink, audioSink: audioSink ?? sink, control: control, arrivalTap: arrivals)
                return await session.run(
                    onEvent: { event in
                        box.append(event)
                        if stopWhen(event) { box.signalStop() }
                    }, onStatus: box.append, onState: box.append)
            }
            if let script {
                group.addTask {
                    await script(EventProbe(box: box, control: control))
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
        var events = box.events
        let summary = events.last?.code == .sessionSummary ? events.removeLast() : nil
        return SessionRecording(
            outcome: outcome, events: events, summary: summary, statuses: box.statuses, arrivals: arrivals?.reads ?? [],
            states: box.states)
    }
}

/// Lets a test script wait for events while the session plays.
public struct EventProbe: Sendable {
    fileprivate let box: EventBox
    /// Changes the playing session (its latency mode, …).
    public let control: PlaybackControl

    /// Waits until `count` events with `code` have arrived (or `timeout` passes); returns whether they did.
    @discardableResult
    public func wait(for code: PlayEventCode, count: Int = 1, timeout: Duration = .seconds(10)) async -> Bool {
        await eventually(within: timeout) { box.events.filter { $0.code == code }.count >= count }
    }

    public var events: [PlayEvent] { box.events }
    /// The net statuses so far.
    public var statuses: [NetStatus] { box.statuses }

    /// Ends the recording now (the session is cancelled).
    public func stop() { box.signalStop() }
}

/// `@unchecked Sendable`: every mutable field is read and written under `lock`.
fileprivate final class EventBox: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [PlayEvent] = []
    private var statusStorage: [NetStatus] = []
    private var stateStorage: [PlaybackState] = []
    private var stop = false

    func append(_ event: PlayEvent) { lock.withLock { storage.append(event) } }
    func append(_ status: NetStatus) { lock.withLock { statusStorage.append(status) } }
    var statuses: [NetStatus] { lock.withLock { statusStorage } }
    func append(_ state: PlaybackState) { lock.withLock { stateStorage.append(state) } }
    var states: [PlaybackState] { lock.withLock { stateStorage } }
    func signalStop() { lock.withLock { stop = true } }
    var events: [PlayEvent] { lock.withLock { storage } }
    var shouldStop: Bool { lock.withLock { stop } }
}

/// A video and audio sink that records when each frame and block was handed over, for tests of pacing
/// and A/V sync; thread-safe, so a test reads it while the session plays.
///
/// `@unchecked Sendable`: every mutable field is read and written under `lock`.
public final class RecordingSink: VideoSink, AudioSink, @unchecked Sendable {
    /// A picture as presented: its timing, size, and when it was handed over.
    public struct Picture: Sendable {
        public var timing: FrameTiming
        public var width: Int
        public var height: Int
        public var at: ContinuousClock.Instant
        /// The picture's framemd5-compatible MD5, when the sink was made with `hashesPictures`.
        public var md5: String?

        public init(timing: FrameTiming, width: Int, height: Int, at: ContinuousClock.Instant, md5: String? = nil) {
            (self.timing, self.width, self.height, self.at, self.md5) = (timing, width, height, at, md5)
        }
    }

    /// A block of sound as handed over.
    public struct Sound: Sendable {
        public var pts: MediaTimestamp
        public var rate: Double
        public var frames: Int
        public var sampleRate: Int
        public var at: ContinuousClock.Instant

        public init(pts: MediaTimestamp, rate: Double, frames: Int, sampleRate: Int, at: ContinuousClock.Instant) {
            (self.pts, self.rate, self.frames, self.sampleRate, self.at) = (pts, rate, frames, sampleRate, at)
        }
    }

    private let lock = NSLock()
    private var storedPictures: [Picture] = []
    private var storedSounds: [Sound] = []

    private let hashesPictures: Bool

    /// - Parameter hashesPictures: keep each picture's MD5 (``Picture/md5``), to compare decoded pictures.
    public init(hashesPictures: Bool = false) {
        self.hashesPictures = hashesPictures
    }

    public var pictures: [Picture] { lock.withLock { storedPictures } }
    public var sounds: [Sound] { lock.withLock { storedSounds } }

    public func present(_ frame: VideoFrame, timing: FrameTiming) {
        let picture = Picture(
            timing: timing, width: frame.width, height: frame.height, at: .now,
            md5: hashesPictures ? frame.md5() : nil)
        lock.withLock { storedPictures.append(picture) }
    }

    public func play(_ audio: AudioSamples) {
        let sound = Sound(
            pts: audio.pts, rate: audio.rate, frames: audio.samples.count / max(1, audio.channels),
            sampleRate: audio.sampleRate, at: .now)
        lock.withLock { storedSounds.append(sound) }
    }

    /// Not a real-time device: the session's monotonic clock stays the master.
    public var unplayedDuration: Duration? { nil }

    /// For each block of sound, how much earlier (+) or later (−) it left than the picture of the same
    /// media instant, in ms: the picture's hand-over time is interpolated between the two pictures around it.
    ///
    /// When the player paused both the sound and the pictures between those two (the pictures' gap over 25 ms
    /// longer than their media at the block's rate, and a gap as long in the sound within it: a short loading,
    /// or the session's thread not run), the picture clock did not run through the gap, and interpolating across
    /// it would charge the pause to the block. The block is then measured against the picture on its own side of
    /// the pause, at its rate; `acrossPauses` counts these. A picture late while the sound went on is no such
    /// pause, and is interpolated as ever.
    ///
    /// With `watch`, a block is left out when the machine stalled (``StallWatch``) between the picture before it
    /// and the later of itself and the picture after it, or within 50 ms of that: `leftOut` counts them.
    public func audioVideoOffsets(
        leavingOutStallsOf watch: StallWatch? = nil
    ) -> (offsets: [Int64], leftOut: Int, acrossPauses: Int) {
        // The first picture is a poster shown before playback begins.
        Self.audioVideoOffsets(pictures: Array(pictures.dropFirst()), sounds: sounds, leavingOutStallsOf: watch)
    }

    /// ``audioVideoOffsets(leavingOutStallsOf:)`` of pictures and sounds as handed over.
    public static func audioVideoOffsets(
        pictures: [Picture], sounds: [Sound], leavingOutStallsOf watch: StallWatch? = nil
    ) -> (offsets: [Int64], leftOut: Int, acrossPauses: Int) {
        let slack = Duration.milliseconds(25)
        // When the sound resumed after a pause: a block handed over 25 ms later than the media before it took.
        let soundResumes = zip(sounds, sounds.dropFirst()).compactMap { before, after in
            after.at - before.at > .milliseconds(Double(after.pts.milliseconds - before.pts.milliseconds) / before.rate)
                + slack ? after.at : nil
        }
        var offsets: [Int64] = []
        var leftOut = 0
        var acrossPauses = 0
        for sound in sounds {
            guard let after = pictures.firstIndex(where: { $0.timing.pts >= sound.pts }), after > pictures.startIndex
            else { continue }
            let (earlier, later) = (pictures[after - 1], pictures[after])
            let span = Double(later.timing.pts.milliseconds - earlier.timing.pts.milliseconds)
            // Not across a skip (media time) or a stall (wall time).
            guard span > 0, span <= 200, later.at - earlier.at <= .milliseconds(200) else { continue }
            if let watch, watch.stalled(from: earlier.at, to: max(sound.at, later.at), margin: .milliseconds(50)) {
                leftOut += 1
                continue
            }
            let shown: ContinuousClock.Instant
            if later.at - earlier.at > .milliseconds(span / sound.rate) + slack,
                let resumed = soundResumes.first(where: { $0 > earlier.at && $0 <= later.at + slack })
            {
                acrossPauses += 1
                let anchor = sound.at < resumed ? earlier : later
                shown = anchor.at + .milliseconds(Double(sound.pts.milliseconds - anchor.timing.pts.milliseconds) / sound.rate)
            } else {
                let fraction = Double(sound.pts.milliseconds - earlier.timing.pts.milliseconds) / span
                shown = earlier.at + (later.at - earlier.at) * fraction
            }
            offsets.append((shown - sound.at).milliseconds)
        }
        return (offsets, leftOut, acrossPauses)
    }
}

/// An arrival tap that keeps every read in memory, for tests and the simulator's agreement checks.
///
/// `@unchecked Sendable`: the reads are appended and read under `lock`.
public final class ArrivalRecorder: ArrivalTap, @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [ArrivalRead] = []

    public init() {}

    public func arrived(_ read: ArrivalRead) { lock.withLock { storage.append(read) } }

    public var reads: [ArrivalRead] { lock.withLock { storage } }
}
