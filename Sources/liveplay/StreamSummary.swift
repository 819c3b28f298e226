import Foundation
import LivePlay
import LivePlayManifest

/// The stream description, laid out for a person, in ffprobe's words where it has them (profile names, frame
/// rates, kb/s).
struct StreamSummary {
    let text: String

    /// - Parameters:
    ///   - span: what the packets span, for a file read to its end.
    ///   - fileSize: the file's bytes, for the measured bitrate.
    init(_ description: StreamDescription, span: PacketSpan? = nil, fileSize: Int64? = nil) {
        var lines: [String] = []
        if let header = description.header {
            lines.append("FLV version \(header.version): audio flag \(header.hasAudio), video flag \(header.hasVideo)")
        }
        if let video = description.video {
            var line = "video: \(video.codec.rawValue) \(video.width)x\(video.height), "
            line += "profile \(ProfileName.of(video)), "
            line += "level \(video.level), chroma \(video.chromaFormat), \(video.bitDepth)-bit"
            if let rate = description.frameRate { line += ", \(Self.framesPerSecond(rate)) fps" }
            lines.append(line)
        } else {
            lines.append("video: none")
        }
        if let audio = description.audio {
            let channels = Wording.count(audio.channels, "channel")
            lines.append("audio: \(audio.codec.rawValue) \(audio.sampleRate) Hz, \(channels)")
        } else {
            lines.append("audio: none")
        }
        let keyframes = Wording.count(description.keyframeCount, "keyframe")
        lines.append(
            "packets: \(description.videoPacketCount) video (\(keyframes)), "
                + "\(description.audioPacketCount) audio; warnings: \(description.warningCount)")
        if let seconds = span?.seconds, seconds > 0 {
            var line = "duration: \(Self.seconds(seconds))"
            if let fileSize { line += ", bitrate: \(Self.kilobits(Double(fileSize), over: seconds))" }
            line += " (measured from the packets)"
            if let claimed = description.metadata?.duration, claimed > 0 {
                line += "; the metadata claims \(Self.seconds(claimed))"
                if let bytes = description.metadata?.fileSize, bytes > 0 {
                    line += ", \(Self.kilobits(bytes, over: claimed))"
                }
            }
            lines.append(line)
        }
        if let metadata = description.metadata {
            lines.append("metadata:")
            for property in metadata.values {
                lines.append("  \(property.key): \(Self.format(property.value))")
            }
        }
        text = lines.joined(separator: "\n")
    }

    /// A frame rate rounded as ffprobe's stream line rounds it (libavformat's `print_fps`): whole numbers as they
    /// are (`30`), others to two decimals (`29.97`, not 29.97002997…).
    static func framesPerSecond(_ rate: Double) -> String {
        let hundredths = Int64(Float(rate * 100).rounded(.toNearestOrEven))
        if hundredths == 0 { return String(format: "%1.4f", rate) }
        if hundredths % 100 != 0 { return String(format: "%3.2f", rate) }
        if hundredths % 100_000 != 0 { return String(format: "%1.0f", rate) }
        return String(format: "%1.0fk", rate / 1000)
    }

    static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }

    /// Bits a second in whole kilobits, as ffprobe prints `bitrate: 218 kb/s`.
    static func kilobits(_ bytes: Double, over seconds: Double) -> String {
        "\(Int64(bytes * 8 / seconds) / 1000) kb/s"
    }

    static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    static func format(_ value: AMF0Value) -> String {
        switch value {
        case .number(let number): format(number)
        case .boolean(let flag): String(flag)
        case .string(let text), .longString(let text), .xmlDocument(let text): "\"\(text)\""
        case .null: "null"
        case .undefined: "undefined"
        case .reference(let index): "reference #\(index)"
        case .date(let milliseconds, _): "date \(format(milliseconds)) ms"
        case .strictArray(let values): "[" + values.map(format).joined(separator: ", ") + "]"
        case .object(let properties), .ecmaArray(let properties), .typedObject(_, let properties):
            "{" + properties.map { "\($0.key): \(format($0.value))" }.joined(separator: ", ") + "}"
        }
    }
}

/// A LAS manifest's renditions, laid out for a person: one line each, lowest bitrate first, with its backups and
/// what the manifest says of it (URLs redacted).
struct ManifestSummary {
    let text: String

    init(_ manifest: LASManifest) {
        let start = manifest.startRendition
        var lines = ["LAS manifest, version \(manifest.version): \(Wording.count(manifest.renditions.count, "rendition"))"]
        if let group = manifest.groupOfPictures { lines[0] += ", GOP \(group.milliseconds) ms" }
        for rendition in manifest.renditions {
            var line = "rendition \(rendition.id): \(rendition.maxBitrate) kbit/s"
            if let width = rendition.width, let height = rendition.height { line += ", \(width)x\(height)" }
            if let rate = rendition.frameRate { line += ", \(StreamSummary.framesPerSecond(rate)) fps" }
            if let codec = rendition.codec { line += ", \(codec)" }
            if let quality = rendition.qualityTypeName ?? rendition.qualityType { line += ", “\(quality)”" }
            let notes = [
                rendition.id == start.id ? "plays first" : nil, rendition.hidden ? "hidden from the viewer" : nil,
                rendition.disabledFromAdaptive ? "never chosen by adaptation" : nil,
            ].compactMap { $0 }
            if !notes.isEmpty { line += " (\(notes.joined(separator: ", ")))" }
            lines.append(line)
            lines.append("  \(Redaction.url(rendition.url))")
            for backup in rendition.backupURLs { lines.append("  backup: \(Redaction.url(backup))") }
        }
        text = lines.joined(separator: "\n")
    }
}
