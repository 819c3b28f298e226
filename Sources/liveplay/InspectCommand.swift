import ArgumentParser
import LivePlay

import Foundation

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Describe an FLV file; list its packets or decoded frames as JSON lines.",
        discussion: """
            Without --packets or --frames, prints the stream description for a person. With them, stdout \
            carries only JSON objects, one per line (see docs/event-log.md), and the description and any \
            warnings go to stderr.
            """
    )

    @Argument(help: "The FLV file to read.")
    var file: String

    @Flag(help: "Print one JSON object per demuxed packet.")
    var packets = false

    @Flag(help: "Decode, and print one JSON object per decoded frame with its framemd5-compatible MD5.")
    var frames = false

    @Option(help: "PCM format audio frames are hashed in: s16le (ffmpeg's framemd5 default) or f32le.")
    var audioHash: AudioHashFormat = .s16le

    @Option(help: "libavcodec threads per decoder (0 = one per core).")
    var threads = 1

    func validate() throws {
        guard threads >= 0 else { throw ValidationError("--threads must be 0 or more") }
    }

    func run() throws {
        let listsItems = packets || frames
        let reader: MediaReader
        do {
            reader = try MediaReader(
                path: file, options: MediaReader.Options(decodes: frames, decoder: DecoderOptions(threadCount: threads)))
        } catch {
            throw failure(error)
        }
        var output = OutputBuffer()
        do {
            while let event = try reader.next() {
                switch event {
                case .element(.packet(let packet)) where packets:
                    output.write(Self.packetLine(packet))
                case .element(.warning(let warning)):
                    Standard.error("warning: \(warning)")
                case .videoFrame(let frame):
                    output.write(Self.frameLine(frame))
                case .audioFrame(let frame):
                    output.write(Self.frameLine(frame, hash: audioHash.format))
                case .decodeError(let kind, let error):
                    Standard.error("warning: \(kind.rawValue) decode: \(error)")
                default:
                    break
                }
            }
        } catch {
            output.flush()
            throw failure(error)
        }
        output.flush()
        let text = StreamSummary(reader.description).text
        if listsItems {
            Standard.error(text)
        } else {
            print(text)
        }
    }

    private func failure(_ error: LivePlayError) -> ExitCode {
        Standard.error("liveplay: \(error.message)")
        switch error.code {
        case .sourceNotFound: return ExitCode(ExitStatus.noInput)
        case .notFLV: return ExitCode(ExitStatus.dataError)
        default: return ExitCode(ExitStatus.ioError)
        }
    }

    static func packetLine(_ packet: EncodedPacket) -> String {
        var line = JSONLine()
        line.add("stream", packet.kind.rawValue)
        line.add("dts_ms", packet.dts.milliseconds)
        line.add("pts_ms", packet.pts.milliseconds)
        line.add("key", packet.isKeyframe)
        line.add("size", packet.size)
        return line.line
    }

    static func frameLine(_ frame: VideoFrame) -> String {
        var line = JSONLine()
        line.add("stream", "video")
        line.add("pts_ms", frame.pts.milliseconds)
        line.add("width", frame.width)
        line.add("height", frame.height)
        line.add("pix_fmt", frame.pixelFormat)
        line.add("size", frame.packedSize)
        line.add("md5", frame.md5())
        return line.line
    }

    static func frameLine(_ frame: AudioFrame, hash: AudioFrame.HashFormat) -> String {
        var line = JSONLine()
        line.add("stream", "audio")
        line.add("pts_ms", frame.pts.milliseconds)
        line.add("samples", frame.sampleCount)
        line.add("sample_rate", frame.sampleRate)
        line.add("channels", frame.channels)
        line.add("sample_fmt", frame.sampleFormat)
        line.add("md5_format", hash.rawValue)
        line.add("md5", frame.md5(as: hash))
        return line.line
    }
}

/// `--audio-hash` choices.
enum AudioHashFormat: String, CaseIterable, ExpressibleByArgument {
    case s16le
    case f32le

    var format: AudioFrame.HashFormat {
        switch self {
        case .s16le: .s16le
        case .f32le: .f32le
        }
    }
}

/// Collects stdout lines and writes them in large blocks.
struct OutputBuffer {
    private var pending = ""

    mutating func write(_ line: String) {
        pending += line
        pending += "\n"
        if pending.utf8.count >= 64 << 10 { flush() }
    }

    mutating func flush() {
        guard !pending.isEmpty else { return }
        print(pending, terminator: "")
        pending = ""
    }
}

enum Standard {
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
