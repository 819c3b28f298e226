import LivePlayCore
import LivePlayDecode

/// What travels with a picture to the video sink besides its pixels: the stream's `colorInfo` in effect, the SEI
/// messages it carried, the caption on screen. Each arrives ahead of its picture (from the intake stage, or the
/// decoder) stamped with a time, waits here in stream order, and goes out with the first picture shown at or after
/// it: a picture skipped in a catch-up passes what it carried to the next one, late rather than lost.
struct PictureAttachments {
    /// `colorInfo` changes in stream order, each from its session time on; those behind the last shown picture go.
    private var colorChanges: [(from: MediaTimestamp, info: VideoColorInfo?)] = []
    /// SEI messages waiting for their picture, in stream order with its time; then those that went out with a
    /// picture, until ``takeShownSEI()``.
    private var pendingSEI: [(pts: MediaTimestamp, message: SEIMessage)] = []
    private var shownSEI: [(SEIMessage, MediaTimestamp)] = []
    /// The most SEI messages (or caption changes) waiting: a stream sending them and no pictures must not grow
    /// them without bound.
    static let maximumPending = 256
    /// Caption screen changes waiting for their picture, in presentation order.
    private var pendingCaptions: [CaptionScreen] = []
    private var captions = CaptionTimeline()
    /// Captions that left the screen with a picture, until ``takeEndedCaptions()``.
    private var endedCaptions: [Caption] = []

    /// The stream's `colorInfo` for the pictures from `from` on.
    mutating func colorChanged(to info: VideoColorInfo?, from: MediaTimestamp) {
        if colorChanges.count >= 64 { colorChanges.removeFirst() }
        colorChanges.append((from, info))
    }

    /// SEI messages for the picture stamped `pts` (decode order: kept sorted by time, as pictures are shown).
    mutating func seiArrived(_ messages: [SEIMessage], pts: MediaTimestamp) {
        let index = pendingSEI.lastIndex { $0.pts <= pts }.map { $0 + 1 } ?? 0
        pendingSEI.insert(contentsOf: messages.map { (pts, $0) }, at: index)
        if pendingSEI.count > Self.maximumPending { pendingSEI.removeFirst(pendingSEI.count - Self.maximumPending) }
    }

    /// The captions change from the picture at `change.at` on: a 608 channel's screen (decoded pictures come in
    /// presentation order), or script-data text (in the stream's order): kept sorted by time.
    mutating func captionChanged(_ change: CaptionScreen) {
        let index = pendingCaptions.lastIndex { $0.at <= change.at }.map { $0 + 1 } ?? 0
        pendingCaptions.insert(change, at: index)
        if pendingCaptions.count > Self.maximumPending { pendingCaptions.removeFirst() }
    }

    /// What goes out with the picture stamped `pts`.
    mutating func attach(to timing: inout FrameTiming) {
        let pts = timing.pts
        if !colorChanges.isEmpty {
            while colorChanges.count > 1, colorChanges[1].from <= pts { colorChanges.removeFirst() }
            if colorChanges[0].from <= pts { timing.colorInfo = colorChanges[0].info }
        }
        if !pendingSEI.isEmpty {
            let due = pendingSEI.prefix { $0.pts <= pts }
            if !due.isEmpty {
                timing.seiMessages = due.map(\.message)
                shownSEI += due.map { ($0.message, $0.pts) }
                pendingSEI.removeFirst(due.count)
            }
        }
        if !pendingCaptions.isEmpty {
            let due = pendingCaptions.prefix { $0.at <= pts }
            for change in due {
                if let ended = captions.show(change) { endedCaptions.append(ended) }
            }
            pendingCaptions.removeFirst(due.count)
        }
        timing.caption = captions.onScreen?.text
    }

    /// The SEI messages that went out with pictures since the last call, with their pictures' times.
    mutating func takeShownSEI() -> [(SEIMessage, MediaTimestamp)] {
        // Handing out an empty array that keeps its capacity would make the next append copy it.
        guard !shownSEI.isEmpty else { return [] }
        defer { shownSEI.removeAll(keepingCapacity: true) }
        return shownSEI
    }

    /// The captions that left the screen since the last call.
    mutating func takeEndedCaptions() -> [Caption] {
        guard !endedCaptions.isEmpty else { return [] }
        defer { endedCaptions.removeAll(keepingCapacity: true) }
        return endedCaptions
    }

    /// The pictures waiting were dropped (a seek) or the stream ended after the picture stamped `lastShown`: what
    /// they carried belongs to no picture that will be shown, and the caption on screen ends with the last one.
    mutating func reset(lastShown: MediaTimestamp?) {
        pendingSEI.removeAll()
        pendingCaptions.removeAll()
        if let lastShown, let ended = captions.finish(at: lastShown) { endedCaptions.append(ended) }
    }
}
