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
        /// From reading the first byte to the first decoded picture or sound.
        var firstFrameSeconds: Double?
    }

    @Argument(help: "The FLV file.")
    var file: String

    @Option(help: "libavcodec threads per decoder (0: one per core).")
    var threads = 1

    @Option(help: "Bytes read from the file at a time.")
    var chunkSize = 64 << 10

    @Flag(help: "Stop at the first decoded picture or sound (the first-frame rows of bench/run).")
    var firstFrame = false

    func validate() throws {
        guard threads >= 0 else { throw ValidationError("--threads must not be negative") }
        guard chunkSize >= 1 else { throw ValidationError("--chunk-size must be at least 1") }
    }

    func run() throws {
        let clock = ContinuousClock()
        let start = clock.now
        // The decode stage LiveSession plays with (configuration changes, drains, errors), frames dropped.
        let reader = try MediaReader(
            path: file,
            options: MediaReader.Options(
                decodes: true, decoder: DecoderOptions(threadCount: threads), chunkSize: chunkSize))
        var counts = Counts()
        var firstFrameSeconds: Double?
        while let event = try reader.next() {
            counts.count(event)
            if firstFrameSeconds == nil, counts.videoFrames + counts.audioFrames > 0 {
                firstFrameSeconds = seconds(start.duration(to: clock.now))
                if firstFrame { break }
            }
        }
        let wall = seconds(start.duration(to: clock.now))
        let processor = ProcessorTime.now()
        try printJSONLine(
            Result(
                file: file, threads: threads, videoFrames: counts.videoFrames, audioFrames: counts.audioFrames,
                decodeErrors: counts.decodeErrors, streamSeconds: rounded(counts.streamSeconds, places: 3),
                userSeconds: rounded(processor.user), systemSeconds: rounded(processor.system),
                cpuSeconds: rounded(processor.total), wallSeconds: rounded(wall),
                firstFrameSeconds: firstFrameSeconds.map { rounded($0) }))
    }
}

/// Counts what the reader found; frames are dropped.
private struct Counts {
    private(set) var videoFrames = 0
    private(set) var audioFrames = 0
    private(set) var decodeErrors = 0
    private var firstMilliseconds: Int64?
    private var lastMilliseconds: Int64 = 0

    var streamSeconds: Double {
        guard let firstMilliseconds else { return 0 }
        return Double(lastMilliseconds - firstMilliseconds) / 1000
    }

    mutating func count(_ event: MediaEvent) {
        switch event {
        case .element(.packet(let packet)):
            let milliseconds = packet.dts.milliseconds
            if firstMilliseconds == nil { firstMilliseconds = milliseconds }
            lastMilliseconds = max(lastMilliseconds, milliseconds)
        case .element:
            break
        case .videoFrame:
            videoFrames += 1
        case .audioFrame:
            audioFrames += 1
        case .decodeError:
            decodeErrors += 1
        }
    }
}
