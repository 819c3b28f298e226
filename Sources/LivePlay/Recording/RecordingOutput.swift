import Foundation
import Synchronization
import LivePlayCore
public import LivePlayRecording

/// What to record and how: TXLivePlayer's `startRecord`, V2's `startLocalRecording` (docs/recording.md).
public struct RecordingOptions: Sendable, Hashable {
    /// The first file; later ones (segments, a change of codec or resolution) are `name-1.ext`, `name-2.ext`, ….
    public var path: String
    public var format: RecordingFormat
    /// A new file at the first keyframe this long after the file began; `nil`: one file while nothing changes.
    public var segmentDuration: Duration?
    /// Below this much free space on the file system, a recording does not start, or stops (1 GiB).
    public var minimumFreeSpace: Int64
    /// How often `LIVEPLAY_EVT_RECORD_PROGRESS` reports (V2: 1–10 s; 1 s by default).
    public var progressInterval: Duration
    /// What may wait for a slow disk; past it the recording stops (`queue_overflow`) and playback goes on.
    public var queueLimits: WriteQueueLimits

    /// - Parameter format: by the path's extension (`.flv`, `.mp4`) when `nil`; FLV for any other.
    public init(
        path: String, format: RecordingFormat? = nil, segmentDuration: Duration? = nil,
        minimumFreeSpace: Int64 = 1 << 30, progressInterval: Duration = .seconds(1),
        queueLimits: WriteQueueLimits = WriteQueueLimits(items: 4096, bytes: 32 << 20)
    ) {
        self.path = path
        self.format = format ?? RecordingFormat(path: path) ?? .flv
        self.segmentDuration = segmentDuration
        self.minimumFreeSpace = minimumFreeSpace
        self.progressInterval = progressInterval
        self.queueLimits = queueLimits
    }

    /// The path of file `index` (0 is ``path``).
    func path(ofFile index: Int) -> String {
        guard index > 0 else { return path }
        let url = URL(fileURLWithPath: path)
        let stem = url.deletingPathExtension().path
        return url.pathExtension.isEmpty ? "\(stem)-\(index)" : "\(stem)-\(index).\(url.pathExtension)"
    }
}

/// What happened to the recording's files, as the writer thread saw it, for the play loop to report.
enum RecordingFileEvent: Sendable, Equatable {
    case began(path: String, format: RecordingFormat)
    /// A file was closed: playable, `milliseconds` of media in `bytes`.
    case completed(path: String, milliseconds: Int64, bytes: Int64)
    case failed(path: String, RecordingError)
}

/// The writer thread's account to the play loop: file events in order, and the open file's progress.
///
final class RecordingJournal: Sendable {
    private struct Journal {
        var events: [RecordingFileEvent] = []
        var progress: (milliseconds: Int64, bytes: Int64) = (0, 0)
    }

    private let journal = Mutex(Journal())

    func append(_ event: RecordingFileEvent) { journal.withLock { $0.events.append(event) } }

    func takeEvents() -> [RecordingFileEvent] {
        journal.withLock { journal in
            defer { journal.events.removeAll() }
            return journal.events
        }
    }

    var progress: (milliseconds: Int64, bytes: Int64) {
        get { journal.withLock { $0.progress } }
        set { journal.withLock { $0.progress = newValue } }
    }
}

/// One step for the recording's writer thread.
enum RecordingItem: Sendable {
    case open(path: String, video: VideoCodecConfiguration?, audio: AudioCodecConfiguration?)
    /// A packet at `dts` / `pts`, milliseconds on the open file's timeline.
    case packet(EncodedPacket, dts: Int64, pts: Int64)
    case close
}

/// The writer-thread half of a recording: opens, writes and closes files through ``MediaFileMuxer``, keeps free
/// space above the limit, and on any failure leaves the file closed and cut back to its last complete unit.
final class RecordingOutput: QueuedOutput {
    private let options: RecordingOptions
    private let journal: RecordingJournal
    private var muxer: MediaFileMuxer?
    private var milliseconds: Int64 = 0
    private var bytesAtLastCheck: Int64 = 0
    /// Free space is asked again after this many bytes (a `statvfs`, microseconds: cheap enough to ask often).
    private static let checkEvery: Int64 = 64 << 10

    init(options: RecordingOptions, journal: RecordingJournal) {
        self.options = options
        self.journal = journal
    }

    func write(_ item: RecordingItem, isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome {
        do {
            switch item {
            case .open(let path, let video, let audio):
                try checkFreeSpace(for: path)
                muxer = try MediaFileMuxer(path: path, format: options.format, video: video, audio: audio)
                (milliseconds, bytesAtLastCheck) = (0, 0)
                journal.progress = (0, 0)
                journal.append(.began(path: path, format: options.format))
            case .packet(let packet, let dts, let pts):
                guard let muxer else { return WriteOutcome(skipped: 1) }
                try muxer.write(packet, dts: dts, pts: pts)
                milliseconds = max(milliseconds, dts)
                let bytes = muxer.bytesWritten
                journal.progress = (milliseconds, bytes)
                if bytes - bytesAtLastCheck >= Self.checkEvery {
                    bytesAtLastCheck = bytes
                    try checkFreeSpace(for: muxer.path)
                }
            case .close:
                try finishFile()
            }
        } catch {
            let path = muxer?.path ?? pathOf(item)
            journal.append(.failed(path: path, error))
            // Short of space (not yet out of it): the file is finished properly. Otherwise what reached the disk
            // is kept, cut back to its last complete tag or fragment.
            if error.code == .notEnoughDiskSpace, (try? finishFile()) != nil {
            } else {
                abort()
            }
            throw LivePlayError(.outputFailed, "recording \(path): \(error.message)")
        }
        return WriteOutcome(written: 1)
    }

    func close(isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome {
        do {
            try finishFile()
        } catch {
            journal.append(.failed(path: muxer?.path ?? options.path, error))
            abort()
            throw LivePlayError(.outputFailed, "recording: \(error.message)")
        }
        return WriteOutcome()
    }

    func abort() {
        guard let muxer else { return }
        self.muxer = nil
        muxer.abandon()
        let bytes = RecordingRepair.truncateToLastCompleteUnit(path: muxer.path, format: muxer.format)
        journal.append(.completed(path: muxer.path, milliseconds: milliseconds, bytes: bytes ?? 0))
    }

    private func finishFile() throws(RecordingError) {
        guard let muxer else { return }
        try muxer.finish()
        self.muxer = nil
        let bytes = (try? FileManager.default.attributesOfItem(atPath: muxer.path)[.size] as? Int64) ?? 0
        journal.append(.completed(path: muxer.path, milliseconds: milliseconds, bytes: bytes))
    }

    private func checkFreeSpace(for path: String) throws(RecordingError) {
        guard let free = DiskSpace.available(forFileAt: path), free < options.minimumFreeSpace else { return }
        throw RecordingError(
            .notEnoughDiskSpace,
            "not enough disk space: \(free >> 20) MiB free, the limit is \(options.minimumFreeSpace >> 20) MiB")
    }

    private func pathOf(_ item: RecordingItem) -> String {
        if case .open(let path, _, _) = item { return path }
        return options.path
    }
}
