import Dispatch
import Foundation
import LivePlayTesting
import Testing

/// `--loudness -16` on programmes made by ffmpeg at −30 and −8 LUFS: the WAV written measures −16 ± 1 LUFS by
/// ffmpeg's own `ebur128` filter (an independent meter), once settled (from 4 s: the gain starts at 400 ms and
/// then follows the 3 s window), with no sample above −1 dBFS; the net status carries the measure and the gain.
@Suite struct LoudnessCommandTests {
    /// A 10 s stereo programme at about `lufs`: pink noise (the quiet one) or a 1 kHz tone (the loud one), in FLV.
    static func programme(_ name: String, _ source: String, in folder: String) throws -> String {
        let path = "\(folder)/\(name).flv"
        let made = try ExternalTool.run(
            "ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", source, "-t", "10", "-ac", "2", "-c:a", "aac",
                "-b:a", "160k", path])
        try #require(made.status == 0, "\(made.standardError)")
        return path
    }

    /// ffmpeg's `ebur128` summary of `path` from `from` seconds: integrated loudness (LUFS) and sample peak (dBFS).
    static func measure(_ path: String, from: Double = 0) throws -> (loudness: Double, peak: Double) {
        let output = try ExternalTool.run(
            "ffmpeg", ["-hide_banner", "-nostats", "-ss", "\(from)", "-i", path, "-af", "ebur128=peak=sample", "-f",
                "null", "-"])
        func value(_ label: String) -> Double? {
            output.standardError.split(separator: "\n").last { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }
                .flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Double($0) } }
        }
        return (try #require(value("I:"), "\(output.standardError.suffix(500))"), try #require(value("Peak:")))
    }

    @Test func quietAndLoudProgrammesComeOutAtTheTargetWithoutAPeakAboveTheLimit() throws {
        let folder = NSTemporaryDirectory() + "liveplay-loudness-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // pink noise at amplitude 0.5 measures −20.6 LUFS and the 1 kHz tone at ffmpeg's default amplitude −21.1:
        // these gains bring them to about −30 and −8.
        let inputs = [
            try Self.programme("quiet", "anoisesrc=color=pink:amplitude=0.5:seed=7:sample_rate=48000,volume=-9.4dB", in: folder),
            try Self.programme("loud", "sine=frequency=1000:sample_rate=48000,volume=13.1dB", in: folder),
        ]
        let measuredIn = try inputs.map { try Self.measure($0) }
        #expect(abs(measuredIn[0].loudness + 30) <= 1 && abs(measuredIn[1].loudness + 8) <= 1, "\(measuredIn)")
        let runs = Locked<[Int: ExternalTool.Output]>([:])
        DispatchQueue.concurrentPerform(iterations: inputs.count) { index in
            let output = try? Binary.run([inputs[index], "--loudness", "-16", "--audio-out", "\(inputs[index]).wav", "--json"])
            runs.withLock { $0[index] = output }
        }
        for (index, input) in inputs.enumerated() {
            let run = try #require(runs.get()[index])
            #expect(run.status == 0, "\(run.standardError)")
            let out = try Self.measure("\(input).wav", from: 4)
            print("loudness: \(measuredIn[index].loudness) LUFS in, \(out.loudness) LUFS out, peak \(out.peak) dBFS")
            #expect(abs(out.loudness + 16) <= 1, "\(input): \(out.loudness) LUFS")
            #expect(out.peak <= -1, "\(input): a sample at \(out.peak) dBFS")
            let statuses = try EdgeTests.lines(run.text).filter { $0["kind"] as? String == "status" }
            let last = try #require(statuses.last?["status"] as? [String: Any], "\(run.text.suffix(400))")
            let measured = try #require(last["loudness_lufs"] as? Double, "\(last)")
            #expect(abs(measured - measuredIn[index].loudness) <= 1.5, "the programme's own loudness: \(measured)")
            #expect(last["loudness_gain_db"] as? Double != nil)
        }
    }

    @Test func aTargetOutOfRangeIsAUsageError() throws {
        let output = try Binary.run([try Fixture.audioOnly.path(), "--loudness", "-80"])
        #expect(output.status == 64 && output.standardError.contains("-70 to 0 LUFS"), "\(output.standardError)")
    }
}
