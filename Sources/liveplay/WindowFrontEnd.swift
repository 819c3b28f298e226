import ArgumentParser
import Foundation
import LivePlay
import LivePlayWindow
import Synchronization

/// `liveplay URL --window`: the picture in a desktop window, the sound through the sound device (the master
/// clock), and the keys and the control bar on the player (README "Watch and listen").
final class WindowFrontEnd: Sendable {
    let window: PlayerWindow
    /// The sound device (nil inside when none opens: the picture still plays, against the monotonic clock), and the
    /// level the audio-only card's meter shows.
    let sound: SoundLevelTap
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
    /// What `n` and `p` do; the front end keeps no copy of what the player is (paused, volume, tracks): the keys send
    /// commands, and the window shows the state the player publishes (``WindowStatus/onStateChange(_:)``).
    private let streamStep = Mutex<(@Sendable (Int) -> Void)?>(nil)
    /// The player on the session bus, once ``goOnTheBus(named:stop:)`` put it there.
    let mpris = Mutex<WindowMPRIS?>(nil)
    /// What the audio-only card shows, and the playlist whose items' titles and posters it takes.
    private let card: Mutex<CardState>
    private struct CardState {
        var audioOnly = false
        var title: String
        /// `--poster`, and the playlist item's own (which comes first) with its address.
        var poster: RGBPicture?
        var item: (url: String, picture: RGBPicture?)?
        var playlist: LivePlaylist?

        var shown: AudioOnlyCard? {
            audioOnly ? AudioOnlyCard(title: title, poster: item?.picture ?? poster) : nil
        }
    }
    /// The item posters to read, in order (nil: the item has none); ``showPosters(transport:)`` reads them.
    private let posterRequests: (stream: AsyncStream<String?>, continuation: AsyncStream<String?>.Continuation) =
        AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))

    /// Opens the window and the sound device; `stop` ends playback on `q`, Escape or closing the window.
    init(
        title: String, player: LivePlayer, stop: StopSignal, log: EventLog, renderMode: RenderMode,
        rotation: RenderRotation, showsCaptions: Bool = false, thumbnailsFrom thumbnailSource: ThumbnailSource? = nil,
        poster: RGBPicture? = nil, cardTitle: String
    ) async throws(WindowError) {
        self.player = player
        self.log = log
        self.thumbnailSource = thumbnailSource
        card = Mutex(CardState(title: cardTitle, poster: poster))
        let actions = LockedActions()
        window = try await PlayerWindow(options: PlayerWindow.Options(title: title, showsCaptions: showsCaptions)) {
            actions.handle($0)
        }
        var device: DeviceAudioSink?
        do {
            device = try DeviceAudioSink { reason in
                log.error("liveplay: no sound: \(reason); the picture plays on liveplay's own clock")
            }
        } catch {
            log.error("liveplay: no sound: \(error.message)")
        }
        sound = SoundLevelTap(device: device) { [window] in window.setSoundLevel($0) }
        if let reason = window.textFallbackReason {
            log.error("liveplay: the window's words are in the built-in font: \(reason)")
        }
        player.setRenderMode(renderMode)
        player.setRenderRotation(rotation)
        actions.set { [self] action in
            if case .quit = action { stop.fire(.interrupted) } else { perform(action) }
        }
    }

    /// `n` / `p` go to `step` with +1 / −1 (a list of streams, ``StreamSwitcher``).
    func switchesStreams(with step: @escaping @Sendable (Int) -> Void) {
        streamStep.withLock { $0 = step }
        mpris.withLock { $0 }?.stepsStreams()
    }

    /// Offers the player on the session bus as MPRIS (``WindowMPRIS``), titled `name`; `stop` ends the run on `Quit`.
    func goOnTheBus(named name: String, stop: StopSignal) async {
        let offered = await WindowMPRIS.start(player: player, stop: stop, title: name, log: log) { [weak self] delta in
            self?.streamStep.withLock { $0 }?(delta)
        }
        if streamStep.withLock({ $0 }) != nil { offered?.stepsStreams() }
        mpris.withLock { $0 = offered }
    }

    /// The card's title and poster follow `playlist`'s items (``itemStarted(at:)``).
    func follows(_ playlist: LivePlaylist) {
        card.withLock { $0.playlist = playlist }
    }

    /// Whether the stream playing is audio-only: the card in place of pictures, and the bar's audio-only layout.
    func showAudioOnly(_ audioOnly: Bool) {
        let shown: AudioOnlyCard?? = card.withLock { state in
            guard state.audioOnly != audioOnly else { return nil }
            state.audioOnly = audioOnly
            return .some(state.shown)
        }
        if let shown { window.setAudioOnly(shown) }
    }

    /// A playlist's item `index` began (9023): the card takes its title, and its poster is asked for.
    func itemStarted(at index: Int) {
        let begun: (item: LivePlaylist.Item, shown: AudioOnlyCard?)? = card.withLock { state in
            guard let items = state.playlist?.items, items.indices.contains(index) else { return nil }
            let item = items[index]
            state.title = item.title ?? (item.url as NSString).lastPathComponent
            return (item, state.shown)
        }
        guard let begun else { return }
        if let shown = begun.shown { window.setAudioOnly(shown) }
        posterRequests.continuation.yield(begun.item.poster)
    }

    /// Reads each item's poster as its item begins (the newest asked for, if several wait), until the run ends; one
    /// that cannot be read is told once and the card shows `--poster` or the title instead.
    func showPosters(transport: TransportOptions) async {
        for await url in posterRequests.stream {
            var picture: RGBPicture?
            if let url, url != card.withLock({ $0.item?.url }) {
                do {
                    picture = try await StillImage.read(url, transport: transport).fitted(within: Self.largestPoster)
                } catch {
                    log.error("liveplay: the item's poster is not shown: \(error.message)")
                }
            } else if url != nil {
                picture = card.withLock { $0.item?.picture }
            }
            let shown = card.withLock { state in
                state.item = url.map { ($0, picture) }
                return state.shown
            }
            window.setAudioOnly(shown)
        }
    }

    /// Posters are scaled to this at most when read: a window's texture, not a camera's full picture.
    static let largestPoster = PictureSize(width: 1920, height: 1080)

    /// `--poster`: read and decoded before the window opens; one that cannot be is a sentence and an exit status.
    static func readPoster(_ url: String, transport: TransportOptions, log: EventLog) async throws -> RGBPicture {
        do {
            return try await StillImage.read(url, transport: transport).fitted(within: largestPoster)
        } catch {
            log.error("liveplay: --poster: \(error.message)")
            throw ExitCode(
                error.code == .badImage ? ExitStatus.dataError
                    : error.code == .sourceNotFound ? ExitStatus.noInput : ExitStatus.unavailable)
        }
    }

    func close() async {
        posterRequests.continuation.finish()
        await mpris.withLock { $0 }?.close()
        thumbnails.withLock { $0 }?.stop()
        await window.close()
        sound.device?.close()
    }

    private func perform(_ action: PlayerWindow.Action) {
        switch action {
        case .togglePause: player.send(.togglePause)
        case .toggleMute: player.send(.toggleMute)
        case .volume(let delta): player.send(.changeVolume(by: delta))
        case .setVolume(let volume): player.send(.volume(volume))
        case .seek(let seconds):
            // Media on demand, or a time-shift window (seconds from its start); a live stream ignores it.
            player.seek(to: .milliseconds(Int64((seconds * 1000).rounded())))
        case .seekBy(let seconds):
            player.seek(by: .milliseconds(Int64((seconds * 1000).rounded())))
        case .mode(let mode):
            player.setMode(mode)
        case .goLive:
            player.goToLiveEdge()
        case .rotate: player.send(.rotateClockwise)
        case .snapshot:
            saveSnapshot()
        case .nextStream:
            streamStep.withLock { $0 }?(1)
        case .previousStream:
            streamStep.withLock { $0 }?(-1)
        case .nextVideoTrack, .nextAudioTrack:
            let kind: MediaKind = action == .nextVideoTrack ? .video : .audio
            if let next = player.playbackState.nextTrack(kind) { player.selectTrack(kind, next) }
        case .nextRendition:
            if let next = player.playbackState.nextRendition { try? player.selectRendition(next) }
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

/// Forwards to the run's report, and shows in the window what the player is: why the picture is frozen, the control
/// bar's button, slider and seek bar from its published state, the overlay from its net status.
final class WindowStatus: LivePlayListener, Sendable {
    private let report: RunReport
    private let window: PlayerWindow
    private let frontEnd: WindowFrontEnd

    init(_ report: RunReport, frontEnd: WindowFrontEnd) {
        self.report = report
        window = frontEnd.window
        self.frontEnd = frontEnd
    }

    func onPlayEvent(_ event: PlayEvent) {
        report.onPlayEvent(event)
        frontEnd.mpris.withLock { $0 }?.onPlayEvent(event)
        if event.code == .playlistItem, case .int(let index)? = event.parameters["index"] {
            frontEnd.itemStarted(at: Int(index))
        }
    }

    func onNetStatus(_ status: NetStatus) {
        report.onNetStatus(status)
        window.setOverlay(Self.overlay(status))
    }

    /// The play / pause button, the volume slider and the mute mark follow what the player did, whoever asked (a seek
    /// while paused resumes); the seek bar follows its timeline.
    func onStateChange(_ state: PlaybackState) {
        window.setStatus(Self.status(state))
        window.setPlayback(paused: state.paused, volume: state.volume)
        window.setMuted(state.muted)
        window.setTimeline(Self.timeline(state.timeline))
        window.setRendition(state.renditionLabel)
        // Audio-only once playback began without a keyframe (PLAY_BEGIN on the first sound); kept through the next
        // item's or the reconnect's start until it is known again.
        if let startup = state.startup { frontEnd.showAudioOnly(startup.firstKeyframe == nil) }
        frontEnd.mpris.withLock { $0 }?.onStateChange(state)
    }

    /// Why the picture is frozen, on it: nothing while it plays, nor while the first connection is made.
    static func status(_ state: PlaybackState) -> String? {
        switch state.phase {
        case .connecting: state.startup == nil ? nil : "reconnecting…"
        case .loading: "loading…"
        case .paused: "paused"
        case .playing: nil
        }
    }

    /// The control bar's layout: on demand with a position (and a duration once known), a time-shift window from its
    /// start (0) to its length, or live.
    static func timeline(_ timeline: PlaybackState.Timeline) -> PlayerWindow.Timeline {
        switch timeline {
        case .live: .live
        case .onDemand(let position, let duration): .onDemand(position: position, duration: duration ?? 0)
        case .timeShift(let position, let length, let atLiveEdge):
            .timeShift(position: position, start: 0, end: length, atLiveEdge: atLiveEdge)
        }
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
