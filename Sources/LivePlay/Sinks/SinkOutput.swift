import Foundation
import LivePlayCore

extension LivePlayError.Code {
    /// An output sink could not open or write its file (the message has the path and `strerror`).
    public static let outputFailed = LivePlayError.Code(rawValue: "output_failed")
    /// The reader of an output pipe went away (`EPIPE`): `liveplay … | head -c 1000` ends this way.
    public static let outputClosed = LivePlayError.Code(rawValue: "output_closed")
    /// An output sink's reader stopped reading and `finish` gave up waiting for it.
    public static let outputStalled = LivePlayError.Code(rawValue: "output_stalled")
    /// A sink was handed pictures or sound its file format cannot hold.
    public static let unsupportedOutputFormat = LivePlayError.Code(rawValue: "unsupported_output_format")
    /// A sink was configured with something it cannot use (a snapshot file pattern without a placeholder).
    public static let invalidOutput = LivePlayError.Code(rawValue: "invalid_output")
    /// A snapshot was asked for before any picture was presented.
    public static let noPicture = LivePlayError.Code(rawValue: "no_picture")
}

/// Where a file-writing sink puts its bytes.
public enum SinkOutput: Sendable, Hashable, CustomStringConvertible {
    /// The process's standard output (file descriptor 1), left open when the sink finishes.
    case standardOutput
    /// A file, created or truncated.
    case file(String)
    /// A descriptor the caller opened and closes (a pipe, a socket); the sink never closes it.
    case descriptor(Int32)

    /// The command-line convention: `-` is standard output, anything else a file path.
    public init(argument: String) {
        self = argument == "-" ? .standardOutput : .file(argument)
    }

    public var description: String {
        switch self {
        case .standardOutput: "standard output"
        case .file(let path): path
        case .descriptor(let descriptor): "file descriptor \(descriptor)"
        }
    }
}

/// How much a sink's writer queue holds before the play loop's newest item is dropped instead.
///
/// Both bounds apply; an item is always accepted into an empty queue, so one picture larger than `bytes`
/// is not dropped for ever.
public struct WriteQueueLimits: Sendable, Hashable {
    /// Items (frames, blocks of sound, snapshots) waiting to be written.
    public var items: Int
    /// Their payload bytes.
    public var bytes: Int

    public init(items: Int, bytes: Int) {
        self.items = max(1, items)
        self.bytes = max(1, bytes)
    }

    /// 32 frames or 64 MiB: about a second of 720p, two thirds of a second of 1080p (3 MiB a frame).
    public static let video = WriteQueueLimits(items: 32, bytes: 64 << 20)
    /// 256 blocks or 8 MiB: about six seconds of 44.1 kHz stereo in the player's 1024-sample blocks.
    public static let audio = WriteQueueLimits(items: 256, bytes: 8 << 20)
    /// 4 pictures or 64 MiB: periodic snapshots come seconds apart, so a backlog means a stuck disk.
    public static let snapshots = WriteQueueLimits(items: 4, bytes: 64 << 20)
}

/// What one call of a ``QueuedOutput`` did: items written to the output, or skipped because the format
/// cannot hold them.
struct WriteOutcome: Sendable {
    var written = 0
    var skipped = 0
}

/// The writer-thread half of a sink: everything it does may block on I/O. Its methods run only on the
/// ``SinkWriter``'s thread, one at a time, so it needs no lock of its own.
protocol QueuedOutput: AnyObject, SendableMetatype {
    associatedtype Item: Sendable

    /// Writes one item. `isAbandoned` turns true when ``SinkWriter/finish(timeout:)`` gives up; a write
    /// blocked on a stalled reader checks it and stops.
    func write(_ item: Item, isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome
    /// After the last item: writes what is still held, patches headers, closes.
    func close(isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome
    /// After an error or abandonment: releases the output without writing more.
    func abort()
    /// The pipe or socket the output writes to, watched while nothing is queued so that a reader who leaves is
    /// noticed without a write (`--captions-out - | head -1` before the first cue); nil (the default) for none.
    var watchedFile: OutputFile? { get }
}

extension QueuedOutput {
    var watchedFile: OutputFile? { nil }
}

/// The writer-thread half of a sink that writes each item as bytes of its own to one file (a JSON line of the
/// arrival trace, a WebVTT cue), in order, with nothing to patch at the end.
final class EncodedItemsOutput<Item: Sendable>: QueuedOutput {
    private let file: OutputFile
    private let encode: (Item) throws(LivePlayError) -> [UInt8]

    init(file: OutputFile, encode: @escaping (Item) throws(LivePlayError) -> [UInt8]) {
        self.file = file
        self.encode = encode
    }

    func write(_ item: Item, isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome {
        try file.append(try encode(item), isAbandoned: isAbandoned)
        return WriteOutcome(written: 1)
    }

    func close(isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome {
        try file.close()
        return WriteOutcome()
    }

    func abort() {
        file.abort()
    }

    var watchedFile: OutputFile? { file }
}
