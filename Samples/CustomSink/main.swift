// custom-sink URL [SECONDS]
//
// A front end's own outputs: a VideoSink that measures each picture's mean brightness and an AudioSink
// that measures loudness (RMS, dBFS), printing both once a second of stream time. Sinks are called on the
// play loop at each frame's presentation time, so they do little work and return quickly; sound arrives
// as interleaved Float32 already time-stretched to the playback rate. The caption on screen (CEA-608 from
// the stream's SEI, or its script-data text) comes with each picture: printed when it changes.
import Foundation
import LivePlay

/// Writes a line at once (stdout is block-buffered when piped; a monitor's lines must not wait).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

final class BrightnessSink: VideoSink {
    private var lastPrinted: MediaTimestamp?
    private var caption: String?

    func present(_ frame: VideoFrame, timing: FrameTiming) {
        if timing.caption != caption {
            caption = timing.caption
            say(String(format: "%8.3f s  caption: ", Double(timing.pts.milliseconds) / 1000)
                + (caption.map { $0.replacingOccurrences(of: "\n", with: " / ") } ?? "(none)"))
        }
        if let lastPrinted, timing.pts.milliseconds - lastPrinted.milliseconds < 1000 { return }
        lastPrinted = timing.pts
        // For 8-bit YUV the first width × height bytes are the luma plane.
        let bytes = frame.packedBytes()
        let luma = bytes.prefix(frame.width * frame.height)
        let mean = luma.isEmpty ? 0 : Double(luma.reduce(0) { $0 + Int($1) }) / Double(luma.count)
        say(String(format: "%8.3f s  picture %dx%d  brightness %5.1f / 255  late %d ms", Double(timing.pts.milliseconds) / 1000,
            frame.width, frame.height, mean, timing.position.milliseconds - timing.pts.milliseconds))
    }
}

final class LoudnessSink: AudioSink {
    private var sum = 0.0
    private var count = 0
    private var windowStart: MediaTimestamp?

    func play(_ audio: AudioSamples) {
        for sample in audio.samples { sum += Double(sample * sample) }
        count += audio.samples.count
        let start = windowStart ?? audio.pts
        windowStart = start
        guard audio.pts.milliseconds - start.milliseconds >= 1000, count > 0 else { return }
        let decibels = 10 * log10(max(sum / Double(count), 1e-12))
        say(String(format: "%8.3f s  sound %d Hz × %d  %6.1f dBFS  rate %.2fx", Double(audio.pts.milliseconds) / 1000,
            audio.sampleRate, audio.channels, decibels, audio.rate))
        (sum, count, windowStart) = (0, 0, audio.pts)
    }

    /// Not a sound device: the player's own clock paces it.
    var unplayedDuration: Duration? { nil }
}

let arguments = CommandLine.arguments.dropFirst()
guard let url = arguments.first else {
    FileHandle.standardError.write(Data("usage: custom-sink URL [SECONDS]\n".utf8))
    exit(64)
}
let seconds = arguments.dropFirst().first.flatMap { Double($0) } ?? 10
let player = LivePlayer(videoSink: BrightnessSink(), audioSink: LoudnessSink())
try player.startPlay(url)
try await Task.sleep(for: .seconds(seconds))
await player.stopPlay()
