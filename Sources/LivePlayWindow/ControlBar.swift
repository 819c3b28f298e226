import LivePlay

extension PlayerWindow {
    /// What is playing, as the control bar shows it: its layout follows it (Brightcove's VOD, Live and Live DVR
    /// layouts, chosen by the media as its `automaticControlTypeSelection` does). Positions are in seconds.
    public enum Timeline: Sendable, Equatable {
        /// A file or an HTTP file with a duration: the time, a seek bar over the whole of it.
        case onDemand(position: Double, duration: Double)
        /// A live stream: a `LIVE` badge, nothing to seek.
        case live
        /// A live stream with time-shift: a seek bar over the window kept (`start` to `end`), and `GO LIVE` when
        /// behind the live edge.
        case timeShift(position: Double, start: Double, end: Double, atLiveEdge: Bool)
    }
}

/// A rectangle of the window, in pixels.
struct BarRectangle: Equatable {
    var x: Int, y: Int, width: Int, height: Int

    func contains(x px: Int, y py: Int) -> Bool { px >= x && px < x + width && py >= y && py < y + height }
}

/// The control bar along the bottom of the picture: where each control is for a window size, what a press, a drag or
/// a release on it does, and whether the bar is shown. A value with no SDL in it: the window thread passes the
/// events in with the time (`now`, from any origin) and carries out what comes back; tests drive it on virtual time.
struct ControlBar {
    enum Control: Equatable {
        case playPause, time, seekBar, liveBadge, goLive, mute, volume, rendition, captions, fullscreen
    }

    /// What a press, drag or release asks for.
    enum Effect: Equatable {
        /// An action for the front end (pause, mute, volume, seek, go live, captions).
        case action(PlayerWindow.Action)
        /// The window's own: fullscreen on or off.
        case toggleFullscreen
        /// The window's own: captions on or off (the front end is told too, as with `c`).
        case toggleCaptions
    }

    /// What a press did: acted on the bar, or fell on the picture (today's click and double-click).
    enum Press: Equatable {
        case bar([Effect])
        case picture
    }

    /// How long the bar stays after the last mouse move, press or key (Brightcove's `hideControlsInterval`).
    static let hideAfter = Duration.seconds(3)

    var timeline = PlayerWindow.Timeline.live
    var paused = false
    var muted = false
    /// 0–100, as the player's volume.
    var volume = 100
    var captions = false
    /// The rendition button's label, for a stream played from a LAS manifest (Brightcove's quality selector); nil: no
    /// button.
    var rendition: String?
    /// Audio-only (Brightcove's audio-only layout): no picture controls (rendition, captions, fullscreen), and the bar
    /// stays shown, as there is no picture for it to hide from.
    var audioOnly = false
    /// When the bar was last asked for; nil: never (hidden).
    private(set) var lastActivity: Duration?
    /// A drag on the seek bar or the volume slider, and where along it the pointer is (0–1).
    private(set) var drag: (control: Control, fraction: Double)?
    /// The pointer rests on the seek bar: where (its x) and the time under it, in ``seekSeconds(at:)``'s terms, to
    /// ten milliseconds: the thumbnail's place and time.
    private(set) var hover: (x: Int, seconds: Double)?
    /// The pointer is over the bar: it stays shown (Brightcove's bar does not hide under the pointer).
    private(set) var pointerOnBar = false

    var isDragging: Bool { drag != nil }

    // MARK: visibility

    /// A mouse move or a key: the bar shows, for ``hideAfter`` from `now`.
    mutating func activity(at now: Duration) { lastActivity = now }

    /// Shown from a move or key until ``hideAfter`` later, all through a drag, and while the pointer is over it;
    /// always, audio-only.
    func isVisible(at now: Duration) -> Bool {
        if audioOnly { return true }
        guard let lastActivity else { return false }
        return drag != nil || pointerOnBar || now - lastActivity < Self.hideAfter
    }

    /// The pointer left the window: the bar hides ``hideAfter`` after the last move, and no preview is wanted.
    mutating func pointerLeft() -> [Effect] {
        pointerOnBar = false
        defer { hover = nil }
        return hover == nil ? [] : [.action(.preview(seconds: nil))]
    }

    // MARK: layout

    /// The bar's height in a window `height` pixels high: a twelfth, within 32–72 pixels.
    static func height(forWindowHeight height: Int) -> Int { min(72, max(32, height / 12)) }

    /// The bar and where each of its controls is, left to right, in a window of `view`.
    ///
    /// One row (Brightcove's standard layout) while the seek bar keeps at least ``compactSeekBarWidth`` bar heights;
    /// in a narrower window, two rows (its compact layout): the time and the seek bar across the top, the buttons
    /// below.
    func layout(in view: PictureSize) -> (bar: BarRectangle, controls: [(control: Control, frame: BarRectangle)]) {
        let height = Self.height(forWindowHeight: view.height)
        let button = height
        // Each control's width; nil takes what is left (the seek bar, or a spacer with no control).
        var progress: [(Control?, Int?)] = []
        var badge: [(Control?, Int?)] = []
        switch timeline {
        case .onDemand(let position, let duration):
            progress = [(.time, Self.timeText(position: position, duration: duration).count * height * 3 / 10)]
            progress += [(.seekBar, nil)]
        case .live:
            badge = [(.liveBadge, height * 2)]
        case .timeShift(let position, _, let end, let atLiveEdge):
            // Behind the live edge, how far (`-0:10`, as YouTube's live bar); at it, the LIVE badge says it.
            progress = atLiveEdge ? [] : [(.time, Self.behindText(position: position, end: end).count * height * 3 / 10)]
            progress += [(.seekBar, nil)]
            badge = [(atLiveEdge ? .liveBadge : .goLive, height * 3)]
        }
        let quality: [(Control?, Int?)] = rendition.map { [(.rendition, max(button, $0.count * height * 3 / 10))] } ?? []
        let sound: [(Control?, Int?)] = [(.mute, button), (.volume, height * 2)]
        let buttons = audioOnly ? sound : sound + quality + [(.captions, button), (.fullscreen, button)]
        let oneRow: [(Control?, Int?)] =
            [(.playPause, button)] + progress + badge + (progress.isEmpty ? [(nil, nil)] : []) + buttons
        let seekBarWidth = Self.flexibleWidth(of: oneRow, in: view.width, height: height)
        if progress.isEmpty || seekBarWidth >= Self.compactSeekBarWidth * height {
            let bar = BarRectangle(x: 0, y: view.height - height, width: view.width, height: height)
            return (bar, Self.row(oneRow, y: bar.y, width: view.width, height: height))
        }
        let bar = BarRectangle(x: 0, y: view.height - 2 * height, width: view.width, height: 2 * height)
        let lower = [(.playPause, button)] + badge + [(nil, nil)] + buttons
        return (
            bar,
            Self.row(progress, y: bar.y, width: view.width, height: height)
                + Self.row(lower, y: bar.y + height, width: view.width, height: height)
        )
    }

    /// The seek bar's least width in one row, in bar heights: narrower, the bar takes two rows.
    static let compactSeekBarWidth = 4

    /// What a row of `widths` leaves for its flexible control, with a quarter-height gap around each.
    private static func flexibleWidth(of widths: [(Control?, Int?)], in width: Int, height: Int) -> Int {
        width - widths.reduce(0) { $0 + ($1.1 ?? 0) } - height / 4 * (widths.count + 1)
    }

    /// The controls of a row of `widths`, left to right, the flexible one taking what the others leave.
    private static func row(
        _ widths: [(Control?, Int?)], y: Int, width: Int, height: Int
    ) -> [(control: Control, frame: BarRectangle)] {
        let gap = height / 4
        let flexible = max(0, flexibleWidth(of: widths, in: width, height: height))
        var x = gap
        var controls: [(control: Control, frame: BarRectangle)] = []
        for (control, width) in widths {
            let width = width ?? flexible
            if let control { controls.append((control, BarRectangle(x: x, y: y, width: width, height: height))) }
            x += width + gap
        }
        return controls
    }

    /// The control at (`x`, `y`), or nil.
    func control(atX x: Int, y: Int, in view: PictureSize) -> (control: Control, frame: BarRectangle)? {
        layout(in: view).controls.first { $0.frame.contains(x: x, y: y) }
    }

    /// The time shown on demand: `1:05 / 3:20`, hours when there are some; the position alone while the duration is
    /// not known (0: a file whose metadata does not say).
    static func timeText(position: Double, duration: Double) -> String {
        duration > 0 ? "\(clock(position)) / \(clock(duration))" : clock(position)
    }

    /// The time shown behind the live edge in a time-shift window: how far behind, `-0:10`.
    static func behindText(position: Double, end: Double) -> String {
        "-" + clock(max(0, end - position))
    }

    static func clock(_ seconds: Double) -> String {
        let total = Int(max(0, seconds).rounded(.down))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(rest))" : "\(minutes):\(twoDigits(rest))"
    }

    /// Where the seek bar's knob is (0–1): the drag's, else the position's in the duration or the time-shift window.
    var seekFraction: Double {
        if let drag, drag.control == .seekBar { return drag.fraction }
        switch timeline {
        case .onDemand(let position, let duration):
            return duration > 0 ? min(1, max(0, position / duration)) : 0
        case .timeShift(let position, let start, let end, _):
            return end > start ? min(1, max(0, (position - start) / (end - start))) : 1
        case .live:
            return 1
        }
    }

    /// The volume slider's fill (0–1): the drag's, else the volume's.
    var volumeFraction: Double {
        if let drag, drag.control == .volume { return drag.fraction }
        return Double(volume) / 100
    }

    // MARK: the mouse

    /// A left-button press at (`x`, `y`): a control's effect, or the picture's when the bar is hidden or the press is
    /// above it. A press on the bar between controls does nothing (no pause).
    mutating func press(atX x: Int, y: Int, in view: PictureSize, at now: Duration) -> Press {
        guard isVisible(at: now), layout(in: view).bar.contains(x: x, y: y) else { return .picture }
        lastActivity = now
        guard let (control, frame) = control(atX: x, y: y, in: view) else { return .bar([]) }
        switch control {
        case .playPause: return .bar([.action(.togglePause)])
        case .mute: return .bar([.action(.toggleMute)])
        case .captions: return .bar([.toggleCaptions])
        case .rendition: return .bar([.action(.nextRendition)])
        case .fullscreen: return .bar([.toggleFullscreen])
        case .goLive: return .bar([.action(.goLive)])
        case .seekBar, .volume:
            drag = (control, Self.fraction(x, along: frame))
            return .bar(control == .volume ? [volumeEffect()] : [])
        case .time, .liveBadge: return .bar([])
        }
    }

    /// The pointer moved to (`x`, `y`): the bar shows; a drag follows it (the volume changes as it goes, a seek waits
    /// for the release).
    mutating func motion(toX x: Int, y: Int, in view: PictureSize, at now: Duration) -> [Effect] {
        lastActivity = now
        pointerOnBar = layout(in: view).bar.contains(x: x, y: y)
        let hovered = hover(atX: x, y: y, in: view)
        var effects: [Effect] = []
        if hovered?.seconds != hover?.seconds { effects.append(.action(.preview(seconds: hovered?.seconds))) }
        hover = hovered
        guard let current = drag, let frame = layout(in: view).controls.first(where: { $0.control == current.control })
        else { return effects }
        let fraction = Self.fraction(x, along: frame.frame)
        guard fraction != current.fraction else { return effects }
        drag = (current.control, fraction)
        return effects + (current.control == .volume ? [volumeEffect()] : [])
    }

    /// Where on the seek bar the pointer at (`x`, `y`) rests, and the time there; nil off it, while dragging, or where
    /// there is no time to show (no duration known, a live stream).
    private func hover(atX x: Int, y: Int, in view: PictureSize) -> (x: Int, seconds: Double)? {
        guard drag == nil, let (control, frame) = control(atX: x, y: y, in: view), control == .seekBar,
            let seconds = seekSeconds(at: Self.fraction(x, along: frame))
        else { return nil }
        return (x, (seconds * 100).rounded() / 100)
    }

    /// The time `fraction` of the way along the seek bar: from the start of the media on demand, in the time-shift
    /// window's terms with time-shift (what ``PlayerWindow/Action/seek(seconds:)`` takes); nil without either.
    func seekSeconds(at fraction: Double) -> Double? {
        switch timeline {
        case .onDemand(_, let duration): duration > 0 ? fraction * duration : nil
        case .timeShift(_, let start, let end, _): start + fraction * (end - start)
        case .live: nil
        }
    }

    /// The left button came up: a drag on the seek bar seeks where it ended.
    mutating func release(at now: Duration) -> [Effect] {
        guard let current = drag else { return [] }
        drag = nil
        lastActivity = now
        guard current.control == .seekBar else { return [] }
        // Without a duration there is nowhere along the bar to go.
        return seekSeconds(at: current.fraction).map { [.action(.seek(seconds: $0))] } ?? []
    }

    private func volumeEffect() -> Effect {
        .action(.setVolume(Int((volumeFraction * 100).rounded())))
    }

    private static func fraction(_ x: Int, along frame: BarRectangle) -> Double {
        guard frame.width > 1 else { return 0 }
        return min(1, max(0, Double(x - frame.x) / Double(frame.width - 1)))
    }
}
