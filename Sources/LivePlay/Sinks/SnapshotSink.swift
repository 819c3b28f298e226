import Foundation
import Synchronization
import LivePlayCore
public import LivePlayDecode

/// How a picture fills a view of another shape (TXLivePlayer's `setRenderMode`; raw values are its
/// `RENDER_MODE_*` constants).
public enum RenderMode: Int, Sendable, Hashable, CaseIterable {
    /// `RENDER_MODE_FULL_FILL_SCREEN`: scaled to cover the whole view; what overflows is cropped equally on
    /// both sides.
    case fillScreen = 0
    /// `RENDER_MODE_ADJUST_RESOLUTION` (“fill edge”): scaled to fit inside the view, with black bars on the
    /// sides left over.
    case fillEdge = 1
}

/// Clockwise rotation of the picture (TXLivePlayer's `setRenderRotation`; raw values are degrees).
public enum RenderRotation: Int, Sendable, Hashable, CaseIterable {
    case rotation0 = 0
    case rotation90 = 90
    case rotation180 = 180
    case rotation270 = 270

    /// A quarter turn further clockwise (270° goes to 0°).
    public var turnedClockwise: RenderRotation { RenderRotation(rawValue: (rawValue + 90) % 360) ?? .rotation0 }
}

extension RGBPicture {
    /// The picture as a view of `size` shows it: rotated first, then fitted by `mode`. Without a size, only
    /// rotated (a quarter turn swaps width and height).
    ///
    /// Fill-edge bars are split evenly (the odd pixel goes to the bottom or right); fill-screen crops the
    /// centre of the rotated picture to the view's aspect, then scales it.
    public func rendered(rotation: RenderRotation, mode: RenderMode, size: PictureSize?) -> RGBPicture {
        let turned = rotated(clockwiseQuarterTurns: rotation.rawValue / 90)
        guard let size, size.width > 0, size.height > 0, turned.width > 0, turned.height > 0 else { return turned }
        let horizontal = Double(size.width) / Double(turned.width)
        let vertical = Double(size.height) / Double(turned.height)
        switch mode {
        case .fillEdge:
            let scale = min(horizontal, vertical)
            let fitted = PictureSize(
                width: min(size.width, max(1, Int((Double(turned.width) * scale).rounded()))),
                height: min(size.height, max(1, Int((Double(turned.height) * scale).rounded()))))
            let canvas = RGBPicture(width: size.width, height: size.height)
            return canvas.drawing(
                turned.scaled(to: fitted), atX: (size.width - fitted.width) / 2, y: (size.height - fitted.height) / 2)
        case .fillScreen:
            let scale = max(horizontal, vertical)
            let visible = PictureSize(
                width: min(turned.width, max(1, Int((Double(size.width) / scale).rounded()))),
                height: min(turned.height, max(1, Int((Double(size.height) / scale).rounded()))))
            let crop = turned.cropped(
                x: (turned.width - visible.width) / 2, y: (turned.height - visible.height) / 2, size: visible)
            return crop.scaled(to: size)
        }
    }
}

/// Keeps the latest picture and writes PNG snapshots of it: on demand (``snapshot(to:)``), and optionally
/// every `interval` of stream time.
///
/// Pictures are rendered as a view would show them: rotated by ``renderRotation``, then fitted into
/// ``targetSize`` by ``renderMode`` (the picture's own size, rotated, when there is none). All three can
/// change while playing, like TXLivePlayer's setters; a periodic snapshot uses the settings of the moment
/// its picture was presented.
///
/// Periodic snapshots are named by `pathPattern`, in which `{index}` becomes the snapshot's number from 1,
/// zero-padded to six digits, and `{pts}` the picture's presentation time in milliseconds
/// (`shots/frame-{index}.png` → `shots/frame-000001.png`). The first is taken at the first picture, then
/// at the first picture at least `interval` later; a timestamp that goes back (a new stream) restarts the
/// schedule. Each file is written under a temporary name and renamed, so a reader never sees half a PNG.
///
/// Converting, encoding and writing happen on the sink's own thread behind a ``WriteQueueLimits`` queue
/// (``WriteQueueLimits/snapshots`` by default); when it is full the newest snapshot is dropped and counted
/// in ``droppedFrames``. ``present(_:timing:)`` itself only keeps a reference to the picture.
///
public final class SnapshotSink: VideoSink, Sendable {
    /// How a picture is drawn into a snapshot.
    public struct Rendering: Sendable, Hashable {
        public var mode: RenderMode
        public var rotation: RenderRotation
        /// The view's size; `nil` keeps the picture's own (rotated) size.
        public var size: PictureSize?

        public init(mode: RenderMode = .fillEdge, rotation: RenderRotation = .rotation0, size: PictureSize? = nil) {
            self.mode = mode
            self.rotation = rotation
            self.size = size
        }
    }

    /// The stream time between periodic snapshots, or `nil` for on-demand only.
    public let interval: Duration?
    /// The periodic snapshots' path, with `{index}` and/or `{pts}`.
    public let pathPattern: String
    public let encoder: PNGEncoder
    private let writer: SinkWriter<SnapshotOutput>
    private struct State {
        var rendering: Rendering
        var latest: VideoFrame?
        var lastPeriodic: MediaTimestamp?
        var periodicCount = 0
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - interval: take a snapshot every `interval` of stream time; `nil` for on-demand only.
    ///   - pathPattern: where periodic snapshots go; must contain `{index}` or `{pts}` when `interval` is set.
    public init(
        every interval: Duration? = nil, pathPattern: String = "snapshot-{index}.png",
        rendering: Rendering = Rendering(),
        encoder: PNGEncoder = PNGEncoder(), queueLimits: WriteQueueLimits = .snapshots
    ) throws(LivePlayError) {
        if let interval {
            guard interval > .zero else {
                throw LivePlayError(.invalidOutput, "the snapshot interval must be positive, not \(interval)")
            }
            guard pathPattern.contains("{index}") || pathPattern.contains("{pts}") else {
                throw LivePlayError(
                    .invalidOutput,
                    "snapshot pattern \(pathPattern) needs {index} or {pts}, or every file overwrites the last")
            }
        }
        self.interval = interval
        self.pathPattern = pathPattern
        self.encoder = encoder
        state = Mutex(State(rendering: rendering))
        writer = SinkWriter(name: "liveplay-snapshot", output: SnapshotOutput(), limits: queueLimits)
    }

    deinit {
        _ = writer.finish(timeout: .seconds(10))
    }

    /// TXLivePlayer's `setRenderMode`.
    public var renderMode: RenderMode {
        get { rendering.mode }
        set { state.withLock { $0.rendering.mode = newValue } }
    }

    /// TXLivePlayer's `setRenderRotation`.
    public var renderRotation: RenderRotation {
        get { rendering.rotation }
        set { state.withLock { $0.rendering.rotation = newValue } }
    }

    /// The view's size; `nil` keeps the picture's own.
    public var targetSize: PictureSize? {
        get { rendering.size }
        set { state.withLock { $0.rendering.size = newValue } }
    }

    public var rendering: Rendering {
        get { state.withLock { $0.rendering } }
        set { state.withLock { $0.rendering = newValue } }
    }

    /// The last picture presented.
    public var latestFrame: VideoFrame? { state.withLock { $0.latest } }

    /// Keeps the picture and, when a periodic snapshot is due, queues it; never waits.
    public func present(_ frame: VideoFrame, timing: FrameTiming) {
        let job: SnapshotOutput.Job? = state.withLock { [interval, pathPattern, encoder] state in
            state.latest = frame
            guard let interval else { return nil }
            if let last = state.lastPeriodic, timing.pts >= last, timing.pts - last < interval { return nil }
            state.lastPeriodic = timing.pts
            state.periodicCount += 1
            let path = Self.path(pattern: pathPattern, index: state.periodicCount, pts: timing.pts)
            return SnapshotOutput.Job(frame: frame, path: path, rendering: state.rendering, encoder: encoder)
        }
        if let job { _ = writer.submit(job, bytes: frame.packedSize) }
    }

    /// The latest picture, rendered with the current settings, on the caller's thread.
    public func renderLatest() throws(LivePlayError) -> RGBPicture {
        let (frame, rendering) = state.withLock { ($0.latest, $0.rendering) }
        guard let frame else { throw LivePlayError(.noPicture, "no picture has been presented yet") }
        return try SnapshotOutput.render(frame, rendering)
    }

    /// Writes the latest picture as a PNG at `path`, rendered with the current settings. Runs on the
    /// caller's thread (converting and encoding take milliseconds), so not from the play loop.
    public func snapshot(to path: String) throws(LivePlayError) {
        let picture = try renderLatest()
        try SnapshotOutput.write(picture, to: path, encoder: encoder)
    }

    /// Periodic snapshots written.
    public var snapshotsWritten: Int { writer.snapshot.written }
    /// Periodic snapshots dropped because the writer queue was full (or abandoned by a
    /// ``finish(timeout:)`` that timed out).
    public var droppedFrames: Int { writer.snapshot.dropped }
    /// What stopped periodic snapshots (a directory that does not exist, a full disk). On-demand
    /// snapshots report their own errors.
    public var error: LivePlayError? { writer.error }

    /// Writes the queued periodic snapshots and waits for the writer thread; after `timeout` the rest is
    /// abandoned. Throws the error that stopped periodic snapshots, if any.
    public func finish(timeout: Duration = .seconds(10)) throws(LivePlayError) {
        if let error = writer.finish(timeout: timeout) { throw error }
    }

    /// `pattern` with `{index}` (six digits, from 1) and `{pts}` (milliseconds) filled in.
    static func path(pattern: String, index: Int, pts: MediaTimestamp) -> String {
        let digits = String(index)
        let padded = String(repeating: "0", count: max(0, 6 - digits.count)) + digits
        return pattern.replacingOccurrences(of: "{index}", with: padded)
            .replacingOccurrences(of: "{pts}", with: String(pts.milliseconds))
    }
}

/// The writer-thread half of ``SnapshotSink``.
final class SnapshotOutput: QueuedOutput {
    struct Job: Sendable {
        var frame: VideoFrame
        var path: String
        var rendering: SnapshotSink.Rendering
        var encoder: PNGEncoder
    }

    func write(_ job: Job, isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome {
        let picture = try Self.render(job.frame, job.rendering)
        try Self.write(picture, to: job.path, encoder: job.encoder)
        return WriteOutcome(written: 1)
    }

    func close(isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome {
        WriteOutcome()
    }

    func abort() {}

    static func render(_ frame: VideoFrame, _ rendering: SnapshotSink.Rendering) throws(LivePlayError) -> RGBPicture {
        do {
            return try frame.rgbPicture().rendered(
                rotation: rendering.rotation, mode: rendering.mode, size: rendering.size)
        } catch {
            throw LivePlayError(
                .unsupportedOutputFormat, "cannot render a \(frame.pixelFormat) picture: \(error)",
                cause: .decode(error))
        }
    }

    /// Encodes and writes `picture` at `path` through a temporary file in the same directory.
    static func write(_ picture: RGBPicture, to path: String, encoder: PNGEncoder) throws(LivePlayError) {
        let png: [UInt8]
        do {
            png = try encoder.encode(picture)
        } catch {
            throw LivePlayError(.outputFailed, "cannot encode a PNG for \(path): \(error)", cause: .decode(error))
        }
        // Written beside it and renamed, so a reader never sees half a picture; errors name the file asked for.
        let temporary = path + ".partial"
        let file: OutputFile
        do {
            file = try OutputFile(.file(temporary))
        } catch {
            throw LivePlayError(.outputFailed, "cannot write the snapshot \(path): \(describeErrno(errno))")
        }
        do {
            try file.append(png, isAbandoned: { false })
            try file.close()
        } catch {
            file.abort()
            unlink(temporary)
            throw LivePlayError(.outputFailed, "cannot write the snapshot \(path): \(error.message)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = describeErrno(errno)
            unlink(temporary)
            throw LivePlayError(.outputFailed, "cannot write the snapshot \(path): \(reason)")
        }
    }
}
