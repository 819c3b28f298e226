import ArgumentParser
import Foundation
import LivePlay

/// Demuxes a file and decodes all its video and audio into a null sink, reporting the CPU time it took.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Demux and decode all video and audio of a file to nowhere; report CPU and wall time."
    )

    /// What one `decode` run prints.
    struct Result: Encodable {
        var benchmark = "decode"
        var file: String
        var threads: Int
        var videoFrames: Int
        var audioFrames: Int
        var decodeErrors: Int
        /// Media time covered: last packet timestamp minus first, in seconds.
        var streamSeconds: Double
        /// Whole-process `getrusage(RUSAGE_SELF)` at the end, so start-up and file reading count too.
        var userSeconds: Double
        var systemSeconds: Double
        var cpuSeconds: Double
        /// From reading the first byte to the last frame out.
        var wallSeconds: Double
    }

    @Argument(help: "The FLV file.")
    var file: String

    @Option(help: "libavcodec threads per decoder (0: one per core).")
    var threads = 1

    @Option(help: "Bytes read from the file at a time.")
    var chunkSize = 64 << 10

    func validate() throws {
        guard threads >= 0 else { throw ValidationError("--threads must not be negative") }
        guard chunkSize >= 1 else { throw ValidationError("--chunk-size must be at least 1") }
    }

    func run() throws {
        guard let handle = FileHandle(forReadingAtPath: file) else { throw ValidationError("cannot open \(file)") }
        defer { try? handle.close() }
        let clock = ContinuousClock()
        let start = clock.now
        var pipeline = DecodePipeline(options: DecoderOptions(threadCount: threads))
        var demuxer = FLVDemuxer()
        var ended = false
        while !ended {
            if let data = try handle.read(upToCount: chunkSize), !data.isEmpty {
                demuxer.append(data)
            } else {
                demuxer.finish()
                ended = true
            }
            while let element = try demuxer.nextElement() {
                try pipeline.handle(element)
            }
        }
        pipeline.flush()
        let wall = seconds(start.duration(to: clock.now))
        let processor = ProcessorTime.now()
        try printJSONLine(
            Result(
                file: file, threads: threads, videoFrames: pipeline.videoFrames, audioFrames: pipeline.audioFrames,
                decodeErrors: pipeline.decodeErrors, streamSeconds: rounded(pipeline.streamSeconds, places: 3),
                userSeconds: rounded(processor.user), systemSeconds: rounded(processor.system),
                cpuSeconds: rounded(processor.total), wallSeconds: rounded(wall)))
    }
}

/// Routes demuxed elements to one video and one audio decoder and counts what comes out; frames are dropped.
private struct DecodePipeline {
    let options: DecoderOptions
    private var video: VideoDecoder?
    private var audio: AudioDecoder?
    private(set) var videoFrames = 0
    private(set) var audioFrames = 0
    private(set) var decodeErrors = 0
    private var firstMilliseconds: Int64?
    private var lastMilliseconds: Int64 = 0

    init(options: DecoderOptions) {
        self.options = options
    }

    var streamSeconds: Double {
        guard let firstMilliseconds else { return 0 }
        return Double(lastMilliseconds - firstMilliseconds) / 1000
    }

    mutating func handle(_ element: FLVElement) throws {
        switch element {
        case .videoConfiguration(let configuration):
            if let video { count(video.flush()) }
            video = try VideoDecoder(configuration: configuration, options: options)
        case .audioConfiguration(let configuration):
            if let audio { count(audio.flush()) }
            audio = try AudioDecoder(configuration: configuration, options: options)
        case .packet(let packet):
            let milliseconds = packet.dts.milliseconds
            if firstMilliseconds == nil { firstMilliseconds = milliseconds }
            lastMilliseconds = max(lastMilliseconds, milliseconds)
            if packet.kind == .video {
                if let video { count(video.decode(packet)) }
            } else if let audio {
                count(audio.decode(packet))
            }
        default:
            break
        }
    }

    mutating func flush() {
        if let video { count(video.flush()) }
        if let audio { count(audio.flush()) }
    }

    private mutating func count(_ output: DecodeOutput<VideoFrame>) {
        videoFrames += output.frames.count
        decodeErrors += output.errors.count
    }

    private mutating func count(_ output: DecodeOutput<AudioFrame>) {
        audioFrames += output.frames.count
        decodeErrors += output.errors.count
    }
}
