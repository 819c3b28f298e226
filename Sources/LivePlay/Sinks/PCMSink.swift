import Foundation
import LivePlayCore

/// Writes the sound it is given as WAV or raw PCM, to a file or to standard output
/// (`liveplay URL --audio-out - --audio-format raw | ffplay -f f32le -ar 44100 -ch_layout mono -`).
///
/// - The first block fixes the sample rate and channel count; nothing is written before it (no sound, an
///   empty file). Neither WAV nor raw PCM can change format mid-stream, and liveplay has no resampler, so a
///   block with another rate or channel count (the server switched encoders) is skipped and counted in
///   ``skippedBlocks``; start a new sink to follow the change.
/// - WAV: float32 (`WAVE_FORMAT_IEEE_FLOAT`, with a `fact` chunk) or s16 (`WAVE_FORMAT_PCM`), channels in
///   the stream's order without a channel mask. Sizes are written as 0xFFFFFFFF (the streaming convention
///   ffmpeg and sox read to the end of input), and on ``finish(timeout:)`` a regular file gets the real
///   sizes patched in; a pipe keeps the streaming ones. Past 4 GiB the sizes stay 0xFFFFFFFF.
/// - s16 is converted as libswresample does: round to nearest, clip.
/// - Not a real-time device: ``unplayedDuration`` is `nil`, so the player's clock stays the master.
/// - Writing happens on the sink's own thread behind a ``WriteQueueLimits`` queue (``WriteQueueLimits/audio``
///   by default); when it is full the newest block is dropped and counted in ``droppedBlocks``.
///
public final class PCMSink: AudioSink, Sendable {
    /// The file format around the samples.
    public enum Container: String, Sendable, Hashable, CaseIterable {
        /// RIFF WAVE with a 44-byte (s16) or 58-byte (float) header.
        case wav
        /// Samples only, interleaved: the reader must be told the format.
        case raw
    }

    /// How each sample is stored (little-endian, ffmpeg's names).
    public enum SampleFormat: String, Sendable, Hashable, CaseIterable {
        /// 32-bit IEEE float, exactly the samples the player produces.
        case f32le
        /// Signed 16-bit.
        case s16le

        public var bytesPerSample: Int {
            switch self {
            case .f32le: 4
            case .s16le: 2
            }
        }
    }

    private let writer: SinkWriter<PCMOutput>

    /// Opens the output (a file is created or truncated now, so a bad path fails here).
    /// - Parameter onFailure: told once, on the writer's thread, when a write fails or the reader of a pipe goes
    ///   away (``LivePlayError/Code/outputClosed``).
    public init(
        output: SinkOutput, container: Container = .wav, sampleFormat: SampleFormat = .f32le,
        queueLimits: WriteQueueLimits = .audio, onFailure: (@Sendable (LivePlayError) -> Void)? = nil
    ) throws(LivePlayError) {
        let file = try OutputFile(output)
        writer = SinkWriter(
            name: "liveplay-pcm", output: PCMOutput(file: file, container: container, sampleFormat: sampleFormat),
            limits: queueLimits, onFailure: onFailure)
    }

    /// `path` `-` is standard output.
    public convenience init(
        path: String, container: Container = .wav, sampleFormat: SampleFormat = .f32le,
        queueLimits: WriteQueueLimits = .audio, onFailure: (@Sendable (LivePlayError) -> Void)? = nil
    ) throws(LivePlayError) {
        try self.init(
            output: SinkOutput(argument: path), container: container, sampleFormat: sampleFormat,
            queueLimits: queueLimits, onFailure: onFailure)
    }

    deinit {
        // Released without `finish()`: still drain, patch and close; the error has no one to go to.
        _ = writer.finish(timeout: .seconds(10))
    }

    /// Queues the block for the writer thread; never waits.
    public func play(_ audio: AudioSamples) {
        _ = writer.submit(audio, bytes: audio.samples.count * MemoryLayout<Float>.size)
    }

    /// `nil`: a file or a pipe does not play in real time.
    public var unplayedDuration: Duration? { nil }

    /// Blocks written to the output.
    public var writtenBlocks: Int { writer.snapshot.written }
    /// Blocks not written because their sample rate or channel count differs from the first block's.
    public var skippedBlocks: Int { writer.snapshot.skipped }
    /// Blocks dropped because the writer queue was full (or abandoned by a ``finish(timeout:)`` that timed
    /// out).
    public var droppedBlocks: Int { writer.snapshot.dropped }
    /// What stopped the sink (``LivePlayError/Code/outputClosed`` when the reader of a pipe went away);
    /// blocks played after it are ignored.
    public var error: LivePlayError? { writer.error }

    /// Writes what is queued, patches the WAV sizes of a regular file, closes the output (a file; standard
    /// output stays open) and waits for the writer thread; after `timeout` the rest is abandoned. Throws
    /// the error that stopped the sink, if any.
    public func finish(timeout: Duration = .seconds(10)) throws(LivePlayError) {
        if let error = writer.finish(timeout: timeout) { throw error }
    }
}

/// A RIFF WAVE header for interleaved little-endian PCM (Microsoft's RIFF/WAVE specification, 1991,
/// with the IEEE float tag and `fact` chunk of its 1994 update).
struct WAVHeader: Hashable {
    var sampleRate: Int
    var channels: Int
    var sampleFormat: PCMSink.SampleFormat

    /// Written where a size is unknown: readers take it as "until the end of input".
    static let unknownSize: UInt32 = 0xFFFF_FFFF

    private var isFloat: Bool { sampleFormat == .f32le }
    /// `fmt ` body: 16 bytes for PCM; 18 (with `cbSize`) for non-PCM tags.
    private var formatChunkSize: Int { isFloat ? 18 : 16 }
    var length: Int { 12 + 8 + formatChunkSize + (isFloat ? 12 : 0) + 8 }
    /// Where the `fact` chunk's sample count is, for float.
    var factSampleCountOffset: Int? { isFloat ? 12 + 8 + formatChunkSize + 8 : nil }
    var dataSizeOffset: Int { length - 4 }

    /// The header for `dataBytes` of samples, or with streaming sizes when `nil`.
    func bytes(dataBytes: Int?) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(length)
        let bytesPerFrame = channels * sampleFormat.bytesPerSample
        func ascii(_ text: String) { output.append(contentsOf: text.utf8) }
        func little32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { output.append(contentsOf: $0) } }
        func little16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { output.append(contentsOf: $0) } }
        let sizes = dataBytes.map { Self.fieldSizes(length: length, dataBytes: $0, bytesPerFrame: bytesPerFrame) }
        ascii("RIFF")
        little32(sizes?.riff ?? Self.unknownSize)
        ascii("WAVE")
        ascii("fmt ")
        little32(UInt32(formatChunkSize))
        little16(isFloat ? 3 : 1)  // WAVE_FORMAT_IEEE_FLOAT, WAVE_FORMAT_PCM
        little16(UInt16(clamping: channels))
        little32(UInt32(clamping: sampleRate))
        little32(UInt32(clamping: sampleRate * bytesPerFrame))
        little16(UInt16(clamping: bytesPerFrame))
        little16(UInt16(sampleFormat.bytesPerSample * 8))
        if isFloat {
            little16(0)  // cbSize
            ascii("fact")
            little32(4)
            // Frames per channel; 0 is "unknown" to ffmpeg, where 0xFFFFFFFF would be a 27-hour duration.
            little32(sizes?.frames ?? 0)
        }
        ascii("data")
        little32(sizes?.data ?? Self.unknownSize)
        return output
    }

    /// The RIFF, data and frame-count fields for a finished file, or the streaming values past 4 GiB.
    static func fieldSizes(
        length: Int, dataBytes: Int, bytesPerFrame: Int
    ) -> (riff: UInt32, data: UInt32, frames: UInt32) {
        guard let riff = UInt32(exactly: length - 8 + dataBytes), let data = UInt32(exactly: dataBytes) else {
            return (unknownSize, unknownSize, 0)
        }
        return (riff, data, UInt32(dataBytes / max(1, bytesPerFrame)))
    }
}

/// The writer-thread half of ``PCMSink``.
final class PCMOutput: QueuedOutput {
    var watchedFile: OutputFile? { file }

    private let file: OutputFile
    private let container: PCMSink.Container
    private let sampleFormat: PCMSink.SampleFormat
    /// Fixed by the first block.
    private var header: WAVHeader?
    private var dataBytes = 0

    init(file: OutputFile, container: PCMSink.Container, sampleFormat: PCMSink.SampleFormat) {
        self.file = file
        self.container = container
        self.sampleFormat = sampleFormat
    }

    func write(_ audio: AudioSamples, isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome {
        guard audio.sampleRate > 0, audio.channels > 0 else { return WriteOutcome(skipped: 1) }
        if let header {
            guard header.sampleRate == audio.sampleRate, header.channels == audio.channels else {
                return WriteOutcome(skipped: 1)
            }
        } else {
            let header = WAVHeader(sampleRate: audio.sampleRate, channels: audio.channels, sampleFormat: sampleFormat)
            self.header = header
            if container == .wav { try file.append(header.bytes(dataBytes: nil), isAbandoned: isAbandoned) }
        }
        // Whole frames only: a partial one would shift every channel after it.
        let samples = audio.samples.prefix(audio.samples.count - audio.samples.count % audio.channels)
        let bytes = Self.encode(samples, as: sampleFormat)
        try file.append(bytes, isAbandoned: isAbandoned)
        dataBytes += bytes.count
        return WriteOutcome(written: 1)
    }

    func close(isAbandoned: () -> Bool) throws(LivePlayError) -> WriteOutcome {
        if container == .wav, let header, file.isRegularFile {
            let sizes = WAVHeader.fieldSizes(
                length: header.length, dataBytes: dataBytes,
                bytesPerFrame: header.channels * sampleFormat.bytesPerSample)
            try file.overwrite(Self.little32(sizes.riff), at: 4)
            if let offset = header.factSampleCountOffset { try file.overwrite(Self.little32(sizes.frames), at: offset) }
            try file.overwrite(Self.little32(sizes.data), at: header.dataSizeOffset)
        }
        try file.close()
        return WriteOutcome()
    }

    func abort() {
        file.abort()
    }

    static func encode(_ samples: ArraySlice<Float>, as format: PCMSink.SampleFormat) -> [UInt8] {
        let count = samples.count
        return [UInt8](unsafeUninitializedCapacity: count * format.bytesPerSample) { buffer, written in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            switch format {
            case .f32le:
                for (index, sample) in samples.enumerated() {
                    raw.storeBytes(of: sample.bitPattern.littleEndian, toByteOffset: index * 4, as: UInt32.self)
                }
            case .s16le:
                for (index, sample) in samples.enumerated() {
                    let scaled = (sample * 32768).rounded(.toNearestOrEven)
                    let value = scaled.isNaN ? 0 : Int16(max(-32768, min(32767, scaled)))
                    raw.storeBytes(of: value.littleEndian, toByteOffset: index * 2, as: Int16.self)
                }
            }
            written = count * format.bytesPerSample
        }
    }

    private static func little32(_ value: UInt32) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}
