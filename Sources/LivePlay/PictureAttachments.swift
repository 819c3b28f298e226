import LivePlayCore

/// What travels with a picture to the video sink besides its pixels: the stream's `colorInfo` in effect and the SEI
/// messages it carried. Each arrives ahead of its picture (from the intake stage) stamped with a time, waits here in
/// stream order, and goes out with the first picture shown at or after it: a picture skipped in a catch-up passes
/// what it carried to the next one, late rather than lost.
struct PictureAttachments {
    /// `colorInfo` changes in stream order, each from its session time on; those behind the last shown picture go.
    private var colorChanges: [(from: MediaTimestamp, info: VideoColorInfo?)] = []
    /// SEI messages waiting for their picture, in stream order with its time; then those that went out with a
    /// picture, until ``takeShownSEI()``.
    private var pendingSEI: [(pts: MediaTimestamp, message: SEIMessage)] = []
    private var shownSEI: [(SEIMessage, MediaTimestamp)] = []
    /// The most SEI messages waiting: a stream sending them and no pictures must not grow them without bound.
    static let maximumPending = 256

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
    }

    /// The SEI messages that went out with pictures since the last call, with their pictures' times.
    mutating func takeShownSEI() -> [(SEIMessage, MediaTimestamp)] {
        defer { shownSEI.removeAll(keepingCapacity: true) }
        return shownSEI
    }

    /// The pictures waiting were dropped (a seek): what they carried belongs to no picture that will be shown.
    mutating func reset() {
        pendingSEI.removeAll()
    }
}
