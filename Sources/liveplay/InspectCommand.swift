import ArgumentParser
import LivePlay
import LivePlayManifest
import Logging

import Foundation
import Synchronization

struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Describe an FLV file, live URL or LAS manifest; list a file's packets or frames as JSON lines.",
        discussion: """
            Without --packets or --frames, prints the stream description for a person. With them, stdout \
            carries only JSON objects, one per line (see docs/event-log.md), and the description and any \
            warnings go to stderr. A live URL (http(s)://, rtmp(s)://) is watched for --duration seconds \
            without decoding, then described with what arrived. A file's description gives the duration its \
            packets span and the bitrate that makes, beside what its metadata claims. When the reader of stdout \
            goes away (`| head`), inspect stops and succeeds. A LAS manifest (a path or URL ending in .json) \
            is read and its renditions listed, lowest bitrate first, with the one playback starts on.

            Exit codes: 0 success; 64 bad usage; 65 not playable (not FLV, or an FLV header with no audio or \
            video, or a manifest that is not LAS or cannot be played); 66 the input does not exist or is a directory; 69 a live URL could not be watched; 74 \
            reading failed.
            """
    )

    @Argument(help: "The FLV file to read (a path or file:// URL), a live URL to watch, or a LAS manifest (.json).")
    var file: String

    @Option(parsing: .unconditional, help: "Seconds to watch a live URL.")
    var duration: Double = 3

    @Flag(help: "Print one JSON object per demuxed packet.")
    var packets = false

    @Flag(help: "Decode, and print one JSON object per decoded frame with its framemd5-compatible MD5.")
    var frames = false

    @Option(help: "PCM format audio frames are hashed in: s16le (ffmpeg's framemd5 default) or f32le.")
    var audioHash: AudioHashFormat = .s16le

    @Option(parsing: .unconditional, help: "libavcodec threads per decoder (0 = one per core, at most 64).")
    var threads = 1

    @Option(help: HardwareDecodingOption.help)
    var hwdec: HardwareDecodingOption = .no

    func validate() throws {
        do {
            _ = try StreamAddress(parsing: file)
        } catch {
            throw ValidationError("cannot inspect \(Redaction.url(file)): \(error.message)")
        }
        guard (0...64).contains(threads) else { throw ValidationError("--threads must be 0…64") }
        try Seconds.check(duration, "--duration")
        if isLive || LASManifest.names(file), packets || frames {
            throw ValidationError("--packets and --frames read FLV files, not live URLs or manifests")
        }
    }

    private var isLive: Bool { (try? StreamURL.kind(of: file)).map { $0 != .file } ?? false }

    /// The local path a plain path or a `file://` URL names.
    private var path: String { (try? StreamAddress(parsing: file))?.path ?? file }

    func run() async throws {
        // A reader that goes away (`| head`) is a write error to handle, not a fatal signal.
        signal(SIGPIPE, SIG_IGN)
        CodecLog.route(minimum: .warning) { _, text in Standard.error("liveplay: " + text) }
        if LASManifest.names(file) {
            try await describeManifest()
            return
        }
        if isLive {
            try await describeLive()
            return
        }
        // `play`'s check first: a directory says so, a missing file says "no such file".
        do {
            try StreamURL.check(file)
        } catch {
            Standard.error("liveplay: \(error.message)")
            throw ExitCode(ExitStatus.noInput)
        }
        let listsItems = packets || frames
        let reader: MediaReader
        do {
            reader = try MediaReader(
                path: path,
                options: MediaReader.Options(
                    decodes: frames, decoder: DecoderOptions(threadCount: threads, hardware: hwdec.value),
                    demuxer: FLVDemuxer.Configuration(allTracks: packets && !frames)))
        } catch {
            throw failure(error)
        }
        var output = OutputBuffer()
        var span = PacketSpan()
        // Which track plays, and each track's FourCC, as the stream said: for the packet lines.
        var playing: [MediaKind: UInt8] = [:]
        var codecs: [TrackKey: String] = [:]
        do {
            while !output.isClosed, let event = try reader.next() {
                switch event {
                case .element(.packet(let packet)):
                    if packet.track == playing[packet.kind] ?? 0 { span.add(packet) }
                    if packets { output.write(Self.packetLine(packet, codec: codecs[TrackKey(packet.kind, packet.track)])) }
                case .element(.videoConfiguration(let video)):
                    codecs[TrackKey(.video, playing[.video] ?? 0)] = FLVVideoFourCC(codec: video.codec)?.name
                case .element(.audioConfiguration(let audio)):
                    codecs[TrackKey(.audio, playing[.audio] ?? 0)] = FLVAudioFourCC(codec: audio.codec)?.name
                case .element(.tracks(let tracks)):
                    for track in tracks {
                        codecs[TrackKey(track.kind, track.id)] = track.fourCC
                        if track.isActive { playing[track.kind] = track.id }
                    }
                case .element(.warning(let warning)):
                    Standard.error("warning: \(warning)")
                case .videoFrame(let frame):
                    output.write(Self.frameLine(frame))
                case .audioFrame(let frame):
                    output.write(Self.frameLine(frame, hash: audioHash.format))
                case .decodeError(let kind, let error):
                    Standard.error("warning: \(kind.rawValue) decode: \(error)")
                case .hardware(let notice, let decoder):
                    if let line = Self.hardwareLine(notice, decoder: decoder) { Standard.error(line) }
                default:
                    break
                }
            }
        } catch {
            output.flush()
            throw failure(error)
        }
        output.flush()
        // The reader of stdout went away (`| head`): it has what it wanted; stop quietly, as `play` does.
        if output.isClosed { return }
        let description = reader.description
        // Only for the measured bitrate: a size that cannot be read leaves the bitrate out, not the description.
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
        let text = StreamSummary(description, span: span, fileSize: size).text
        if listsItems {
            Standard.error(text)
        } else {
            output.write(text)
            output.flush()
        }
        // An FLV header and no media is not playable, for `inspect` as for `play` (exit 65).
        if description.videoPacketCount + description.audioPacketCount == 0 {
            Standard.error("liveplay: not playable: \(path) has an FLV header and no audio or video")
            throw ExitCode(ExitStatus.dataError)
        }
    }

    /// Lists a LAS manifest's renditions, lowest bitrate first, and which one playback starts on.
    private func describeManifest() async throws {
        let manifest: LASManifest
        do {
            manifest = try await LASManifest.read(file)
        } catch {
            Standard.error("liveplay: \(error.message)")
            throw ExitCode(
                error.code == .badManifest ? ExitStatus.dataError
                    : error.code == .sourceNotFound ? ExitStatus.noInput : ExitStatus.unavailable)
        }
        print(ManifestSummary(manifest).text)
    }

    /// Watches a live URL without decoding and describes what arrived.
    private func describeLive() async throws {
        var logger = Logger(label: "liveplay")
        logger.logLevel = .critical
        let (url, quiet, seconds) = (file, logger, duration)
        let failure = LockedFailure()
        let result = await withTaskGroup(of: (PlaybackOutcome, StreamDescription)?.self) { group in
            group.addTask {
                let session = LiveSession(
                    url: url, configuration: LivePlayConfiguration(connectRetryCount: 0, decodes: false),
                    clock: ContinuousClock(), logger: quiet)
                let outcome = await session.run { event in if event.code.isError { failure.set(event) } }
                return (outcome, session.description)
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            // The timer ends the watch: the session's task is cancelled and hands back what it saw.
            var described: (PlaybackOutcome, StreamDescription)?
            while let next = await group.next() {
                if let next { described = next }
                group.cancelAll()
            }
            return described
        }
        guard let (outcome, description) = result else { return }
        if case .failed(let code) = outcome {
            Standard.error("liveplay: \(failure.message ?? code.symbol)")
            throw ExitCode(code == .unplayable ? ExitStatus.dataError : ExitStatus.unavailable)
        }
        print(StreamSummary(description).text)
    }

    private func failure(_ error: LivePlayError) -> ExitCode {
        Standard.error("liveplay: \(error.message)")
        switch error.code {
        case .sourceNotFound: return ExitCode(ExitStatus.noInput)
        case .notFLV: return ExitCode(ExitStatus.dataError)
        default: return ExitCode(ExitStatus.ioError)
        }
    }

    static func packetLine(_ packet: EncodedPacket, codec: String?) -> String {
        var line = JSONLine()
        line.add("stream", packet.kind.rawValue)
        line.add("dts_ms", packet.dts.milliseconds)
        line.add("pts_ms", packet.pts.milliseconds)
        line.add("key", packet.isKeyframe)
        line.add("size", packet.size)
        line.add("track", Int(packet.track))
        if let codec { line.add("fourcc", codec) }
        return line.line
    }

    /// A track of one kind.
    struct TrackKey: Hashable {
        var kind: MediaKind
        var id: UInt8

        init(_ kind: MediaKind, _ id: UInt8) {
            self.kind = kind
            self.id = id
        }
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
        // A device's picture (NV12, P010) is also hashed as the planar picture software decodes to: the two compare.
        if let planar = frame.planarBytes(), planar.pixelFormat != frame.pixelFormat {
            line.add("planar_pix_fmt", planar.pixelFormat)
            line.add("planar_md5", planar.md5())
        }
        return line.line
    }

    /// What a device did, on stderr: a warning where `play` reports 2106 or 2108, else nothing.
    static func hardwareLine(_ notice: HardwareNotice, decoder: String) -> String? {
        switch notice {
        case .started, .unavailable(_, _, warns: false): nil
        case .unavailable(_, let reason, warns: true): "warning: hardware decoding did not start, \(decoder): \(reason)"
        case .firstKeyframeFailed(_, let reason), .failed(_, let reason):
            "warning: hardware decoding failed, \(decoder) from here: \(reason)"
        }
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

/// Collects stdout lines and writes them in large blocks; a failed write (the reader went away: `EPIPE` with
/// SIGPIPE ignored) closes it, and what follows is dropped.
struct OutputBuffer {
    private var pending = ""
    private(set) var isClosed = false

    mutating func write(_ line: String) {
        pending += line
        pending += "\n"
        if pending.utf8.count >= 64 << 10 { flush() }
    }

    mutating func flush() {
        defer { pending = "" }
        guard !pending.isEmpty, !isClosed else { return }
        do {
            try FileHandle.standardOutput.write(contentsOf: Data(pending.utf8))
        } catch {
            isClosed = true
        }
    }
}

enum Standard {
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// The error event that ended a live inspection, for its message.
private final class LockedFailure: Sendable {
    private let event = Mutex<PlayEvent?>(nil)

    func set(_ event: PlayEvent) { self.event.withLock { $0 = event } }
    var message: String? { event.withLock { $0?.message } }
}
