import Foundation
import LivePlay
import Synchronization

/// What a person needs to know of a run, apart from the log: whether media ever played (the exit rule),
/// and, on stderr as one plain sentence each, why a first connection failed (at once, while retries go on)
/// and why the run ended badly. Forwards every update to the log unchanged, and the events to the other outputs
/// that listen (the WebVTT captions).
final class RunReport: LivePlayListener, Sendable {
    private let log: EventLog
    private let also: [any LivePlayListener]
    private let target: String
    /// Reconnect attempts after a failure (`--retries`): with none, nothing is retried.
    private let retries: Int
    /// `--backup` sources: a first source that fails is followed by the next, not retried first.
    private let backups: Int
    /// `--video-track`, `--audio-track`: a track asked for that the stream lacks is named when nothing plays.
    private let askedTracks: (video: UInt8?, audio: UInt8?)
    private let state = Mutex(State())

    private struct State {
        var began = false
        var connected = false
        var toldConnectFailure = false
        var lastError: PlayEvent?
        var recordingStopped = false
        /// Media on demand ended short of what it promised (`LIVEPLAY_WARNING_TRUNCATED`).
        var truncated = false
        /// A multitrack stream's track ids by kind, from its last 9016 (a stream without: track 0 only).
        var tracks: [String: String] = [:]
        /// Media on demand was read to its end before the start position (`--start` past the end).
        var pastTheEnd: PlayEvent?
    }

    /// - Parameters:
    ///   - target: the URL as it may be shown (redacted unless secrets are shown).
    ///   - retries: `--retries`.
    ///   - backups: how many `--backup` sources there are.
    ///   - also: outputs that take the events too.
    init(
        log: EventLog, target: String, retries: Int, backups: Int = 0, tracks: (video: UInt8?, audio: UInt8?) = (nil, nil),
        also: [any LivePlayListener] = []
    ) {
        self.log = log
        self.also = also
        self.target = target
        self.retries = retries
        self.backups = backups
        askedTracks = tracks
    }

    /// Playback began at least once (`PLAY_EVT_PLAY_BEGIN`): a picture was shown or sound heard (media
    /// received, in probe mode).
    var playedMedia: Bool { state.withLock { $0.began } }

    /// The error event that ended the run, if one did.
    var failure: PlayEvent? { state.withLock { $0.lastError } }

    /// A recording stopped because it could not be written (`LIVEPLAY_WARNING_RECORD_FAILED`): the run exits 74
    /// even when playback went on, since what the person asked to keep is not all kept.
    var recordingFailed: Bool { state.withLock { $0.recordingStopped } }

    /// The media was truncated (`LIVEPLAY_WARNING_TRUNCATED`, told on stderr when it came): the run exits 65 even
    /// though what was there played to its end.
    var truncated: Bool { state.withLock { $0.truncated } }

    func onPlayEvent(_ event: PlayEvent) {
        log.onPlayEvent(event)
        for listener in also { listener.onPlayEvent(event) }
        let tell: String? = state.withLock { state in
            switch event.code {
            case .playBegin:
                state.began = true
            case .connectSucceeded, .rtmpStreamBegin:
                state.connected = true
            case .playEnd where event.parameters["past_end"] == .bool(true):
                state.pastTheEnd = event
            case .tracksChanged:
                for kind in ["video", "audio"] {
                    if case .string(let ids)? = event.parameters["\(kind)_tracks"] { state.tracks[kind] = ids }
                }
            case .videoDecodeFailed, .audioDecodeFailed:
                let kind = event.code == .videoDecodeFailed ? "video" : "audio"
                guard event.parameters["reason"] == .string("no_decodable_\(kind)"),
                    let asked = kind == "video" ? askedTracks.video : askedTracks.audio
                else { break }
                let ids = state.tracks[kind].map { $0.split(separator: " ").map(String.init) } ?? ["0"]
                guard !ids.contains(String(asked)) else { break }
                return "--\(kind)-track \(asked): the stream has no such \(kind) track; its \(kind) tracks: "
                    + ids.joined(separator: ", ") + " (\(target))."
            case .playlistItem:
                // The item before failed after its retries: skipped, told, and not the run's failure.
                guard let failed = state.lastError else { break }
                state.lastError = nil
                return "\(failed.message); skipped to the next item of the playlist."
            case .truncated:
                state.truncated = true
                return "\(event.message) (\(target)); the exit status will be 65."
            case .recordFailed:
                state.recordingStopped = true
                let path = event.parameters["path"].map(String.init(describing:)) ?? ""
                let named = path.isEmpty || event.message.contains(path) ? "" : " (\(path))"
                return "the \(event.message)\(named); playback goes on, and the exit status will be 74."
            case .dnsFailed, .serverConnectFailed, .handshakeFailed:
                guard !state.connected, !state.toldConnectFailure else { break }
                // TXLivePlayer retries a first connection too, and so does liveplay; the person hears why now.
                state.toldConnectFailure = true
                let next = backups > 0 ? " Trying the backup…" : retries > 0 ? " Retrying…" : ""
                return "\(event.message) (\(target)); \(Self.hint(event.code))" + next
            default:
                if event.code.isError { state.lastError = event }
            }
            return nil
        }
        if let tell { log.error("liveplay: " + tell) }
    }

    func onNetStatus(_ status: NetStatus) {
        log.onNetStatus(status)
    }

    /// `--start` was past the end of the media: a value out of range, told with the media's length.
    var startPastTheEnd: String? {
        state.withLock { $0.pastTheEnd }.map { "liveplay: --start: \($0.message) (\(target))." }
    }

    /// The one sentence for stderr when the run ends without having played, or with an error.
    func finalSentence(for outcome: StopReason) -> String? {
        if let failure {
            // A message that names the URL already (an HTTP status for it) does not get it twice.
            let named = failure.message.contains("://") ? "" : " (\(target))"
            return "liveplay: \(failure.message)\(named). \(Self.hint(failure.code))"
                .trimmingCharacters(in: .whitespaces)
        }
        guard !playedMedia else { return nil }
        switch outcome {
        case .duration: return "liveplay: no media played before --duration ran out (\(target))."
        case .played(.ended): return "liveplay: the stream ended without any media (\(target))."
        default: return nil
        }
    }

    /// What to try, for each kind of failure.
    static func hint(_ code: PlayEventCode) -> String {
        switch code {
        case .dnsFailed: "Check the host name."
        case .serverConnectFailed: "Check the host and port, and that the server is running."
        case .handshakeFailed: "Is this an HTTP-FLV or RTMP server?"
        case .fileNotFound: "Check the URL's path or the file name."
        case .serverRefused: "The server refused the stream: check the URL's token, or the headers (--header)."
        case .unplayable: "liveplay plays FLV (HTTP-FLV, RTMP, .flv files) and LAS manifests (.json)."
        case .networkDisconnected: "--retries and --retry-interval set how long liveplay keeps trying."
        case .hevcDecodeFailed: "The HEVC stream cannot be decoded; --no-decode still probes it."
        default: ""
        }
    }
}
