import Foundation
import LivePlayCore
import LivePlayDecode

/// The captions of a playback written as WebVTT (`--captions-out FILE.vtt`): a listener that takes each
/// `LIVEPLAY_EVT_CAPTION` as it comes and writes it as a cue, on a writer thread of its own (``SinkWriter``), so the
/// listener never waits on the disk. Cue times are the captions' stream times (for a file, its own timeline).
///
/// ```swift
/// let captions = try WebVTTFile(path: "talk.vtt")
/// player.listener = captions   // or call captions.onPlayEvent from your own listener
/// …
/// try captions.finish()
/// ```
public final class WebVTTFile: LivePlayListener, Sendable {
    private let writer: SinkWriter<EncodedItemsOutput<Caption>>

    /// Creates (or truncates) the file and writes its header now, so a bad path fails here. `-` is standard output.
    /// `onFailure` is told once, on the writer's thread, when a write fails or the reader of a pipe goes away.
    public init(path: String, onFailure: (@Sendable (LivePlayError) -> Void)? = nil) throws(LivePlayError) {
        let file = try OutputFile(SinkOutput(argument: path))
        try file.append(Array("WEBVTT\n".utf8), isAbandoned: { false })
        let output = EncodedItemsOutput<Caption>(file: file) { Array(Self.cue($0).utf8) }
        writer = SinkWriter(
            name: "liveplay-vtt", output: output, limits: WriteQueueLimits(items: 4096, bytes: 8 << 20),
            onFailure: onFailure)
    }

    deinit {
        _ = writer.finish(timeout: .seconds(10))
    }

    public func onPlayEvent(_ event: PlayEvent) {
        guard let caption = event.caption else { return }
        _ = writer.submit(caption, bytes: caption.text.utf8.count + 64)
    }

    /// Captions dropped because the writer queue was full (the disk stalled).
    public var droppedCaptions: Int { writer.snapshot.dropped }

    /// Writes what is queued and closes the file; throws what stopped the writer, if anything did.
    public func finish(timeout: Duration = .seconds(10)) throws(LivePlayError) {
        if let error = writer.finish(timeout: timeout) { throw error }
    }

    /// A cue: a blank line, `start --> end`, the text (a blank line inside a cue would end it, so none is kept;
    /// `&`, `<` and `>` are escaped, so the text is never read as markup or a timing line).
    static func cue(_ caption: Caption) -> String {
        let text = caption.text.split(separator: "\n", omittingEmptySubsequences: true).joined(separator: "\n")
            .replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
        return "\n\(timestamp(caption.start)) --> \(timestamp(caption.end))\n\(text)\n"
    }

    /// `hh:mm:ss.ttt`, hours as many digits as they need.
    static func timestamp(_ time: MediaTimestamp) -> String {
        let milliseconds = max(0, time.milliseconds)
        let hours = milliseconds / 3_600_000
        let minutes = milliseconds / 60_000 % 60
        let seconds = milliseconds / 1000 % 60
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = String(milliseconds % 1000)
        return "\(two(hours)):\(two(minutes)):\(two(seconds)).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
