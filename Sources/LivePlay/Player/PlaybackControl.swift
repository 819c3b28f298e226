import Foundation
import LivePlayCore
import LivePlayTransport
import Synchronization
import LivePlayBuffering
public import LivePlayDecode

/// Changes a playing session from any task or thread: each ``send(_:)`` puts one ``PlayerCommand`` in the session's
/// mailbox, which wakes the play loop (its turns follow the media, up to 100 ms apart: too late for a pause); the loop
/// empties it at the start of that turn and routes each command, in order, to the stage that carries it out
/// (``LiveSession/route(_:to:)``), reporting what it did (a latency change as `LIVEPLAY_EVT_LATENCY_CHANGED`, 9004).
///
/// What the loop makes known the other way (the live edge, what a preloading session holds, the last picture) is in
/// ``published``, written only by the loop.
public final class PlaybackControl: Sendable {
    private struct Mailbox {
        var commands: [PlaybackCommand] = []
        /// Wakes the play loop from its wait for the transport or the next thing due.
        var waker: (@Sendable () -> Void)?
        /// The budget the owner gave a preloading session last (nil once switched to): the owner's record.
        var standby: PreloadBudget?
    }

    /// What the play loop published last, and who follows it.
    private struct Publication {
        var value = PublishedPlayback()
        var followers: [UInt64: AsyncStream<PublishedPlayback>.Continuation] = [:]
        var nextFollower: UInt64 = 0
    }

    private let mailbox: Mutex<Mailbox>
    private let publication = Mutex(Publication())

    public init() {
        mailbox = Mutex(Mailbox())
    }

    /// A session made to preload (``PreloadPool``): it connects, keeps its newest GOP within `budget` and a poster
    /// picture, and presents nothing until ``switchedTo(at:preloaded:rendition:)``.
    init(standby budget: PreloadBudget) {
        mailbox = Mutex(Mailbox(commands: [.standbyBudget(budget)], standby: budget))
    }

    /// Asks the playing session for `command`: it is put in the mailbox and the loop woken, which carries it out on
    /// its next turn, in the order sent (``PlayerCommand`` says what each does).
    public func send(_ command: PlayerCommand) {
        post(.player(command))
    }

    /// Puts `command` in the mailbox and wakes the loop: it takes it now, not when its media next falls due.
    private func post(_ command: PlaybackCommand) {
        let waker = mailbox.withLock {
            $0.commands.append(command)
            return $0.waker
        }
        waker?()
    }

    /// Everything sent since the last call, in order: the play loop's, once a turn. A turn with no command
    /// allocates nothing (emptying an array that was handed out would copy its storage).
    func takeCommands() -> [PlaybackCommand] {
        mailbox.withLock { mailbox in
            guard !mailbox.commands.isEmpty else { return [] }
            defer { mailbox.commands = [] }
            return mailbox.commands
        }
    }

    /// How the play loop is woken, while it runs.
    func wakes(with waker: (@Sendable () -> Void)?) {
        mailbox.withLock { $0.waker = waker }
    }

    /// Replaces where pictures go while playing (`nil`: nowhere); the next picture goes to the new sink. Not a
    /// ``PlayerCommand``: a sink is the front end's own object, not a value.
    public func setVideoSink(_ sink: (any VideoSink)?) {
        post(.videoSink(HeldSink(sink)))
    }

    /// Replaces where sound goes while playing (`nil`: nowhere).
    public func setAudioSink(_ sink: (any AudioSink)?) {
        post(.audioSink(HeldSink(sink)))
    }

    /// A player's settings, all at once (``LivePlayer`` gives each playback its own).
    func apply(_ settings: PlaybackSettings) {
        post(.settings(settings))
    }

    /// While preloading: what the session may hold and read (the pool changes it as streams come and go); nil
    /// once a player switched to it.
    var standbyBudget: PreloadBudget? {
        get { mailbox.withLock { $0.standby } }
        set {
            mailbox.withLock {
                guard $0.standby != nil else { return }
                $0.standby = newValue
                $0.commands.append(.standbyBudget(newValue))
            }
        }
    }

    /// A rendition switch (``LivePlayer/switchStream(to:)``) asks a preloading session to start at the keyframe
    /// shown at this presentation time.
    func startStandby(at keyframe: MediaTimestamp) {
        post(.standbyStart(keyframe))
    }

    /// A player switched to this session at `instant` on its stopwatch `time`: preloading ends, and the first picture
    /// that reaches the sink after it is reported (`LIVEPLAY_EVT_SWITCHED`) with the time since.
    func switchedTo(at instant: Duration, on time: Stopwatch, preloaded: Bool, rendition: Bool = false) {
        mailbox.withLock { $0.standby = nil }
        // The poster is waiting: the loop shows it on the turn this wakes.
        post(.switched(SwitchRequest(at: instant, time: time, preloaded: preloaded, rendition: rendition)))
    }

    /// The last picture shown, shared with libavcodec's buffers (no copy): TXLivePlayer's `snapshot`.
    public var lastPicture: VideoFrame? { published.lastPicture }

    /// What the play loop published at the end of its last turn.
    var published: PublishedPlayback { publication.withLock { $0.value } }

    /// What the play loop publishes at the end of each turn from now on, the newest only: an update stream for a
    /// switcher that decides on what two sessions publish, rather than polling them.
    func publications() -> AsyncStream<PublishedPlayback> {
        let (stream, continuation) = AsyncStream.makeStream(of: PublishedPlayback.self, bufferingPolicy: .bufferingNewest(1))
        let id = publication.withLock { publication in
            defer { publication.nextFollower &+= 1 }
            publication.followers[publication.nextFollower] = continuation
            return publication.nextFollower
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.publication.withLock { $0.followers.removeValue(forKey: id) }
        }
        return stream
    }

    /// The play loop, at the end of a turn (and when the session ends: `ended`, which finishes the streams).
    func publish(_ value: PublishedPlayback, ended: Bool = false) {
        let followers = publication.withLock { publication in
            publication.value = value
            defer { if ended { publication.followers.removeAll() } }
            return Array(publication.followers.values)
        }
        for follower in followers {
            follower.yield(value)
            if ended { follower.finish() }
        }
    }
}
