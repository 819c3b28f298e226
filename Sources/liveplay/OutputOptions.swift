import ArgumentParser
import Foundation
import LivePlay

/// `--video-out`, `--audio-out`, snapshots: where decoded output goes besides the log.
struct OutputOptions: ParsableArguments {
    @Option(help: "Write the pictures as YUV4MPEG2 to this file, or `-` for stdout (`| ffplay -`).")
    var videoOut: String?

    @Option(help: "Write the sound to this file, or `-` for stdout.")
    var audioOut: String?

    @Option(help: "Sound format: wav (float32), wav-s16, f32le or s16le (raw PCM).")
    var audioFormat: AudioFormatOption = .wav

    @Option(parsing: .unconditional, help: "Take a PNG snapshot every N seconds of stream time (see --snapshot-path).")
    var snapshotEvery: Double?

    @Option(help: "Where periodic snapshots go; {index} becomes the number from 1 in six digits (000001), {pts} the picture's time in ms.")
    var snapshotPath = "snapshot-{index}.png"

    @Option(help: "Write a PNG of the last picture shown to this file when playback stops.")
    var snapshot: String?

    @Option(help: "Snapshot render mode: fill-screen (cover and crop) or fill-edge (fit, black bars).")
    var renderMode: RenderModeOption = .fillEdge

    @Option(help: "Snapshot size WxH (default: the picture's own size).")
    var renderSize: String?

    @Option(parsing: .unconditional, help: "Snapshot rotation, clockwise degrees: 0, 90, 180 or 270.")
    var rotation = 0

    @Option(
        help: "Record an arrival trace (each read's time, bytes and packets; docs/arrival-trace.md) to this file.")
    var arrivalTrace: String?

    @Option(help: "Write the stream's captions as WebVTT to this file, or `-` for stdout (see --captions).")
    var captionsOut: String?

    @Option(help: "Record the stream as it arrives, without re-encoding, to this .flv or .mp4 (fragmented) file.")
    var record: String?

    @Option(parsing: .unconditional, help: "With --record: a new file (name-1.mp4, name-2.mp4, …) at the first keyframe after this many seconds.")
    var recordSegment: Double?

    @Option(parsing: .unconditional, help: "With --record: stop recording (event 9102) when the disk has less than this many MiB free.")
    var recordMinFree: Int = 1024

    @Option(parsing: .unconditional, help: "With --record: seconds between record progress events (9014).")
    var recordProgress: Double = 1

    /// What `--record` asks for.
    var recording: RecordingOptions? {
        record.map {
            RecordingOptions(
                path: $0, segmentDuration: recordSegment.map { .seconds($0) },
                minimumFreeSpace: Int64(recordMinFree) << 20, progressInterval: .seconds(recordProgress))
        }
    }

    /// Whether anything here needs decoded pictures or sound.
    var decodes: Bool {
        videoOut != nil || audioOut != nil || snapshotEvery != nil || snapshot != nil || captionsOut != nil
    }

    /// Whether media goes to stdout, so the log must go to stderr.
    var usesStandardOutput: Bool { [videoOut, audioOut, arrivalTrace, captionsOut].contains("-") }

    func validate() throws {
        if [videoOut, audioOut, arrivalTrace, captionsOut].filter({ $0 == "-" }).count > 1 {
            throw ValidationError("only one of --video-out, --audio-out, --arrival-trace and --captions-out can be `-`")
        }
        if let snapshotEvery { try Seconds.check(snapshotEvery, "--snapshot-every") }
        if let record, RecordingFormat(path: record) == nil {
            throw ValidationError("--record needs a .flv or .mp4 file name, got '\(record)'")
        }
        if let recordSegment { try Seconds.check(recordSegment, "--record-segment") }
        try Seconds.check(recordProgress, "--record-progress")
        if recordMinFree < 0 { throw ValidationError("--record-min-free must be 0 or more MiB") }
        if snapshotEvery != nil, !snapshotPath.contains("{index}") && !snapshotPath.contains("{pts}") {
            throw ValidationError("--snapshot-path needs {index} or {pts}, or each snapshot overwrites the last")
        }
        guard RenderRotation(rawValue: rotation) != nil else {
            throw ValidationError("--rotation must be 0, 90, 180 or 270")
        }
        if let renderSize, Self.size(renderSize) == nil {
            throw ValidationError(
                "--render-size is WIDTHxHEIGHT, each 1 to \(Self.maximumRenderSide) (e.g. 640x360), got '\(renderSize)'")
        }
    }

    /// Opens the outputs (files are created now, so a bad path fails before playing).
    /// Opens the outputs. `onFailure` is told when one of the media outputs (pictures, sound, captions) can no
    /// longer be written, or its pipe's reader went away, so the run stops then rather than playing for nobody.
    func make(onFailure: @escaping @Sendable (LivePlayError) -> Void = { _ in }) throws(LivePlayError) -> Outputs {
        // Files written later (the recording once media comes, the last snapshot at the end) are checked now:
        // a path that cannot be written fails before playing, not after the whole run.
        if let record { try Self.checkWritable(record, "cannot record to", keepingFree: recordMinFree) }
        if let snapshot { try Self.checkWritable(snapshot, "cannot write the snapshot") }
        if snapshotEvery != nil, !snapshotPath.contains("/{") {
            try Self.checkWritable(snapshotPath, "cannot write snapshots to")
        }
        var outputs = Outputs()
        if let videoOut { outputs.y4m = try Y4MSink(path: videoOut, onFailure: onFailure) }
        if snapshotEvery != nil || snapshot != nil {
            let rendering = SnapshotSink.Rendering(
                mode: renderMode.mode, rotation: RenderRotation(rawValue: rotation) ?? .rotation0,
                size: renderSize.flatMap(Self.size))
            outputs.snapshots = try SnapshotSink(
                every: snapshotEvery.map { .seconds($0) }, pathPattern: snapshotPath, rendering: rendering)
            outputs.finalSnapshot = snapshot
        }
        if let audioOut {
            outputs.pcm = try PCMSink(
                path: audioOut, container: audioFormat.container, sampleFormat: audioFormat.sampleFormat,
                onFailure: onFailure)
        }
        if let arrivalTrace { outputs.arrivals = try ArrivalTraceFile(path: arrivalTrace) }
        if let captionsOut { outputs.captions = try WebVTTFile(path: captionsOut, onFailure: onFailure) }
        return outputs
    }

    /// Whether a file can be created at `path` now: its directory exists and is writable, and the path is not a
    /// directory or a file that cannot be written.
    /// `keepingFree` (MiB, `--record-min-free`): a disk with less free space already fails here, naming the option.
    static func checkWritable(_ path: String, _ doing: String, keepingFree: Int? = nil) throws(LivePlayError) {
        let file = URL(fileURLWithPath: path)
        let directory = file.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        let reason: String?
        if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            reason = "the directory \(directory) does not exist"
        } else if !isDirectory.boolValue {
            reason = "\(directory) is not a directory"
        } else if FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), isDirectory.boolValue {
            reason = "it is a directory"
        } else if access(directory, W_OK | X_OK) != 0 {
            reason = "the directory \(directory) is not writable (\(String(cString: strerror(errno))))"
        } else if access(file.path, F_OK) == 0, access(file.path, W_OK) != 0 {
            reason = "the file is not writable (\(String(cString: strerror(errno))))"
        } else {
            reason = Self.diskProblem(directory, keepingFree: keepingFree)
        }
        if let reason { throw LivePlayError(.outputFailed, "\(doing) \(path): \(reason)") }
    }

    /// A file system that holds no files (`/proc`, `/sys`: no blocks at all), or one with less free space than the
    /// recording keeps free.
    private static func diskProblem(_ directory: String, keepingFree: Int?) -> String? {
        var status = statvfs()
        guard statvfs(directory, &status) == 0 else { return nil }
        if status.f_blocks == 0 {
            return "\(directory) is on a virtual file system (no disk blocks, like /proc), where no file can be kept"
        }
        let free = Int64(status.f_bavail) * Int64(status.f_frsize)
        if let keepingFree, free < Int64(keepingFree) << 20 {
            return "only \(free >> 20) MiB free on \(directory), below the \(keepingFree) MiB --record-min-free keeps free "
                + "(a smaller --record-min-free MIB records on it; 0 records until the disk is full)"
        }
        return nil
    }

    /// Each side 1…``maximumRenderSide``.
    static let maximumRenderSide = 16384

    static func size(_ text: String) -> PictureSize? {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0,
            width <= maximumRenderSide, height <= maximumRenderSide
        else { return nil }
        return PictureSize(width: width, height: height)
    }
}

/// The sinks `OutputOptions` opened, and how to close them.
struct Outputs {
    var y4m: Y4MSink?
    var snapshots: SnapshotSink?
    /// `--snapshot`: the last picture, written when playback stops.
    var finalSnapshot: String?
    var pcm: PCMSink?
    var arrivals: ArrivalTraceFile?
    var captions: WebVTTFile?

    var video: [any VideoSink] {
        var sinks: [any VideoSink] = []
        if let y4m { sinks.append(y4m) }
        if let snapshots { sinks.append(snapshots) }
        return sinks
    }
    var audio: (any AudioSink)? { pcm }

    /// Flushes and closes every output; returns the first failure.
    func finish() -> LivePlayError? {
        var failures: [LivePlayError] = []
        func attempt(_ work: () throws(LivePlayError) -> Void) {
            do {
                try work()
            } catch {
                failures.append(error)
            }
        }
        if let y4m { attempt { () throws(LivePlayError) in try y4m.finish() } }
        if let snapshots {
            if let finalSnapshot, snapshots.latestFrame != nil {
                attempt { () throws(LivePlayError) in try snapshots.snapshot(to: finalSnapshot) }
            }
            attempt { () throws(LivePlayError) in try snapshots.finish() }
        }
        if let pcm { attempt { () throws(LivePlayError) in try pcm.finish() } }
        if let arrivals { attempt { () throws(LivePlayError) in try arrivals.finish() } }
        if let captions { attempt { () throws(LivePlayError) in try captions.finish() } }
        return failures.first
    }
}

enum AudioFormatOption: String, CaseIterable, ExpressibleByArgument {
    case wav
    case wavS16 = "wav-s16"
    case f32le
    case s16le

    var container: PCMSink.Container { self == .wav || self == .wavS16 ? .wav : .raw }
    var sampleFormat: PCMSink.SampleFormat { self == .wav || self == .f32le ? .f32le : .s16le }
}

enum RenderModeOption: String, CaseIterable, ExpressibleByArgument {
    case fillScreen = "fill-screen"
    case fillEdge = "fill-edge"

    var mode: RenderMode { self == .fillScreen ? .fillScreen : .fillEdge }
}
