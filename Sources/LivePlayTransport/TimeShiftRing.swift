import Foundation
public import LivePlayFLV
import Synchronization

/// The last stretch of a live stream on disk, for time-shift: FLV segments that each start at a keyframe with
/// the stream's metadata and sequence headers, an index of their keyframes, and readers that follow the newest
/// tag or start at any keyframe the ring still holds.
///
/// One writer (the recorder of ``TimeShiftSource``) appends tags as they arrive; a segment is opened at the first
/// keyframe ``Options/segmentLength`` after the last one began (so a segment runs up to a keyframe interval
/// longer), and the oldest segments are removed while the ones after them still cover ``Options/window``: the ring
/// holds between one window and one window plus a segment.
/// While the file system has less than ``Options/minimumFreeSpace`` free, old segments go first and, down to one,
/// nothing more is written (``Status/diskFull``). The files are removed by ``close()``.
///
/// Readers and the writer meet under one `Mutex` (the index, the waiters); file bytes are read and written
/// outside it, by whoever needs them, on their own task's executor (STYLE.md §8: local disk, the page cache).
public final class TimeShiftRing: Sendable {
    public struct Options: Sendable, Hashable {
        /// How much of the stream the viewer can go back.
        public var window: Duration
        /// Where the ring makes a directory of its own (`liveplay-timeshift-…`), removed at the end: the system's
        /// temporary directory by default.
        public var directory: String
        public var segmentLength: Duration
        /// Below this much free space no new segment is written (the media cache's rule, docs/cache.md).
        public var minimumFreeSpace: Int64

        public init(
            window: Duration, directory: String? = nil, segmentLength: Duration? = nil, minimumFreeSpace: Int64 = 1 << 30
        ) {
            self.window = window
            self.directory = directory ?? FileManager.default.temporaryDirectory.path
            self.segmentLength = segmentLength ?? min(.seconds(60), max(.seconds(2), window / 6))
            self.minimumFreeSpace = minimumFreeSpace
        }
    }

    /// A keyframe the ring holds: its stream time, and where its tag starts in its segment.
    struct Keyframe: Sendable {
        var time: UInt32
        var offset: Int64
    }

    struct Segment: Sendable {
        var number: Int
        var path: String
        /// Bytes of the FLV header, metadata and sequence headers at the start: what a reader sends first.
        var headLength: Int64
        /// Bytes written so far: whole tags only.
        var length: Int64
        var keyframes: [Keyframe]
        var last: UInt32
    }

    /// Where a reader is: a segment and a byte in it.
    public struct Position: Sendable, Hashable {
        var segment: Int
        var offset: Int64
    }

    /// How the live side stands, for readers at the newest tag.
    public enum Status: Sendable, Equatable {
        case recording
        /// The live connection was lost; the recorder is trying again.
        case lost(TransportError)
        /// The stream finished by design, or the recorder stopped.
        case finished(TransportError?)
        /// The file system is short of space: nothing more is recorded.
        case diskFull
    }

    private struct State {
        var segments: [Segment] = []
        var nextNumber = 0
        var writer: FileHandle?
        var metadata: FLVTag?
        var sequenceHeaders: [UInt8: FLVTag] = [:]
        var status = Status.recording
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
        /// Added to each connection's timestamps so the ring's times never go back across reconnects.
        var timestampOffset: Int64 = 0
        var lastWritten: Int64?
        var connectionStarts = true
        var serverAddress = "time-shift"
    }

    public let options: Options
    /// The ring's own directory, inside ``Options/directory``.
    public let directory: String
    private let state = Mutex(State())

    public init(options: Options) throws(TransportError) {
        self.options = options
        directory = options.directory + "/liveplay-timeshift-\(getpid())-\(UUID().uuidString.prefix(8))"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw TransportError(.openFailed, "cannot make the time-shift directory \(directory)", detail: "\(error)")
        }
    }

    // MARK: Writing

    /// A new live connection: its timestamps may start anywhere; the ring's go on from the last it wrote.
    public func connectionBegan(serverAddress: String?) {
        state.withLock {
            $0.connectionStarts = true
            if let serverAddress { $0.serverAddress = serverAddress }
        }
    }

    /// Appends one tag as it arrived.
    public func append(_ received: FLVTag) {
        var tag = received
        // Written under the lock: a reader is never told of bytes not yet in the file.
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            let time = Int64(tag.timestamp) + state.timestampOffset
            if state.connectionStarts, let last = state.lastWritten, time <= last {
                state.timestampOffset += last + 1 - time
            }
            state.connectionStarts = false
            tag.timestamp = UInt32(truncatingIfNeeded: Int64(tag.timestamp) + state.timestampOffset)
            if tag.type == FLVTagType.script.rawValue, Self.isMetadata(tag) {
                state.metadata = tag
                return []
            }
            if tag.isSequenceHeader { state.sequenceHeaders[tag.type] = tag }
            if tag.isVideoKeyframe, Self.startsSegment(tag, state.segments.last, options.segmentLength) {
                guard let (handle, head) = openSegment(at: tag, &state) else { return [] }
                try? handle.write(contentsOf: head)
            }
            guard let writer = state.writer, state.status != .diskFull, !state.segments.isEmpty else { return [] }
            let bytes = tag.framedBytes
            do {
                try writer.write(contentsOf: bytes)
            } catch {
                state.status = .diskFull
                return []
            }
            let index = state.segments.count - 1
            if tag.isVideoKeyframe {
                state.segments[index].keyframes.append(Keyframe(time: tag.timestamp, offset: state.segments[index].length))
            }
            state.segments[index].length += Int64(bytes.count)
            state.segments[index].last = tag.timestamp
            state.lastWritten = Int64(tag.timestamp)
            if case .lost = state.status { state.status = .recording }
            evict(&state)
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The live side changed: lost (readers at the newest tag are told), finished, or recording again.
    public func setStatus(_ status: Status) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.status != .diskFull || status != .recording { state.status = status }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Removes every segment and the directory.
    public func close() {
        let paths = state.withLock { state -> [String] in
            try? state.writer?.close()
            state.writer = nil
            defer { state.segments.removeAll() }
            return state.segments.map(\.path)
        }
        for path in paths { try? FileManager.default.removeItem(atPath: path) }
        try? FileManager.default.removeItem(atPath: directory)
        setStatus(.finished(nil))
    }

    private static func startsSegment(_ keyframe: FLVTag, _ current: Segment?, _ length: Duration) -> Bool {
        guard let current, let first = current.keyframes.first else { return true }
        return Int64(keyframe.timestamp) - Int64(first.time) >= length.milliseconds
    }

    private static func isMetadata(_ tag: FLVTag) -> Bool {
        // AMF0 string "onMetaData": marker 2, length 10.
        tag.body.starts(with: [2, 0, 10] + Array("onMetaData".utf8))
    }

    /// Opens the next segment, its head written: the FLV header, the metadata, the sequence headers.
    private func openSegment(at keyframe: FLVTag, _ state: inout State) -> (FileHandle, [UInt8])? {
        if let free = Self.freeSpace(directory), free < options.minimumFreeSpace {
            // Old segments go first; with one left, nothing more is written until space comes back.
            while state.segments.count > 1, let oldest = state.segments.first {
                try? FileManager.default.removeItem(atPath: oldest.path)
                state.segments.removeFirst()
            }
            state.status = .diskFull
            return nil
        }
        if state.status == .diskFull { state.status = .recording }
        let path = directory + "/segment-\(state.nextNumber).flv"
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path)
        else {
            state.status = .diskFull
            return nil
        }
        try? state.writer?.close()
        state.writer = handle
        var head: [UInt8] = [0x46, 0x4C, 0x56, 0x01, 0x05, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00]
        for tag in [state.metadata].compactMap({ $0 }) + state.sequenceHeaders.keys.sorted().compactMap({ state.sequenceHeaders[$0] }) {
            var copy = tag
            copy.timestamp = keyframe.timestamp
            head += copy.framedBytes
        }
        state.segments.append(
            Segment(
                number: state.nextNumber, path: path, headLength: Int64(head.count), length: Int64(head.count),
                keyframes: [], last: keyframe.timestamp))
        state.nextNumber += 1
        return (handle, head)
    }

    /// Removes the oldest segments while the ones after them still cover the window.
    private func evict(_ state: inout State) {
        while state.segments.count > 1, let newest = state.segments.last?.last,
            let second = state.segments[1].keyframes.first?.time,
            Int64(newest) - Int64(second) >= options.window.milliseconds
        {
            try? FileManager.default.removeItem(atPath: state.segments[0].path)
            state.segments.removeFirst()
        }
    }

    private static func freeSpace(_ directory: String) -> Int64? {
        let attributes = try? FileManager.default.attributesOfFileSystem(forPath: directory)
        return (attributes?[.systemFreeSize] as? NSNumber)?.int64Value
    }

    // MARK: Reading

    /// The stream times the ring holds: from its oldest keyframe to its newest tag; nil while it holds none.
    public var span: ClosedRange<UInt32>? {
        state.withLock { state in
            guard let first = state.segments.first?.keyframes.first?.time, let last = state.segments.last?.last
            else { return nil }
            return first...max(first, last)
        }
    }

    /// The keyframe at or before `offset` from the window's start (the oldest when `offset` is before it): its
    /// segment's path and where its tag starts there, for a thumbnail of that moment. The segment's head holds its
    /// sequence headers; it may be evicted before it is read. Nil while the ring holds no keyframe.
    public func keyframe(atWindowOffset offset: Duration) -> (path: String, offset: Int64)? {
        guard let start = span?.lowerBound else { return nil }
        let time = Int64(start) + max(0, offset.milliseconds)
        guard let (segment, position) = self.start(at: UInt32(clamping: time)) else { return nil }
        return (segment.path, position.offset)
    }

    /// The bytes on disk now: every segment's length.
    public var byteCount: Int64 { state.withLock { $0.segments.reduce(0) { $0 + $1.length } } }

    /// Where the live connection is: its server's address, for a reader's `connected` event.
    var serverAddress: String { state.withLock { $0.serverAddress } }

    /// Where a reader starts: at the keyframe at or before `time` (the oldest when `time` is before it), or at the
    /// newest keyframe; with the head of its segment to send first. Nil while the ring holds no keyframe.
    func start(at time: UInt32?) -> (head: Segment, position: Position)? {
        state.withLock { state in
            let keyframes = state.segments.flatMap { segment in segment.keyframes.map { (segment, $0) } }
            guard let first = keyframes.first else { return nil }
            let chosen = time.map { time in keyframes.last { $0.1.time <= time } ?? first } ?? keyframes.last!
            return (chosen.0, Position(segment: chosen.0.number, offset: chosen.1.offset))
        }
    }

    /// What to read next from `position`: a segment's path and the byte range written, the next segment's start
    /// when this one is done, or that the reader must wait (nil range) or stop (the status).
    enum Next {
        case read(path: String, range: Range<Int64>)
        case moveTo(Position)
        case wait(Status)
    }

    func next(after position: Position) -> Next {
        state.withLock { state in
            guard let index = state.segments.firstIndex(where: { $0.number >= position.segment }) else {
                return .wait(state.status)
            }
            let segment = state.segments[index]
            if segment.number != position.segment {
                // Evicted under the reader, or the next one: on from its first keyframe.
                return .moveTo(Position(segment: segment.number, offset: segment.headLength))
            }
            if position.offset < segment.length { return .read(path: segment.path, range: position.offset..<segment.length) }
            if index + 1 < state.segments.count {
                let following = state.segments[index + 1]
                return .moveTo(Position(segment: following.number, offset: following.headLength))
            }
            return .wait(state.status)
        }
    }

    /// Waits until the writer appends or the status changes (or the task is cancelled).
    func waitForMore(than position: Position) async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    if case .read = nextLocked(state, position) { return true }
                    if state.status != .recording { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    private func nextLocked(_ state: State, _ position: Position) -> Next? {
        guard let segment = state.segments.last(where: { $0.number == position.segment }) else { return nil }
        return position.offset < segment.length || state.segments.last?.number != position.segment
            ? .read(path: segment.path, range: position.offset..<segment.length) : nil
    }
}
