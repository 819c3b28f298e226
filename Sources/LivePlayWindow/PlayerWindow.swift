internal import CLazyLibraries
internal import CSDL2
import Foundation
public import LivePlay
import Synchronization

/// What went wrong opening the window or the sound device.
public struct WindowError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// No display to open a window on (neither `DISPLAY` nor `WAYLAND_DISPLAY`), or SDL could not use it.
        case noDisplay = "no_display"
        case sound
        /// SDL2 or Xlib is not installed (liveplay loads them when a window or the sound device first opens).
        case missingLibrary = "missing_library"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// Loads SDL2 and Xlib, which the process does not load at start (CLazyLibraries): before any SDL call.
    static func loadSDL() throws(WindowError) {
        for library in [LIVEPLAY_LAZY_SDL2, LIVEPLAY_LAZY_X11] {
            var text = [CChar](repeating: 0, count: 512)
            guard liveplay_lazy_load(library, &text, text.count) != 0 else { continue }
            let reason = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw WindowError(.missingLibrary, "\(reason) (Debian: apt-get install libsdl2-2.0-0)")
        }
    }

    /// SDL's last error, after `what`.
    static func sdl(_ code: Code, _ what: String) -> WindowError {
        WindowError(code, "\(what): \(String(cString: SDL_GetError()))")
    }
}

/// A desktop window that shows what the player presents: a ``VideoSink`` whose pictures are drawn by SDL2 on a
/// thread of its own, scaled by the frame's render mode and rotation, with live controls on the keyboard and the
/// mouse: a control bar along the bottom that shows when the mouse moves (``Timeline`` chooses its layout); a click
/// elsewhere on the picture pauses or resumes, a double-click toggles fullscreen.
///
/// The player calls ``present(_:timing:)`` at each picture's presentation time; the picture (libavcodec's
/// buffer, no copy) goes to the window thread, which uploads its planes as they are — a YUV texture for
/// `yuv420p`/`yuvj420p` and `nv12`, converted to RGB only for other formats — and draws it at once. SDL objects
/// are touched on the window thread only; nothing waits on it blocked: the opening and ``close()`` are awaited.
public final class PlayerWindow: VideoSink, Sendable {
    /// What a key asks for; the front end carries it out on the player (the window does `f` itself).
    public enum Action: Sendable, Hashable {
        case togglePause, toggleMute
        /// Up / down: ±10 volume.
        case volume(delta: Int)
        /// The control bar's volume slider: 0–100.
        case setVolume(Int)
        /// The control bar's seek bar: to this many seconds from the start (on demand) or, with time-shift, to this
        /// point of the ``Timeline/timeShift(position:start:end:atLiveEdge:)`` window.
        case seek(seconds: Double)
        /// Left / right: this many seconds back (negative) or on from where playback is (a file, a time-shift window).
        case seekBy(seconds: Double)
        /// The pointer rests on the seek bar at this time (as ``seek(seconds:)`` takes it), or left it (nil): a front
        /// end that can answers with ``PlayerWindow/setThumbnail(_:seconds:)``.
        case preview(seconds: Double?)
        case mode(LatencyMode)
        /// `l`, or the control bar's `GO LIVE`: to the live edge now.
        case goLive
        /// `s`: a PNG of the picture shown.
        case snapshot
        /// `r`: the next quarter turn.
        case rotate
        /// `i`: the on-screen figures on or off.
        case toggleOverlay
        /// `c` or the control bar's CC: the captions on or off (the window draws them itself).
        case toggleCaptions
        /// `n` / `p`: the next or the previous stream of a list.
        case nextStream, previousStream
        /// `v` / `a`: the next video or audio track of a multitrack stream.
        case nextVideoTrack, nextAudioTrack
        /// `b` or the control bar's rendition button: the next of a LAS manifest's renditions (adaptation first, then
        /// each rendition by bitrate, then adaptation again).
        case nextRendition
        /// `q`, Escape, or the window closed.
        case quit
    }

    public struct Options: Sendable {
        public var title: String
        /// The window's first size (resizable afterwards).
        public var size: PictureSize
        public var fullscreen: Bool
        /// The captions that come with the pictures are shown from the start (`c` toggles them).
        public var showsCaptions: Bool

        /// - Parameter size: 960×540 when not given.
        public init(title: String, size: PictureSize? = nil, fullscreen: Bool = false, showsCaptions: Bool = false) {
            self.title = title
            self.size = size ?? PictureSize(width: 960, height: 540)
            self.fullscreen = fullscreen
            self.showsCaptions = showsCaptions
        }
    }

    /// Why no window can open here, or nil: checked before SDL is touched, so headless use fails at once.
    public static func displayUnavailableReason(environment: [String: String]? = nil) -> String? {
        let environment = environment ?? ProcessInfo.processInfo.environment
        let display = environment["DISPLAY"] ?? ""
        let wayland = environment["WAYLAND_DISPLAY"] ?? ""
        guard display.isEmpty, wayland.isEmpty else { return nil }
        return "no display: neither DISPLAY nor WAYLAND_DISPLAY is set (for a picture without a desktop, write "
            + "frames with --video-out FILE or --video-out - | ffplay -)"
    }

    private let options: Options
    private let onAction: @Sendable (Action) -> Void
    /// The mailbox the callers fill and the window thread empties on each turn of its event loop.
    private let state: Mutex<State>

    private struct State {
        var pending: (frame: VideoFrame, timing: FrameTiming)?
        var statusText: String?
        var muted = false
        /// What the control bar shows besides `muted`.
        var timeline = Timeline.live
        var paused = false
        var volume = 100
        /// The rendition button's label; nil: no manifest, no button.
        var rendition: String?
        var titleText: String
        var overlayLines: [String] = []
        var readBackRequests: [CheckedContinuation<RGBPicture?, Never>] = []
        var closing = false
        /// The window thread has ended (or never opened the window), and with it whoever waited in ``close()``.
        var ended = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        /// SDL's user event that wakes the window thread (registered on it).
        var wakeEvent: UInt32 = 0
        var rendererName = ""
        var textFallbackReason: String?
        /// The picture shown over the seek bar where the pointer rests, and the time it was asked for.
        var thumbnail: (picture: RGBPicture, seconds: Double)?
        /// What shows in place of pictures while the stream is audio-only; nil: pictures.
        var audioOnly: AudioOnlyCard?
        /// The sound's level for the card's meter, dBFS.
        var soundLevel = -Double.infinity
    }

    /// SDL's name for the renderer drawing the window (`opengl` where there is GL, else `software`).
    public var rendererName: String { state.withLock { $0.rendererName } }

    /// Why the window's words are drawn in the built-in 5×7 font rather than a TrueType one (no SDL2_ttf, no font
    /// file), or nil when they are not.
    public var textFallbackReason: String? { state.withLock { $0.textFallbackReason } }

    /// Opens the window (on its thread) and returns once it is up, or throws why it could not open. The window
    /// thread holds the window until ``close()``.
    public init(options: Options, onAction: @escaping @Sendable (Action) -> Void) async throws(WindowError) {
        if let reason = Self.displayUnavailableReason() { throw WindowError(.noDisplay, reason) }
        self.options = options
        self.onAction = onAction
        state = Mutex(State(titleText: options.title))
        let failure: WindowError? = await withCheckedContinuation { started in
            let thread = Thread { [self] in
                nameThread("liveplay-window")
                let renderer: WindowRenderer
                do throws(WindowError) {
                    renderer = try WindowRenderer(options: options)
                } catch {
                    threadEnded()
                    started.resume(returning: error)
                    return
                }
                state.withLock {
                    $0.wakeEvent = renderer.wakeEvent
                    $0.rendererName = renderer.name
                    $0.textFallbackReason = renderer.text.fallbackReason
                }
                started.resume(returning: nil)
                run(renderer)
                renderer.close()
                threadEnded()
            }
            thread.start()
        }
        if let failure { throw failure }
    }

    public func present(_ frame: VideoFrame, timing: FrameTiming) {
        let event = state.withLock {
            $0.pending = (frame, timing)
            return $0.wakeEvent
        }
        Self.wake(event)
    }

    /// Names what the window shows (another stream after a switch); the status still follows it.
    public func setTitle(_ title: String) {
        let event = state.withLock {
            $0.titleText = title
            return $0.wakeEvent
        }
        Self.wake(event)
    }

    /// Whether the sound is muted: the window shows it on the picture (top right), not only the player knows.
    public func setMuted(_ muted: Bool) {
        let event = state.withLock {
            $0.muted = muted
            return $0.wakeEvent
        }
        Self.wake(event)
    }

    /// What is playing, for the control bar: its layout, the time and the seek bar (once a second is enough).
    public func setTimeline(_ timeline: Timeline) {
        let event = state.withLock {
            $0.timeline = timeline
            return $0.wakeEvent
        }
        Self.wake(event)
    }

    /// Whether playback is paused, and the volume (0–100): the control bar's play / pause button and slider.
    public func setPlayback(paused: Bool, volume: Int) {
        let event = state.withLock {
            ($0.paused, $0.volume) = (paused, volume)
            return $0.wakeEvent
        }
        Self.wake(event)
    }

    /// What the control bar's rendition button says (`AUTO 240P`, `720P`), for a stream played from a LAS manifest;
    /// nil: no button.
    public func setRendition(_ label: String?) {
        let event = state.withLock {
            $0.rendition = label
            return $0.wakeEvent
        }
        Self.wake(event)
    }

    /// The picture for ``Action/preview(seconds:)`` at `seconds` (nil: none), shown over the seek bar while the
    /// pointer rests there: at most ``thumbnailSize``.
    public func setThumbnail(_ picture: RGBPicture?, seconds: Double) {
        let event = state.withLock {
            $0.thumbnail = picture.map { ($0, seconds) }
            return $0.wakeEvent
        }
        Self.wake(event)
    }

    /// Audio-only (a stream or an item without video): `card` is shown in place of pictures, and the control bar takes
    /// its audio-only layout, always shown; nil: pictures again.
    public func setAudioOnly(_ card: AudioOnlyCard?) {
        let event = state.withLock {
            $0.audioOnly = card
            return $0.wakeEvent
        }
        Self.wake(event)
    }

    /// The sound's level now, in dBFS (−∞ for silence): the card's meter (``SoundLevelTap`` measures it).
    public func setSoundLevel(_ decibels: Double) {
        let event: UInt32? = state.withLock {
            guard $0.soundLevel != decibels else { return nil }
            $0.soundLevel = decibels
            return $0.audioOnly == nil ? nil : $0.wakeEvent
        }
        if let event { Self.wake(event) }
    }

    /// The largest thumbnail the window shows over its seek bar.
    public static let thumbnailSize = PictureSize(width: 192, height: 108)

    /// A word the window shows on the picture (top centre) and after its title (“loading…”, “reconnecting…”,
    /// “paused”), or nil for none: seen in fullscreen and without a window manager too.
    public func setStatus(_ text: String?) {
        let event = state.withLock {
            $0.statusText = text
            return $0.wakeEvent
        }
        Self.wake(event)
    }

    /// The figures the window draws over the picture while its overlay is on (`i` toggles it): a few short lines
    /// (upper-case letters, digits and `. : / - % ( )` if they are to read alike in the built-in fallback font).
    public func setOverlay(_ lines: [String]) {
        let event = state.withLock {
            $0.overlayLines = lines
            return $0.wakeEvent
        }
        Self.wake(event)
    }

    /// What the window shows now, read back from the renderer (RGB, the window's size).
    public func readBack() async -> RGBPicture? {
        await withCheckedContinuation { continuation in
            let event: UInt32? = state.withLock { state in
                guard !state.closing else { return nil }
                state.readBackRequests.append(continuation)
                return state.wakeEvent
            }
            if let event { Self.wake(event) } else { continuation.resume(returning: nil) }
        }
    }

    /// Closes the window and returns once its thread has ended (a second call returns at once).
    public func close() async {
        await withCheckedContinuation { (closed: CheckedContinuation<Void, Never>) in
            let event: UInt32? = state.withLock { state in
                guard !state.closing else { return nil }
                state.closing = true
                guard !state.ended else { return nil }
                state.closeWaiters.append(closed)
                return state.wakeEvent
            }
            if let event { Self.wake(event) } else { closed.resume() }
        }
    }

    /// The window thread's last step: whoever waits in ``close()`` returns.
    private func threadEnded() {
        let waiters = state.withLock { state in
            state.ended = true
            defer { state.closeWaiters = [] }
            return state.closeWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private static func wake(_ type: UInt32) {
        guard type != 0 else { return }
        var event = SDL_Event()
        event.type = type
        SDL_PushEvent(&event)
    }

    /// A click on the picture waits this long for a second one: a double-click toggles fullscreen and does not also
    /// pause and resume (SDL counts clicks within the same time, ``WindowRenderer``).
    static let doubleClickTime = Duration.milliseconds(300)

    /// The window thread: events and drawing until closed.
    private func run(_ renderer: WindowRenderer) {
        var event = SDL_Event()
        var fullscreen = options.fullscreen
        /// When a single click becomes a pause / resume, unless a second click comes first.
        var pendingClick: ContinuousClock.Instant?
        /// The control bar's time: from the window's start (its hiding is measured on it).
        let start = ContinuousClock.now
        func carryOut(_ effects: [ControlBar.Effect]) {
            for effect in effects {
                switch effect {
                case .action(let action): onAction(action)
                case .toggleFullscreen:
                    fullscreen.toggle()
                    renderer.setFullscreen(fullscreen)
                case .toggleCaptions:
                    renderer.captionsVisible.toggle()
                    onAction(.toggleCaptions)
                }
            }
        }
        while true {
            var barChanged = false
            if SDL_WaitEventTimeout(&event, 100) != 0 {
                repeat {
                    let now = ContinuousClock.now - start
                    if let action = WindowRenderer.action(for: event) { onAction(action) }
                    var clicks: Int?
                    switch WindowRenderer.pointer(event) {
                    case .press(let x, let y, let count)?:
                        switch renderer.bar.press(atX: x, y: y, in: renderer.size, at: now) {
                        case .bar(let effects):
                            carryOut(effects)
                            barChanged = true
                        case .picture:
                            clicks = count
                        }
                    case .motion(let x, let y)?:
                        let (dragging, hover) = (renderer.bar.isDragging, renderer.bar.hover?.seconds)
                        carryOut(renderer.bar.motion(toX: x, y: y, in: renderer.size, at: now))
                        barChanged = barChanged || dragging || renderer.bar.hover?.seconds != hover
                    case .release?:
                        carryOut(renderer.bar.release(at: now))
                        barChanged = true
                    case .left?:
                        carryOut(renderer.bar.pointerLeft())
                        barChanged = true
                    case nil:
                        if event.type == SDL_KEYDOWN.rawValue { renderer.bar.activity(at: now) }
                    }
                    switch clicks {
                    case 1?:
                        pendingClick = .now + Self.doubleClickTime
                    case let clicks? where clicks >= 2:
                        pendingClick = nil
                        fullscreen.toggle()
                        renderer.setFullscreen(fullscreen)
                    default:
                        break
                    }
                    if renderer.isOverlayKey(event) {
                        renderer.overlayVisible.toggle()
                        renderer.redraw()
                    }
                    if renderer.isHelpKey(event) {
                        renderer.helpVisible.toggle()
                        renderer.redraw()
                    }
                    if renderer.isCaptionsKey(event) {
                        renderer.captionsVisible.toggle()
                        renderer.redraw()
                    }
                    if renderer.isFullscreenKey(event) {
                        fullscreen.toggle()
                        renderer.setFullscreen(fullscreen)
                    }
                    if renderer.needsRedraw(event) { renderer.redraw() }
                } while SDL_PollEvent(&event) != 0
            }
            if let due = pendingClick, ContinuousClock.now >= due {
                pendingClick = nil
                onAction(.togglePause)
            }
            let (frame, status, muted, overlay, requests, isClosing, playback, thumbnail, audio) = state.withLock {
                state in
                defer {
                    state.pending = nil
                    state.readBackRequests = []
                }
                return (
                    state.pending, (state.titleText, state.statusText), state.muted, state.overlayLines,
                    state.readBackRequests, state.closing,
                    (state.timeline, state.paused, state.volume, state.rendition), state.thumbnail,
                    (state.audioOnly, state.soundLevel)
                )
            }
            if audio.0 != renderer.audioOnly || audio.1 != renderer.soundLevel {
                let redraws = audio.0 != renderer.audioOnly || (audio.0 != nil && audio.0?.poster == nil)
                renderer.setAudioOnly(audio.0)
                renderer.soundLevel = audio.1
                renderer.bar.audioOnly = audio.0 != nil
                if redraws, frame == nil { renderer.redraw() }
            }
            if thumbnail?.seconds != renderer.thumbnailSeconds {
                renderer.setThumbnail(thumbnail?.picture, seconds: thumbnail?.seconds)
                barChanged = true
            }
            if overlay != renderer.overlay {
                renderer.overlay = overlay
                if frame == nil, renderer.overlayVisible { renderer.redraw() }
            }
            let bar = renderer.bar
            if (bar.timeline, bar.paused, bar.volume, bar.rendition, bar.muted)
                != (playback.0, playback.1, playback.2, playback.3, muted)
            {
                (renderer.bar.timeline, renderer.bar.paused, renderer.bar.volume, renderer.bar.rendition) = playback
                renderer.bar.muted = muted
                barChanged = true
            }
            renderer.bar.captions = renderer.captionsVisible
            renderer.now = ContinuousClock.now - start
            if let frame { renderer.draw(frame.frame, timing: frame.timing) }
            renderer.setTitle(status.0, status: status.1)
            if status.1 != renderer.status || muted != renderer.muted {
                (renderer.status, renderer.muted) = (status.1, muted)
                if frame == nil { renderer.redraw() }
            }
            let barVisible = renderer.bar.isVisible(at: renderer.now)
            if frame == nil, barVisible != renderer.barDrawn || (barVisible && barChanged) { renderer.redraw() }
            for request in requests { request.resume(returning: renderer.readPixels()) }
            if isClosing { return }
        }
    }
}
