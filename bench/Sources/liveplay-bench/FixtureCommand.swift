import ArgumentParser
import Foundation
import LivePlayTesting

/// Writes one codec's Enhanced RTMP v2 FLV from a real encode, beside the elementary source it was made from,
/// so `bench/run` can decode both: liveplay the FLV, ffmpeg the source (Debian's ffmpeg reads no v2 FLV).
struct FixtureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fixture",
        abstract: "Write a codec's Enhanced RTMP v2 FLV and its elementary source; print their paths as JSON."
    )

    struct Result: Encodable {
        var benchmark = "fixture"
        var codec: String
        var flv: String
        var source: String
        var packets: Int
    }

    @Argument(help: "One of: \(EnhancedFixture.Codec.allCases.map(\.rawValue).joined(separator: ", ")).")
    var codec: String

    @Option(help: "Video size.")
    var size = "1280x720"

    @Option(help: "Video frames per second (a keyframe each second).")
    var fps = 30

    @Option(help: "Length in seconds.")
    var seconds = 20

    @Option(help: "Where the FLV goes; the source goes beside it with its own extension.")
    var output: String

    func validate() throws {
        guard EnhancedFixture.Codec(rawValue: codec) != nil else { throw ValidationError("unknown codec '\(codec)'") }
        guard fps > 0, seconds > 0 else { throw ValidationError("--fps and --seconds must be positive") }
    }

    func run() throws {
        let fixture = try EnhancedFixture.make(EnhancedFixture.Codec(rawValue: codec)!, seconds: seconds, size: size, fps: fps)
        let source = (output as NSString).deletingPathExtension + "-source." + (fixture.sourcePath as NSString).pathExtension
        let files = FileManager.default
        for (from, to) in [(fixture.path, output), (fixture.sourcePath, source)] {
            try? files.removeItem(atPath: to)
            try files.copyItem(atPath: from, toPath: to)
        }
        try? files.removeItem(atPath: fixture.path)
        try printJSONLine(Result(codec: codec, flv: output, source: source, packets: fixture.source.packets.count))
    }
}
