import Foundation
import LivePlay
import LivePlayMPRIS
import Synchronization

/// The window's player on the session bus (MPRIS), so that the desktop's media controls, `playerctl` and the media
/// keys act on it as they do on mpv or VLC: play / pause, next / previous (several URLs, a playlist), seek and set
/// the position (media on demand, time-shift), volume, quit; the title, URL and length in `Metadata`. Without a
/// session bus, one line at `--log-level debug` and nothing else.
final class WindowMPRIS: Sendable {
    let service: MPRISService
    /// The timeline's position in the last state: a state that changes something else (paused, the volume) carries
    /// the position of the last tick, which after a seek is older than the seek's (`Seeked` set that one).
    private let timelinePosition = Mutex<Double?>(nil)

    private init(service: MPRISService) {
        self.service = service
    }

    /// Goes on the bus, or says at debug level why not; `step` moves to the next (+1) or previous (−1) stream.
    static func start(
        player: LivePlayer, stop: StopSignal, title: String, log: EventLog, step: @escaping @Sendable (Int) -> Void
    ) async -> WindowMPRIS? {
        let controls = MPRISService.Controls(
            play: { player.send(.resume) }, pause: { player.send(.pause) },
            playPause: { player.send(.togglePause) },
            // A live stream cannot stop and start again where it was: Stop pauses, as the window's button does.
            stop: { player.send(.pause) }, next: { step(1) }, previous: { step(-1) },
            seek: { player.seek(by: $0) }, setPosition: { player.seek(to: $0) },
            setVolume: { player.send(.volume(Int(($0 * 100).rounded()))) }, quit: { stop.fire(.interrupted) })
        do {
            let service = try await MPRISService(controls: controls)
            service.update {
                $0.title = title
                $0.url = title
            }
            return WindowMPRIS(service: service)
        } catch {
            if log.level <= .debug { log.error("liveplay: no MPRIS on the session bus: \(error.message)") }
            return nil
        }
    }

    /// Several streams or a playlist: next and previous can be asked for.
    func stepsStreams() {
        service.update {
            $0.canGoNext = true
            $0.canGoPrevious = true
        }
    }

    func onStateChange(_ state: PlaybackState) {
        let position: Double? =
            switch state.timeline {
            case .live: nil
            case .onDemand(let position, _), .timeShift(let position, _, _): position
            }
        let moved = timelinePosition.withLock { last in
            defer { last = position }
            return last != position
        }
        service.update { shown in
            shown.status = state.paused || state.phase == .paused ? .paused : .playing
            shown.volume = state.muted ? 0 : Double(state.volume) / 100
            switch state.timeline {
            case .live:
                (shown.canSeek, shown.length, shown.position) = (false, nil, .zero)
            case .onDemand(let position, let duration):
                shown.canSeek = true
                if moved { shown.position = .milliseconds(Int64(position * 1000)) }
                shown.length = duration.map { .milliseconds(Int64($0 * 1000)) }
            case .timeShift(let position, let length, _):
                (shown.canSeek, shown.length) = (true, .milliseconds(Int64(length * 1000)))
                if moved { shown.position = .milliseconds(Int64(position * 1000)) }
            }
        }
    }

    /// A playlist's item (its title and URL, a new track id), and a seek's end (`Seeked`).
    func onPlayEvent(_ event: PlayEvent) {
        switch event.code {
        case .playlistItem:
            let url = event.parameters["url"].map { "\($0)" }
            let title = event.parameters["title"].map { "\($0)" } ?? url.map { ($0 as NSString).lastPathComponent }
            service.update {
                $0.track += 1
                $0.title = title
                $0.url = url
                $0.length = nil
            }
        case .seekDone:
            if case .int(let milliseconds)? = event.parameters["position_ms"] { service.seeked(to: .milliseconds(milliseconds)) }
        default:
            break
        }
    }

    func close() async {
        await service.close()
    }
}
