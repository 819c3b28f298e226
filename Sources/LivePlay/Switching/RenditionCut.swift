import LivePlayCore

/// Where a rendition switch (``LivePlayer/switchStream(to:)``) cuts from the stream playing to the other rendition:
/// decided from what the two sessions publish, a value that returns what to do, like ``ReconnectPolicy``. The
/// switcher does the waiting and the acting.
///
/// The cut is at the other rendition's first keyframe far enough ahead of the picture shown (``lead``) that the
/// playback does not pass it before the cut is set; that keyframe must be the other session's poster (decoded, ready
/// to show at once). The two must be stamped alike: their newest media at most ``alignmentTolerance`` apart. Past
/// ``wait`` from the request, the switch fails with the last reason it waited for.
struct RenditionCut: Sendable {
    /// What the two sessions have published as of their last turns.
    struct Observation: Sendable {
        /// The other rendition's poster is decoded (its preloaded state is ready).
        var candidateReady: Bool
        var candidateLiveEdge: MediaTimestamp?
        var candidateKeyframes: [MediaTimestamp]
        var candidatePoster: MediaTimestamp?
        var playingLiveEdge: MediaTimestamp?
        /// The presentation time of the picture the playback showed last.
        var shown: MediaTimestamp?
    }

    enum Action: Sendable, Equatable {
        /// Nothing to do yet.
        case wait
        /// Ask the other session to keep, and decode as its poster, the keyframe at this presentation time.
        case startAt(MediaTimestamp)
        /// Cut here: the playback shows what is stamped before it, the other rendition from its keyframe here.
        case cut(at: MediaTimestamp)
        case fail(reason: String)
    }

    /// When the switch was asked for, on the player's stopwatch.
    let requestedAt: Duration
    var wait = Duration.seconds(5)
    var alignmentTolerance = Duration.seconds(1)
    var lead = PublishedPlayback.keyframeLead
    /// What a failure now would say.
    private(set) var reason: String
    /// The keyframe the other rendition was asked to start at (LAS's `startPts`), and whether it did: its first
    /// keyframe is that one (nil until it has shown a keyframe).
    var asked: MediaTimestamp?
    private(set) var honoured: Bool?

    /// - Parameter unreachable: what a failure says while the other rendition has not connected.
    init(requestedAt: Duration, unreachable: String) {
        self.requestedAt = requestedAt
        reason = unreachable
    }

    /// What to do at `now`, given what the sessions published.
    mutating func decide(_ observation: Observation, at now: Duration) -> Action {
        let action = step(observation)
        if case .cut = action { return action }
        return now >= requestedAt + wait ? .fail(reason: reason) : action
    }

    private mutating func step(_ seen: Observation) -> Action {
        if let asked, honoured == nil, let first = seen.candidateKeyframes.first { honoured = first == asked }
        guard seen.candidateReady, let edge = seen.candidateLiveEdge, let playingEdge = seen.playingLiveEdge,
            let shown = seen.shown
        else { return .wait }
        let apart = Duration.milliseconds(abs(edge.milliseconds - playingEdge.milliseconds))
        guard apart <= alignmentTolerance else {
            reason = "the timestamps do not align: its newest media is \(apart.milliseconds) ms from this stream's"
            return .wait
        }
        reason = "no keyframe ahead of the playback"
        guard let start = seen.candidateKeyframes.first(where: { $0 > shown + lead }) else { return .wait }
        return seen.candidatePoster == start ? .cut(at: start) : .startAt(start)
    }
}
