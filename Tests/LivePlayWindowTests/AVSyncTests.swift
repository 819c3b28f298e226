import Foundation
import LivePlay
import LivePlayLab
import LivePlayTesting
import LivePlayWindow
import Logging
import Testing

/// A/V sync with the sound device as the master clock, over 60 s: a stream with a white flash and a 1 kHz beep at
/// the start of every second (`Fixture.flashBeep`), from the lab's GOP-cached server through the impairment proxy (a
/// reset at 20 s), with `DeviceAudioSink` on SDL's disk driver (which takes sound at the device's real pace). It
/// plays with a fixed 3 s cache, and at 6 s switches to 1 s with catching up by rate only (speed's 1.2× and gain, no
/// skip): about ten seconds of time-stretched sound. A flash is seen when the player presents its picture; a beep is
/// heard when the device gets to it: the time its block was queued, plus what the device still held then, plus its
/// place in the block. Pairs the machine stalled over (``StallWatch``) are left out; 40 of about 47 must remain.
@Suite(.serialized) struct AVSyncTests {
    /// When each flash's picture was presented.
    final class Flashes: VideoSink, @unchecked Sendable {
        private let lock = NSLock()
        private var bright = false
        private(set) var seen: [(pts: Int64, at: ContinuousClock.Instant)] = []

        func present(_ frame: VideoFrame, timing: FrameTiming) {
            // Mean of every 16th luma sample: the flash is white, the rest black.
            let mean = frame.withPlanes { planes -> Double in
                guard let luma = planes.first else { return 0 }
                var sum = 0
                var count = 0
                for row in stride(from: 0, to: luma.rows, by: 4) {
                    for column in stride(from: 0, to: luma.rowBytes, by: 4) {
                        sum += Int(luma.bytes[row * luma.stride + column])
                        count += 1
                    }
                }
                return Double(sum) / Double(max(1, count))
            }
            let now = ContinuousClock.now
            lock.withLock {
                if mean > 128, !bright { seen.append((timing.pts.milliseconds, now)) }
                bright = mean > 128
            }
        }

        var flashes: [(pts: Int64, at: ContinuousClock.Instant)] { lock.withLock { seen } }
    }

    /// The device, and when each beep's first loud sample will be heard.
    final class Beeps: AudioSink, @unchecked Sendable {
        let device: DeviceAudioSink
        private let lock = NSLock()
        private var lastLoud: ContinuousClock.Instant?
        private(set) var heard: [(pts: Int64, at: ContinuousClock.Instant, queuedAt: ContinuousClock.Instant)] = []

        init(device: DeviceAudioSink) { self.device = device }

        func play(_ audio: AudioSamples) {
            // What the device holds, at the instant it held it: between the two readings of the clock (a thread
            // put off between reading the device and the clock would otherwise move the beep by that long).
            let before = ContinuousClock.now
            let held = device.unplayedDuration ?? .zero
            let queuedAt = before + (ContinuousClock.now - before) / 2
            device.play(audio)
            let channels = max(1, audio.channels)
            lock.withLock {
                for index in stride(from: 0, to: audio.samples.count, by: channels) where abs(audio.samples[index]) > 0.05 {
                    let offset = Duration.seconds(Double(index / channels) / Double(audio.sampleRate))
                    let at = queuedAt + held + offset
                    if lastLoud.map({ at - $0 > .milliseconds(500) }) ?? true {
                        heard.append((audio.pts.milliseconds + Int64(offset.seconds * 1000 * audio.rate), at, queuedAt))
                    }
                    lastLoud = at
                }
            }
        }

        var unplayedDuration: Duration? { device.unplayedDuration }
        var beeps: [(pts: Int64, at: ContinuousClock.Instant, queuedAt: ContinuousClock.Instant)] {
            lock.withLock { heard }
        }
    }

    @Test func flashAndBeepStayWithin45MillisecondsOnTheDeviceClock() async throws {
        let sound = NSTemporaryDirectory() + "liveplay-av-\(UUID().uuidString).raw"
        defer { try? FileManager.default.removeItem(atPath: sound) }
        setenv("SDL_AUDIODRIVER", "disk", 1)
        setenv("SDL_DISKAUDIOFILE", sound, 1)
        var logger = Logger(label: "av")
        logger.logLevel = .critical
        let server = try LiveFLVServer(
            path: try Fixture.flashBeep.path(), configuration: .init(port: 0, threads: 1), logger: logger)
        let port = try await server.start()
        let proxy = ImpairmentProxy(upstreamPort: port, timeline: try .parse("at=20s reset"), logger: logger)
        let proxyPort = try await proxy.start()
        let flashes = Flashes()
        let device = try DeviceAudioSink()
        let beeps = Beeps(device: device)
        let watch = StallWatch()
        let started = ContinuousClock.now
        let catchUp = {
            var parameters = LatencyParameters.preset(.speed)
            parameters.skipExcess = .seconds(10)
            return parameters
        }()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(proxyPort)/live.flv",
            configuration: LivePlayConfiguration(connectRetryInterval: .milliseconds(500), latency: .fixed(.seconds(3))),
            limit: .seconds(60), videoSink: flashes, audioSink: beeps,
            script: { probe in
                // The scenario's schedule (the catch-up at 6 s, over before the proxy's reset at 20 s on its own
                // clock), as the suite's doc gives it: 6 s of the session's own clock, by its net status.
                _ = await eventually(within: .seconds(30)) { probe.statuses.contains { $0.elapsedMilliseconds >= 6000 } }
                probe.control.send(.latency(catchUp))
            })
        device.close()
        await proxy.stop()
        await server.stop()
        let stalls = watch.stop()
        // Seconds left out: until 2 s after playback began (the first picture shows before the sound starts), and
        // from the reset until 2 s after playback began again. The catch-up itself is in.
        func at(_ event: PlayEvent) -> ContinuousClock.Instant { started + .milliseconds(event.elapsedMilliseconds) }
        let began = recording.events.first { $0.code == .playBegin }.map(at)
        let catchUpStart = recording.events.first { $0.code == .catchUpStarted }.map(at)
        let caughtUp = recording.events.first { $0.code == .catchUpEnded }.map(at)
        let reset = recording.events.first { $0.code == .reconnect }.map(at)
        let resumed = recording.events.last { $0.code == .playBegin }.map(at)
        #expect(catchUpStart != nil && caughtUp != nil && reset != nil, "a catch-up and a reconnect: \(recording.codes)")
        var offsets: [(second: Double, milliseconds: Int64)] = []
        var leftOut = 0
        for flash in flashes.flashes {
            guard let beep = beeps.beeps.min(by: { abs($0.pts - flash.pts) < abs($1.pts - flash.pts) }),
                abs(beep.pts - flash.pts) < 300
            else { continue }
            if let began, flash.at < began + .seconds(2) { continue }
            if let reset, let resumed, flash.at >= reset - .seconds(1), flash.at < resumed + .seconds(2) { continue }
            // Nor a pair the machine stalled over (``StallWatch``): from the beep's block being queued to the later
            // of flash and beep.
            let from = min(beep.queuedAt, flash.at), to = max(flash.at, beep.at)
            if watch.stalled(from: from, to: to, margin: .milliseconds(50)) {
                leftOut += 1
                continue
            }
            offsets.append(((flash.at - started).seconds, (flash.at - beep.at).milliseconds))
        }
        let values = offsets.map(\.milliseconds)
        let mean = values.isEmpty ? 0 : Double(values.reduce(0, +)) / Double(values.count)
        print(
            "A/V on the device clock: \(values.count) flash/beep pairs, mean \(String(format: "%.1f", mean)) ms, "
                + "max |offset| \(values.map(abs).max() ?? -1) ms (picture after sound > 0): \(values); "
                + "\(leftOut) left out for the machine's stalls \(stalls)")
        #expect(values.count >= 40, "most of the 60 s compared: \(offsets)")
        #expect(values.allSatisfy { abs($0) <= 45 }, "\(offsets)")
        let after = offsets.filter { pair in resumed.map { pair.second > ($0 - started).seconds } ?? false }
        #expect(after.count >= 30, "compared again after the reconnect, to the end: \(offsets)")
        let during = offsets.filter { pair in
            guard let catchUpStart, let caughtUp else { return false }
            return pair.second > (catchUpStart - started).seconds && pair.second < (caughtUp - started).seconds
        }
        #expect(during.count >= 5, "compared while the sound was time-stretched: \(offsets)")
    }
}
