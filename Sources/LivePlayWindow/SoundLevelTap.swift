import Foundation
public import LivePlay
import Synchronization

/// The window's sound sink: passes the sound on to the device (or, with none, to nothing: the player's own clock then
/// leads, as without a sink) and measures the level of what is heard for the audio-only card's meter.
///
/// The level is the peak of each 50 ms of sound, in dBFS, falling back at most 20 dB a second (a peak programme
/// meter's release), counted in samples, so the meter neither flickers nor depends on when the sound was handed over.
/// It is measured after the player's volume and mute (which are applied before any sink) and reaches the meter when
/// the sound is queued, which is the device's queue (about 0.15 s) before it is heard.
public final class SoundLevelTap: AudioSink, Sendable {
    /// The device, or nil when none opened.
    public let device: DeviceAudioSink?
    private let onLevel: @Sendable (Double) -> Void
    private let meter = Mutex(PeakMeter())

    public init(device: DeviceAudioSink?, onLevel: @escaping @Sendable (Double) -> Void) {
        self.device = device
        self.onLevel = onLevel
    }

    public var maximumChannels: Int? { 2 }
    public var unplayedDuration: Duration? { device?.unplayedDuration }
    public func fadeOutUnplayed() { device?.fadeOutUnplayed() }

    public func play(_ audio: AudioSamples) {
        device?.play(audio)
        let levels = meter.withLock { $0.measure(audio) }
        for level in levels { onLevel(level) }
    }
}

/// Peaks over 50 ms blocks of sound with a falling hold: a value with no clock, the sound's own samples its time.
struct PeakMeter {
    static let block = 0.05
    /// dB a second the reading falls when the sound gets quieter.
    static let release = 20.0

    private var blockPeak: Float = 0
    private var blockFrames = 0
    private(set) var reading = -Double.infinity

    /// Takes `audio` in; the readings of the blocks it completed.
    mutating func measure(_ audio: AudioSamples) -> [Double] {
        let channels = max(1, audio.channels)
        let blockLength = max(1, Int(Double(audio.sampleRate) * Self.block))
        var readings: [Double] = []
        var frame = 0
        let frames = audio.samples.count / channels
        while frame < frames {
            let take = min(frames - frame, blockLength - blockFrames)
            for sample in audio.samples[(frame * channels)..<((frame + take) * channels)] {
                blockPeak = max(blockPeak, abs(sample))
            }
            frame += take
            blockFrames += take
            guard blockFrames == blockLength else { continue }
            let peak = blockPeak > 0 ? 20 * Double(log10(blockPeak)) : -Double.infinity
            let fallen = reading.isFinite ? reading - Self.release * Self.block : -Double.infinity
            reading = max(peak, fallen < AudioOnlyCard.meterFloor ? -Double.infinity : fallen)
            readings.append(reading)
            (blockPeak, blockFrames) = (0, 0)
        }
        return readings
    }
}
