import Foundation
import LivePlay
import LivePlayLab
import LivePlayTesting
import LivePlayWindow
import Logging
import Testing

/// What the sound device plays in a real session, read back from SDL's `disk` driver: at rate 1.0 the decoded
/// samples themselves (against ffmpeg's decode of the same file), during a catch-up shorter by the catch-up amount
/// with the pitch kept, and at the volume and mute set, with no click when they change.
@Suite(.serialized) struct DeviceSoundTests {
    /// Forwards to the device and remembers what it gave, block by block.
    final class Tee: AudioSink, @unchecked Sendable {
        struct Block {
            var pts: Int64
            var rate: Double
            /// Where the block starts in what the device was given, in samples.
            var offset: Int
            var count: Int
            var queuedAt: ContinuousClock.Instant
        }

        let device: DeviceAudioSink
        private let lock = NSLock()
        private var storedBlocks: [Block] = []
        private var storedGiven: [Float] = []

        init(device: DeviceAudioSink) { self.device = device }

        func play(_ audio: AudioSamples) {
            lock.withLock {
                precondition(audio.channels == 1 && audio.sampleRate == 44_100, "the fixture's sound is 44.1 kHz mono")
                storedBlocks.append(
                    Block(
                        pts: audio.pts.milliseconds, rate: audio.rate, offset: storedGiven.count,
                        count: audio.samples.count, queuedAt: .now))
                storedGiven += audio.samples
            }
            device.play(audio)
        }

        var unplayedDuration: Duration? { device.unplayedDuration }
        var blocks: [Block] { lock.withLock { storedBlocks } }
        var given: [Float] { lock.withLock { storedGiven } }
    }

    @Test func theDevicePlaysTheDecodedSoundShortensItByTheCatchUpAndScalesIt() async throws {
        let sound = NSTemporaryDirectory() + "liveplay-device-sound-\(UUID().uuidString).raw"
        defer { try? FileManager.default.removeItem(atPath: sound) }
        setenv("SDL_AUDIODRIVER", "disk", 1)
        setenv("SDL_DISKAUDIOFILE", sound, 1)
        let path = try Fixture.longH264AAC.path()
        // ffmpeg's decode of the same file: the 440 Hz tone as libavcodec gives it, from the file's first sample.
        let decoded = try ExternalTool.check(
            "ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-vn", "-f", "f32le", "-ac", "1", "-"]
        ).standardOutput.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let program = try LiveFLVProgram(contentsOfFile: path)
        let firstAudio = Int64(try #require(program.tags.first { $0.type == 8 }).timestamp)
        var logger = Logger(label: "sound")
        logger.logLevel = .critical
        let server = try LiveFLVServer(path: path, configuration: .init(port: 0, threads: 1), logger: logger)
        let port = try await server.start()
        let device = try DeviceAudioSink()
        let tee = Tee(device: device)
        // Rate-only catch-up from a 3 s cache to 1 s (no skip), then volume 50, mute, unmute at volume 100. The script
        // ends the session; the limit only guards against a hang, so it outlasts the script's longest path (4 s of
        // sound, the catch-up's 15 s at most, 1 s, 3 × 1.5 s, after a start of about a second). At 24 s it cut the
        // last stretch short one run in three: the catch-up from 3 s to 1 s takes 13–15 s, which put the unmute at
        // 22.7–24.0 s.
        let changes = Locked<[String: ContinuousClock.Instant]>([:])
        let catchUpAsked = Locked<ContinuousClock.Instant?>(nil)
        // Until the device has been given `seconds` more of sound: each stretch is measured in what was played, so a
        // loaded machine cannot shorten it.
        let soundFor: @Sendable (Double) async -> Void = { seconds in
            let mark = tee.given.count
            _ = await eventually(within: .seconds(15)) { tee.given.count >= mark + Int(seconds * 44_100) }
        }
        // Not a measure here: the moments the machine stalled are printed, to tell a stall from a fault if it fails.
        let watch = StallWatch()
        let recording = await SessionRecording.record(
            "http://127.0.0.1:\(port)/live.flv",
            configuration: LivePlayConfiguration(latency: .fixed(.seconds(3))), limit: .seconds(40),
            audioSink: tee,
            script: { probe in
                await soundFor(4)
                var catchUp = LatencyParameters.preset(.speed)
                catchUp.skipExcess = .seconds(10)
                catchUpAsked.set(.now)
                probe.control.send(.latency(catchUp))
                _ = await probe.wait(for: .catchUpEnded, timeout: .seconds(15))
                await soundFor(1)
                for name in ["volume 50", "mute", "unmute"] {
                    changes.set(changes.get().merging([name: .now]) { $1 })
                    switch name {
                    case "volume 50": probe.control.send(.volume(50))
                    case "mute": probe.control.send(.mute(true))
                    default:
                        probe.control.send(.mute(false))
                        probe.control.send(.volume(100))
                    }
                    await soundFor(1.5)
                }
                probe.stop()
            })
        // Until the device has played what it was given (expectation 1 below allows for what it still held).
        _ = await eventually(within: .seconds(2)) { DeviceAudioSinkTests.written(sound) >= tee.given.count }
        device.close()
        await server.stop()
        let stalls = watch.stop()
        print("the machine's stalls during the run: \(stalls)")
        let blocks = tee.blocks
        let given = tee.given
        let written = try Data(contentsOf: URL(fileURLWithPath: sound)).withUnsafeBytes {
            Array($0.bindMemory(to: Float.self))
        }
        let held = HeardSound(heard: written, given: given)
        let heard = held.aligned
        let catchUp = recording.events.filter { $0.code == .catchUpStarted || $0.code == .catchUpEnded }
        #expect(catchUp.count >= 2, "a catch-up began and ended: \(recording.codes)")

        // 1. The device played what it was given, sample for sample (all but what was still queued at the end), with
        // silence only where SDL adds it: at most one buffer before the first sound, and where the queue ran dry,
        // which the player's 120 ms lead allows only when the machine stalled.
        print("silence the device added: \(held.gaps)")
        #expect(held.mismatchAt == nil, "the device plays what it is given; it differs at sample \(held.mismatchAt ?? -1)")
        #expect(heard.count >= given.count - 44_100 / 2, "\(heard.count) of \(given.count) samples reached the device")
        #expect(held.leadingSilence <= 1024, "\(held.leadingSilence) samples of silence before the sound")
        let longStalls = stalls.filter { $0.duration >= .milliseconds(60) }
        #expect(held.underruns.count <= longStalls.count, "the device ran dry \(held.underruns) with \(longStalls) stalls")

        // 2. At rate 1.0, before the catch-up, that is the decoded sound: a run of whole blocks matches ffmpeg's
        // decode at the place their timestamps say (found to within a block's rounding), sample for sample.
        let rateOneUntil = try #require(catchUpAsked.get(), "the catch-up was asked for")
        let steady = blocks.dropFirst(3).prefix { $0.rate == 1 && $0.queuedAt < rateOneUntil }
        let run = try #require(steady.first, "blocks at rate 1.0 before the catch-up")
        let runLength = steady.reduce(0) { $0 + $1.count }
        let fileTime = (run.pts - firstAudio) % Int64(program.loopPeriod)
        let expected = Int(fileTime * 44_100 / 1000)
        let length = min(runLength, decoded.count - expected - 64)
        #expect(length >= 44_100, "a second or more at rate 1.0 within one loop of the file: \(length)")
        func error(_ lag: Int) -> Double {
            var sum = 0.0
            for index in 0..<length {
                let difference = Double(given[run.offset + index] - decoded[expected + lag + index])
                sum += difference * difference
            }
            return sum
        }
        let lag = (-64...64).filter { expected + $0 >= 0 }.min { error($0) < error($1) } ?? 0
        let signal = (0..<length).reduce(0.0) { $0 + Double(decoded[expected + lag + $1] * decoded[expected + lag + $1]) }
        let snr = 10 * log10(signal / max(error(lag), 1e-30))
        print("rate 1.0: \(length) samples against ffmpeg's decode at \(lag) samples from the timestamp: \(snr) dB")
        #expect(snr >= 60, "the decoded samples as decoded: \(snr) dB")

        // 3. The catch-up: the sound is shorter than the media it carries by what the catch-up removed, about the
        // 2 s from the 3 s cache to 1 s, less the dead band; its timestamps run on with no gap; its pitch is kept.
        let stretched = blocks.filter { $0.rate > 1.01 }
        #expect(!stretched.isEmpty, "sound was time-stretched")
        let playedSeconds = Double(blocks.reduce(0) { $0 + $1.count }) / 44_100
        let mediaSeconds = Double(blocks.last!.pts - blocks.first!.pts) / 1000 + Double(blocks.last!.count) / 44_100
        let removed = mediaSeconds - playedSeconds
        print("catch-up: \(stretched.count) blocks stretched (max rate \(stretched.map(\.rate).max() ?? 1)), "
            + "\(String(format: "%.3f", mediaSeconds)) s of media in \(String(format: "%.3f", playedSeconds)) s of sound")
        #expect(removed > 1.3 && removed < 2.2, "the catch-up removed \(removed) s")
        let gaps = zip(blocks, blocks.dropFirst()).map { previous, next in
            Double(next.pts - previous.pts) / 1000 - Double(previous.count) / 44_100 * previous.rate
        }
        #expect(gaps.allSatisfy { abs($0) < 0.05 }, "no jump in the sound's timestamps: \(gaps.map { abs($0) }.max() ?? 0)")
        // Pitch: zero crossings over windows of stretched sound, as played, give 440 Hz (not 440 × rate).
        let first = stretched[stretched.count / 4]
        let window = Array(heard[first.offset..<min(heard.count, first.offset + 22_050)])
        let crossings = zip(window, window.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        let pitch = Double(crossings) / (Double(window.count) / 44_100)
        print("pitch during catch-up at rate \(first.rate): \(pitch) Hz")
        #expect(abs(pitch - 440) < 440 * 0.02, "the pitch is kept: \(pitch) Hz at rate \(first.rate)")

        // 4. Volume and mute at the device: over the middle of each stretch, the gain from ffmpeg's decode of the
        // same media (found by each block's timestamp) to what the device played, so a quiet stretch of the file
        // cannot pass for a change of volume.
        let moments = changes.get()
        let volume50 = try #require(moments["volume 50"]), mute = try #require(moments["mute"])
        let unmute = try #require(moments["unmute"])
        func level(from: ContinuousClock.Instant, to: ContinuousClock.Instant) -> (source: Double, gain: Double) {
            var source = 0.0, played = 0.0, count = 0
            for block in blocks where block.queuedAt > from + .milliseconds(200) && block.queuedAt < to - .milliseconds(100) {
                let at = Int((block.pts - firstAudio) % Int64(program.loopPeriod) * 44_100 / 1000)
                guard block.rate == 1, at + block.count <= decoded.count, block.offset + block.count <= heard.count
                else { continue }
                source += decoded[at..<(at + block.count)].reduce(0.0) { $0 + Double($1 * $1) }
                played += heard[block.offset..<(block.offset + block.count)].reduce(0.0) { $0 + Double($1 * $1) }
                count += block.count
            }
            guard count > 0 else { return (-1, -1) }
            return (sqrt(source / Double(count)), sqrt(played / max(source, 1e-30)))
        }
        let full = level(from: volume50 - .milliseconds(900), to: volume50)
        let half = level(from: volume50, to: mute)
        let muted = level(from: mute, to: unmute)
        let restored = level(from: unmute, to: unmute + .milliseconds(1400))
        print("gain at the device: 100 → \(full.gain), 50 → \(half.gain), muted → \(muted.gain), unmuted → \(restored.gain) "
            + "(the file's tone at RMS \(full.source), \(half.source), \(muted.source), \(restored.source))")
        for stretch in [full, half, muted, restored] {
            #expect(stretch.source > 0.05, "the file has the tone in each stretch: RMS \(stretch.source)")
        }
        #expect(abs(full.gain - 1) < 0.03, "volume 100 plays the tone as decoded: \(full.gain)")
        #expect(abs(half.gain - 0.5) < 0.03, "volume 50 halves it: \(half.gain)")
        #expect(muted.gain >= 0 && muted.gain < 1e-4, "mute silences it: \(muted.gain)")
        #expect(abs(restored.gain - 1) < 0.03, "unmute restores it: \(restored.gain)")
        // No click: around each change the sample-to-sample step stays that of the tone itself (2π·440/44 100 of
        // its peak), where a step in gain would jump by up to the peak.
        let peak = Double(decoded.prefix(44_100).map(abs).max() ?? 0)
        for (name, moment) in moments {
            let near = blocks.filter { abs(($0.queuedAt - moment).seconds) < 0.4 }
            guard let start = near.first?.offset, let end = near.last.map({ $0.offset + $0.count }), end <= heard.count
            else { continue }
            let step = zip(heard[start..<end], heard[(start + 1)..<end]).map { Double(abs($1 - $0)) }.max() ?? 0
            #expect(step < peak * 2 * Double.pi * 440 / 44_100 * 1.5, "no click at \(name): a step of \(step)")
        }
    }
}
