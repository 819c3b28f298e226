// window-player URL [SECONDS] [TIMESHIFT_MINUTES]
//
// A front end of its own on the public API: a LivePlayer whose pictures go to a PlayerWindow and whose sound
// goes to the sound device (DeviceAudioSink, then the player's master clock), a listener that puts what the
// player reports in the window's title and on stdout, and a few keys: space pauses and resumes, m mutes, left /
// right go 10 s back / on, l goes live, q (or closing the window) quits; the window's control bar sends the same.
// With TIMESHIFT_MINUTES a live stream keeps that much on disk to go back in. The keys send commands
// (`player.send(.togglePause)`) and the bar shows the state the player publishes (`onStateChange`): the sample keeps
// no copy of paused or muted. The seek bar of a file (local, or over HTTP with a keyframe index) and of the time-shift
// window show the keyframe under the pointer (ThumbnailReader, LivePlayer.timeShiftThumbnails).
// `liveplay --window` is the same thing with every key; this is the smallest one.
import Foundation
import LivePlay
import LivePlayWindow

/// Writes a line at once (stdout is block-buffered when piped).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// What the player reports: a line per event, and on the window what the player is (why the picture is frozen, the
/// control bar).
final class TitleListener: LivePlayListener {
    let window: PlayerWindow

    init(window: PlayerWindow) { self.window = window }

    func onPlayEvent(_ event: PlayEvent) {
        say("\(event.code.rawValue) \(event.code.symbol): \(event.message)")
    }

    /// The window follows what the player is: why the picture is frozen, the play / pause button, volume and mute,
    /// and the seek bar (with time-shift, the window kept and whether playback is live).
    func onStateChange(_ state: PlaybackState) {
        window.setStatus(state.phase == .loading || state.phase == .paused ? state.phase.rawValue : nil)
        window.setPlayback(paused: state.paused, volume: state.volume)
        window.setMuted(state.muted)
        switch state.timeline {
        case .live: window.setTimeline(.live)
        case .onDemand(let position, let duration): window.setTimeline(.onDemand(position: position, duration: duration ?? 0))
        case .timeShift(let position, let length, let live):
            window.setTimeline(.timeShift(position: position, start: 0, end: length, atLiveEdge: live))
        }
    }

    func onNetStatus(_ status: NetStatus) {
        say("latency \(status.latencyMilliseconds) ms, \(Int(status.videoFPS)) fps, rate \(status.rate)")
    }
}

/// What the keys do, from the window's thread.
final class Keys: @unchecked Sendable {
    private let lock = NSLock()
    /// A local file's seek bar previews, on the reader's own thread.
    private var thumbnails: ThumbnailReader?
    let quit = AsyncStream<Void>.makeStream()

    func preview(with reader: ThumbnailReader) { lock.withLock { thumbnails = reader } }

    func handle(_ action: PlayerWindow.Action, player: LivePlayer) {
        switch action {
        case .togglePause: player.send(.togglePause)
        case .toggleMute: player.send(.toggleMute)
        case .seekBy(let seconds):
            player.seek(by: .milliseconds(Int64(seconds * 1000)))
        case .seek(let seconds):
            player.seek(to: .milliseconds(Int64(seconds * 1000)))
        case .goLive:
            player.resumeLive()
        case .preview(let seconds?):
            // The pointer rests on the seek bar: the window shows the picture once the reader has it.
            lock.withLock { thumbnails }?.request(at: seconds, size: PlayerWindow.thumbnailSize)
        case .quit:
            lock.withLock { thumbnails }?.stop()
            quit.continuation.finish()
        default:
            break
        }
    }
}

let arguments = CommandLine.arguments.dropFirst()
guard let url = arguments.first else {
    FileHandle.standardError.write(Data("usage: window-player URL [SECONDS] [TIMESHIFT_MINUTES]\n".utf8))
    exit(64)
}
let seconds = arguments.dropFirst().first.flatMap { Double($0) } ?? 3600
if let reason = PlayerWindow.displayUnavailableReason() {
    FileHandle.standardError.write(Data("window-player: \(reason)\n".utf8))
    exit(69)
}

var configuration = LivePlayConfiguration()
if let minutes = arguments.dropFirst(2).first.flatMap({ Double($0) }) {
    configuration.timeShift = TimeShiftRing.Options(window: .seconds(minutes * 60))
}
let player = LivePlayer(configuration: configuration)
let keys = Keys()
let window = try await PlayerWindow(options: .init(title: "window-player — \(Redaction.url(url))")) { action in
    keys.handle(action, player: player)
}
let deliver: ThumbnailReader.Delivery = { seconds, picture in window.setThumbnail(picture, seconds: seconds) }
if configuration.timeShift != nil {
    keys.preview(with: player.timeShiftThumbnails(deliver: deliver))
} else if !url.contains("://") {
    keys.preview(with: ThumbnailReader(path: url, deliver: deliver))
} else if url.hasPrefix("http") {
    // A file over HTTP(S) with a keyframe index; a live stream's bar has no seek bar to ask.
    keys.preview(with: ThumbnailReader(url: url, options: configuration.transport, deliver: deliver))
}
let sound = try? DeviceAudioSink()
player.setVideoSink(window)
player.setAudioSink(sound)
let listener = TitleListener(window: window)
player.listener = listener

try player.startPlay(url)
// Until q, the window closed, or SECONDS.
await withTaskGroup(of: Void.self) { group in
    group.addTask { for await _ in keys.quit.stream {} }
    group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
    await group.next()
    group.cancelAll()
}
await player.stopPlay()
await window.close()
sound?.close()
say("window-player: stopped")
