import Foundation
import LivePlay
import LivePlayWindow
import Synchronization

/// `liveplay URL --window`: the picture in a desktop window, the sound through the sound device (the master
/// clock), and the keys and the control bar on the player (README "Watch and listen").
final class WindowFrontEnd: Sendable {
    let window: PlayerWindow
    /// nil when no sound device opens: the picture still plays, against the monotonic clock.
    let sound: DeviceAudioSink?
    private let player: LivePlayer
    private let log: EventLog
    /// The file the seek bar previews, if any (the time-shift window comes first, when on).
    private let thumbnailSource: ThumbnailSource?

    /// Where a seek bar's thumbnails come from, besides the time-shift window.
    enum ThumbnailSource {
        case file(String)
        case http(String)
    }
    private let thumbnails = Mutex<ThumbnailReader?>(nil)
    /// What the keys have set; the player is told outside the lock.
    private let state: Mutex<State>

    private struct State {
        var paused = false
        var muted = false
        var volume = 100
        var rotation: RenderRotation
        var streamStep: (@Sendable (Int) -> Void)?
        var tracks = TrackRing()
    }

    /// Opens the window and the sound device; `stop` ends playback on `q`, Escape or closing the window.
    init(
        title: String, player: LivePlayer, stop: StopSignal, log: EventLog, renderMode: RenderMode,
        rotation: RenderRotation, showsCaptions: Bool = false, thumbnailsFrom thumbnailSource: ThumbnailSource? = nil
    ) async throws(WindowError) {
        self.player = player
        self.log = log
        self.thumbnailSource = thumbnailSource
        state = Mutex(State(rotation: rotation))
        let actions = LockedActions()
        window = try await PlayerWindow(options: PlayerWindow.Options(title: title, showsCaptions: showsCaptions)) {
            actions.handle($0)
        }
        do {
            sound = try DeviceAudioSink { reason in
                log.error("liveplay: no sound: \(reason); the picture plays on liveplay's own clock")
            }
        } catch {
            log.error("liveplay: no sound: \(error.message)")
            sound = nil
        }
        if let reason = window.textFallbackReason {
            log.error("liveplay: the window's words are in the built-in font: \(reason)")
        }
        player.setRenderMode(renderMode)
        player.setRenderRotation(rotation)
        actions.set { [self] action in
            if case .quit = action { stop.fire(.interrupted) } else { perform(action) }
        }
    }

    /// A multitrack stream's tracks, from `LIVEPLAY_EVT_TRACKS_CHANGED`: what `v` and `a` step through.
    func tracksChanged(_ event: PlayEvent) {
        state.withLock { $0.tracks = TrackRing(event) }
    }

    /// The player paused or resumed (9007 / 9008), whoever asked: a seek while paused resumes, and the control bar's
    /// button follows what the player did, not only the keys.
    func playbackChanged(paused: Bool) {
        state.withLock { $0.paused = paused }
        showPlayback()
    }

    /// `n` / `p` go to `step` with +1 / −1 (a list of streams, ``StreamSwitcher``).
    func switchesStreams(with step: @escaping @Sendable (Int) -> Void) {
        state.withLock { $0.streamStep = step }
    }

    func close() async {
        thumbnails.withLock { $0 }?.stop()
        await window.close()
        sound?.close()
    }

    private func perform(_ action: PlayerWindow.Action) {
        switch action {
        case .togglePause:
            let pause = state.withLock {
                $0.paused.toggle()
                return $0.paused
            }
            if pause { player.pause() } else { player.resume() }
            showPlayback()
        case .toggleMute:
            let muted = state.withLock {
                $0.muted.toggle()
                return $0.muted
            }
            player.setMute(muted)
            window.setMuted(muted)
        case .volume(let delta):
            player.setVolume(state.withLock {
                $0.volume = min(100, max(0, $0.volume + delta))
                return $0.volume
            })
            showPlayback()
        case .setVolume(let volume):
            player.setVolume(state.withLock {
                $0.volume = min(100, max(0, volume))
                return $0.volume
            })
            showPlayback()
        case .seek(let seconds):
            // Media on demand, or a time-shift window (seconds from its start); a live stream ignores it.
            player.seek(to: .milliseconds(Int64((seconds * 1000).rounded())))
        case .seekBy(let seconds):
            player.seek(by: .milliseconds(Int64((seconds * 1000).rounded())))
        case .mode(let mode):
            player.setMode(mode)
        case .goLive:
            player.goToLiveEdge()
        case .rotate:
            player.setRenderRotation(state.withLock {
                $0.rotation = RenderRotation(rawValue: ($0.rotation.rawValue + 90) % 360) ?? .rotation0
                return $0.rotation
            })
        case .snapshot:
            saveSnapshot()
        case .nextStream:
            state.withLock { $0.streamStep }?(1)
        case .previousStream:
            state.withLock { $0.streamStep }?(-1)
        case .nextVideoTrack, .nextAudioTrack:
            let kind: MediaKind = action == .nextVideoTrack ? .video : .audio
            if let next = state.withLock({ $0.tracks.next(kind) }) { player.selectTrack(kind, next) }
        case .preview(let seconds?):
            thumbnailReader()?.request(at: seconds, size: PlayerWindow.thumbnailSize)
        case .preview(nil):
            break
        case .toggleOverlay, .toggleCaptions, .quit:
            break
        }
    }

    /// The seek bar's thumbnail reader, started on the first hover: of the time-shift window, the local file or
    /// the file over HTTP(S). A live stream's bar has no seek bar.
    private func thumbnailReader() -> ThumbnailReader? {
        let configuration = player.configuration
        guard thumbnailSource != nil || configuration.timeShift != nil else { return nil }
        return thumbnails.withLock { reader in
            if reader == nil {
                let deliver: ThumbnailReader.Delivery = { [window] seconds, picture in
                    window.setThumbnail(picture, seconds: seconds)
                }
                reader =
                    switch (configuration.timeShift, thumbnailSource) {
                    case (nil, .file(let path)?): ThumbnailReader(path: path, deliver: deliver)
                    case (nil, .http(let url)?):
                        ThumbnailReader(url: url, options: configuration.transport, deliver: deliver)
                    default: player.timeShiftThumbnails(deliver: deliver)
                    }
            }
            return reader
        }
    }

    /// The control bar's play / pause button and volume slider follow the keys and the bar's own clicks.
    private func showPlayback() {
        let (paused, volume) = state.withLock { ($0.paused, $0.volume) }
        window.setPlayback(paused: paused, volume: volume)
    }

    /// `s`: the picture shown now, as `liveplay-snapshot-N.png` in the working directory.
    private func saveSnapshot() {
        guard let frame = player.snapshot() else { return }
        let path = FileManager.default.currentDirectoryPath
            + "/liveplay-snapshot-\(Int(Date().timeIntervalSince1970 * 1000)).png"
        let png: [UInt8]
        do {
            png = try PNGEncoder().encode(try frame.rgbPicture())
        } catch {
            log.error("liveplay: the snapshot could not be made: \(error)")
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(png)) else {
            log.error("liveplay: the snapshot could not be written to \(path): \(String(cString: strerror(errno)))")
            return
        }
        log.snapshot(path: path)
    }
}

/// The key handler, set once the front end exists (the window is opened first).
private final class LockedActions: Sendable {
    private let handler = Mutex<(@Sendable (PlayerWindow.Action) -> Void)?>(nil)

    func set(_ handler: @escaping @Sendable (PlayerWindow.Action) -> Void) { self.handler.withLock { $0 = handler } }
    func handle(_ action: PlayerWindow.Action) { handler.withLock { $0 }?(action) }
}

/// Forwards to the run's report, and tells the window when the picture is frozen and why.
final class WindowStatus: LivePlayListener, Sendable {
    private let report: RunReport
    private let window: PlayerWindow

    private let tracksChanged: @Sendable (PlayEvent) -> Void
    private let playbackChanged: @Sendable (Bool) -> Void
    /// `--timeshift`: the bar's layout follows the progress events' window, not the net status.
    private let timeShift: Bool

    init(_ report: RunReport, frontEnd: WindowFrontEnd, timeShift: Bool = false) {
        self.report = report
        window = frontEnd.window
        tracksChanged = { [weak frontEnd] in frontEnd?.tracksChanged($0) }
        playbackChanged = { [weak frontEnd] in frontEnd?.playbackChanged(paused: $0) }
        self.timeShift = timeShift
    }

    func onPlayEvent(_ event: PlayEvent) {
        report.onPlayEvent(event)
        if event.code == .tracksChanged { tracksChanged(event) }
        if timeShift, event.code == .playProgress, let timeline = Self.timeShiftTimeline(event) {
            window.setTimeline(timeline)
        }
        switch event.code {
        case .playLoading: window.setStatus("loading…")
        case .reconnect: window.setStatus("reconnecting…")
        case .paused:
            window.setStatus("paused")
            playbackChanged(true)
        case .resumed:
            window.setStatus(nil)
            playbackChanged(false)
        case .playBegin: window.setStatus(nil)
        default: break
        }
    }

    func onNetStatus(_ status: NetStatus) {
        report.onNetStatus(status)
        window.setOverlay(Self.overlay(status))
        if !timeShift { window.setTimeline(Self.timeline(status)) }
    }

    /// A time-shifted stream's layout: the window from its start (0) to its length, and whether playback follows the
    /// live edge (under the latency mode) or plays behind it.
    static func timeShiftTimeline(_ event: PlayEvent) -> PlayerWindow.Timeline? {
        func seconds(_ key: String) -> Double? {
            switch event.parameters[key] {
            case .double(let value)?: value
            case .int(let value)?: Double(value)
            default: nil
            }
        }
        guard let position = seconds("EVT_PLAY_PROGRESS"), let length = seconds("EVT_PLAY_DURATION"),
            case .bool(let atLiveEdge)? = event.parameters["live_edge"]
        else { return nil }
        return .timeShift(position: position, start: 0, end: length, atLiveEdge: atLiveEdge)
    }

    /// The control bar's layout: on demand with a position (and a duration once known), else live.
    static func timeline(_ status: NetStatus) -> PlayerWindow.Timeline {
        guard let position = status.positionMilliseconds else { return .live }
        return .onDemand(position: Double(position) / 1000, duration: Double(status.durationMilliseconds ?? 0) / 1000)
    }

    /// The figures `i` shows over the picture, from the net status of the last second.
    static func overlay(_ status: NetStatus) -> [String] {
        let cache = String(format: "CACHE %.2f S", Double(status.cacheMilliseconds) / 1000)
        let first: String
        if let position = status.positionMilliseconds {
            // Media on demand: where it is, not a latency.
            let duration = status.durationMilliseconds.map { StatusLine.clock(Double($0) / 1000) } ?? "?"
            first = "\(StatusLine.clock(Double(position) / 1000)) / \(duration)  \(cache)"
        } else {
            let latency = Double(status.endToEndLatencyMilliseconds ?? status.latencyMilliseconds) / 1000
            first = String(format: "LATENCY %.2f S  ", latency) + cache
        }
        return [
            first,
            String(format: "%.0f FPS  %d KBIT/S", status.videoFPS, status.videoBitrateKbps + status.audioBitrateKbps),
            String(format: "%@  RATE %.2f  STUTTERS %d", status.mode.uppercased(), status.rate, status.stutters),
        ]
    }
}

/// The tracks of each kind and the one playing, as the last `LIVEPLAY_EVT_TRACKS_CHANGED` listed them.
struct TrackRing {
    private var ids: [MediaKind: [UInt8]] = [:]
    private var playing: [MediaKind: UInt8] = [:]

    init() {}

    init(_ event: PlayEvent) {
        for kind in MediaKind.allCases {
            ids[kind] = event.parameters["\(kind.rawValue)_tracks"]?.description.split(separator: " ").compactMap { UInt8($0) }
            if case .int(let id)? = event.parameters["\(kind.rawValue)_track"] { playing[kind] = UInt8(clamping: id) }
        }
    }

    /// The track after the one playing, round the list; nil when there is no other.
    func next(_ kind: MediaKind) -> UInt8? {
        guard let list = ids[kind], list.count > 1 else { return nil }
        let index = playing[kind].flatMap(list.firstIndex(of:)) ?? -1
        return list[(index + 1) % list.count]
    }
}
