import Foundation
import LivePlayCore
public import LivePlayDecode

/// Writes the pictures it is shown as a YUV4MPEG2 stream, to a file or to standard output, so
/// `liveplay URL --video-out - | ffplay -` shows the stream and `… | ffmpeg -i - out.mp4` re-encodes it.
///
/// - The stream header comes from the first picture: its size, its layout (`C420mpeg2`, `C420jpeg`,
///   `C420paldv` by chroma siting, `C422`, `C444`, `C420p10`, `Cmono`, … as ffmpeg's `yuv4mpegpipe` names
///   them), `XCOLORRANGE` and its pixel aspect. Semi-planar pictures (`nv12`, `nv21`, `p010le`) are split
///   into planes; formats Y4M has no tag for (RGB, packed YUV) stop the sink with
///   ``LivePlayError/Code/unsupportedOutputFormat``.
/// - Y4M holds one size and layout for the whole stream. A picture of another size or layout (after a
///   resolution change on the server) is skipped and counted in ``skippedFrames``; start a new sink (a new
///   file) to follow the change. Range and siting changes within a layout are written under the first header.
/// - `F` is the `frameRate` given, else inferred from the first two pictures' timestamps (the first is held
///   until the second arrives), rounded to the nearest common integer rate when within a millisecond of its
///   period; a single picture, or a gap outside 10–120 fps, gives ``FrameRate/fallback`` (25 fps). Y4M is
///   constant-rate: every presented picture is written once, so pictures the player or the queue dropped
///   shorten the file rather than leaving gaps.
/// - Writing happens on the sink's own thread behind a ``WriteQueueLimits`` queue (``WriteQueueLimits/video``
///   by default); when it is full the newest picture is dropped and counted in ``droppedFrames``. Pictures
///   are queued as references to the decoder's buffers; they are packed on the writer thread.
///
public final class Y4MSink: VideoSink, Sendable {
    /// A frame rate as a fraction, as Y4M's `F` parameter carries it.
    public struct FrameRate: Sendable, Hashable, CustomStringConvertible {
        public var numerator: Int
        public var denominator: Int

        public init(numerator: Int, denominator: Int = 1) {
            precondition(numerator > 0 && denominator > 0, "a frame rate is a positive fraction")
            self.numerator = numerator
            self.denominator = denominator
        }

        /// A rate given as a number (FLV `onMetaData` `framerate`): NTSC rates (23.976, 29.97, 59.94, …) become
        /// `n·1000/1001`, near-integers integers, anything else thousandths. `nil` unless positive and finite.
        public init?(framesPerSecond: Double) {
            guard framesPerSecond.isFinite, framesPerSecond > 0, framesPerSecond < 1_000_000 else { return nil }
            let ntsc = (framesPerSecond * 1.001).rounded()
            if abs(ntsc * 1000 / 1001 - framesPerSecond) < 0.005, abs(ntsc - framesPerSecond) > 0.005 {
                self.init(numerator: Int(ntsc) * 1000, denominator: 1001)
            } else if abs(framesPerSecond.rounded() - framesPerSecond) < 0.005, framesPerSecond >= 0.5 {
                self.init(numerator: Int(framesPerSecond.rounded()))
            } else {
                let thousandths = Int((framesPerSecond * 1000).rounded())
                guard thousandths > 0 else { return nil }
                let divisor = Self.greatestCommonDivisor(thousandths, 1000)
                self.init(numerator: thousandths / divisor, denominator: 1000 / divisor)
            }
        }

        /// 25 fps: the rate when nothing better is known (the most common live rate with 30).
        public static let fallback = FrameRate(numerator: 25)

        public var framesPerSecond: Double { Double(numerator) / Double(denominator) }

        public var description: String { "\(numerator):\(denominator)" }

        /// The rate of pictures `gap` apart: a common integer rate when its period is within 1 ms of the gap
        /// (FLV timestamps are whole milliseconds), `nil` outside 10–120 fps.
        static func inferred(fromGap gap: Duration) -> FrameRate? {
            let milliseconds = Double(gap.milliseconds)
            guard milliseconds > 0 else { return nil }
            let rate = 1000 / milliseconds
            guard rate >= 10, rate <= 120 else { return nil }
            let common = [10, 12, 15, 20, 24, 25, 30, 48, 50, 60, 90, 100, 120]
            if let nearest = common.min(by: {
                abs(1000 / Double($0) - milliseconds) < abs(1000 / Double($1) - milliseconds)
            }),
                abs(1000 / Double(nearest) - milliseconds) <= 1
            {
                return FrameRate(numerator: nearest)
            }
            return FrameRate(framesPerSecond: rate)
        }

        private static func greatestCommonDivisor(_ a: Int, _ b: Int) -> Int {
            b == 0 ? a : greatestCommonDivisor(b, a % b)
        }
    }

    private let writer: SinkWriter<Y4MOutput>

    /// Opens the output (a file is created or truncated now, so a bad path fails here).
    /// - Parameter frameRate: the `F` of the header; `nil` infers it from the first two pictures.
    /// - Parameter onFailure: told once, on the writer's thread, when a write fails or the reader of a pipe goes
    ///   away (``LivePlayError/Code/outputClosed``), so the caller can stop rather than play on for nobody.
    public init(
        output: SinkOutput, frameRate: FrameRate? = nil, queueLimits: WriteQueueLimits = .video,
        onFailure: (@Sendable (LivePlayError) -> Void)? = nil
    ) throws(LivePlayError) {
        let file = try OutputFile(output)
        writer = SinkWriter(
            name: "liveplay-y4m", output: Y4MOutput(file: file, frameRate: frameRate), limits: queueLimits,
            onFailure: onFailure)
    }

    /// `path` `-` is standard output.
    public convenience init(
        path: String, frameRate: FrameRate? = nil, queueLimits: WriteQueueLimits = .video,
        onFailure: (@Sendable (LivePlayError) -> Void)? = nil
    ) throws(LivePlayError) {
        try self.init(
            output: SinkOutput(argument: path), frameRate: frameRate, queueLimits: queueLimits, onFailure: onFailure)
    }

    deinit {
        // Released without `finish()`: still drain and close; the error, if any, has no one to go to.
        _ = writer.finish(timeout: .seconds(10))
    }

    /// Queues the picture for the writer thread; never waits.
    public func present(_ frame: VideoFrame, timing: FrameTiming) {
        _ = writer.submit(Y4MOutput.Item(frame: frame, timing: timing), bytes: frame.packedSize)
    }

    /// Pictures written to the output.
    public var writtenFrames: Int { writer.snapshot.written }
    /// Pictures not written because their size or layout differs from the stream header's.
    public var skippedFrames: Int { writer.snapshot.skipped }
    /// Pictures dropped because the writer queue was full (or abandoned by a ``finish(timeout:)`` that
    /// timed out).
    public var droppedFrames: Int { writer.snapshot.dropped }
    /// What stopped the sink: a write error (``LivePlayError/Code/outputClosed`` when the reader of a pipe
    /// went away), an unsupported format, a stalled reader. Pictures presented after it are ignored.
    public var error: LivePlayError? { writer.error }

    /// Writes what is queued, closes the output (a file; standard output stays open) and waits for the
    /// writer thread; after `timeout` the rest is abandoned. Throws the error that stopped the sink, if any.
    public func finish(timeout: Duration = .seconds(10)) throws(LivePlayError) {
        if let error = writer.finish(timeout: timeout) { throw error }
    }
}

/// The stream format a Y4M header fixes: everything later pictures must match to be written.
struct Y4MFormat: Hashable {
    var size: PictureSize
    /// The planar libavutil format the bytes are in, with `yuvj*` folded into `yuv*` (same layout).
    var layout: String
    /// The header's `C…` and `X…` fields.
    var colorFields: String
    /// `A` as `width:height`; `0:0` when unknown.
    var aspect: String

    /// The format of `frame`, whose planar form is `picture`; `nil` when Y4M has no tag for it.
    init?(frame: VideoFrame, picture: PlanarPicture) {
        let layout = Self.layout(of: picture.pixelFormat)
        guard let tag = Self.colorTag(layout: layout, chroma: frame.chromaLocation) else { return nil }
        size = PictureSize(width: frame.width, height: frame.height)
        self.layout = layout
        colorFields = tag + (frame.isFullRange ? " XCOLORRANGE=FULL" : " XCOLORRANGE=LIMITED")
        aspect = frame.sampleAspectRatio.map { "\($0.width):\($0.height)" } ?? "0:0"
    }

    /// Whether a picture can go into a stream of this format.
    func accepts(_ frame: VideoFrame, picture: PlanarPicture) -> Bool {
        frame.width == size.width && frame.height == size.height && Self.layout(of: picture.pixelFormat) == layout
    }

    /// The stream header line (YUV4MPEG2 as mjpegtools defines it, with ffmpeg's `X` extensions).
    func header(frameRate: Y4MSink.FrameRate) -> String {
        "YUV4MPEG2 W\(size.width) H\(size.height) F\(frameRate) Ip A\(aspect) \(colorFields)\n"
    }

    private static func layout(of pixelFormat: String) -> String {
        pixelFormat.hasPrefix("yuvj") ? "yuv" + pixelFormat.dropFirst(4) : pixelFormat
    }

    /// The `C` field (and mjpegtools' `XYSCSS`) for a planar layout, as ffmpeg's `yuv4mpegpipe` writes it.
    static func colorTag(layout: String, chroma: ChromaLocation) -> String? {
        switch layout {
        case "yuv420p":
            switch chroma {
            case .left: return "C420mpeg2 XYSCSS=420MPEG2"
            case .topLeft: return "C420paldv XYSCSS=420PALDV"
            default: return "C420jpeg XYSCSS=420JPEG"
            }
        case "yuv411p": return "C411 XYSCSS=411"
        case "yuv422p": return "C422 XYSCSS=422"
        case "yuv444p": return "C444 XYSCSS=444"
        case "yuva444p": return "C444alpha XYSCSS=444"
        case "gray": return "Cmono"
        case "gray9le", "gray10le", "gray12le", "gray16le":
            return "Cmono" + layout.dropFirst(4).dropLast(2)
        default:
            // yuv420p10le → C420p10 XYSCSS=420P10, for 4:2:0, 4:2:2 and 4:4:4 at 9–16 bits.
            for subsampling in ["420", "422", "444"] {
                for depth in ["9", "10", "12", "14", "16"] where layout == "yuv\(subsampling)p\(depth)le" {
                    return "C\(subsampling)p\(depth) XYSCSS=\(subsampling)P\(depth)"
                }
            }
            return nil
        }
    }
}

/// The writer-thread half of ``Y4MSink``.
final class Y4MOutput: QueuedOutput {
    var watchedFile: OutputFile? { file }

    struct Item: Sendable {
        var frame: VideoFrame
        var timing: FrameTiming
    }

    private let file: OutputFile
    private let frameRate: Y4MSink.FrameRate?
    private var format: Y4MFormat?
    /// The first picture, held until the second gives the frame rate.
    private var held: (item: Item, picture: PlanarPicture)?

    init(file: OutputFile, frameRate: Y4MSink.FrameRate?) {
        self.file = file
        self.frameRate = frameRate
    }

    func write(_ item: Item, isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome {
        let picture = item.frame.planarBytes()
        guard let format else {
            guard let picture, let format = Y4MFormat(frame: item.frame, picture: picture) else {
                throw LivePlayError(
                    .unsupportedOutputFormat,
                    "Y4M cannot hold \(item.frame.pixelFormat) pictures; the decoder produced them")
            }
            self.format = format
            if let frameRate {
                try writeHeader(format.header(frameRate: frameRate), isAbandoned: isAbandoned)
                try writeFrame(picture, isAbandoned: isAbandoned)
                return WriteOutcome(written: 1)
            }
            held = (item, picture)
            return WriteOutcome()
        }
        guard let picture, format.accepts(item.frame, picture: picture) else { return WriteOutcome(skipped: 1) }
        var outcome = WriteOutcome()
        if let held {
            self.held = nil
            let gap = (item.timing.pts - held.item.timing.pts) / (1 + max(0, item.timing.droppedBefore))
            let rate = Y4MSink.FrameRate.inferred(fromGap: gap) ?? .fallback
            try writeHeader(format.header(frameRate: rate), isAbandoned: isAbandoned)
            try writeFrame(held.picture, isAbandoned: isAbandoned)
            outcome.written += 1
        }
        try writeFrame(picture, isAbandoned: isAbandoned)
        outcome.written += 1
        return outcome
    }

    func close(isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome {
        var outcome = WriteOutcome()
        if let held, let format {
            self.held = nil
            try writeHeader(format.header(frameRate: .fallback), isAbandoned: isAbandoned)
            try writeFrame(held.picture, isAbandoned: isAbandoned)
            outcome.written = 1
        }
        try file.close()
        return outcome
    }

    func abort() {
        file.abort()
    }

    private func writeHeader(_ header: String, isAbandoned: () -> Bool) throws(LivePlayError) {
        try file.append(Array(header.utf8), isAbandoned: isAbandoned)
    }

    private func writeFrame(_ picture: PlanarPicture, isAbandoned: () -> Bool) throws(LivePlayError) {
        try file.append(Self.frameMarker, isAbandoned: isAbandoned)
        try file.append(picture.bytes, isAbandoned: isAbandoned)
    }

    private static let frameMarker = Array("FRAME\n".utf8)
}
