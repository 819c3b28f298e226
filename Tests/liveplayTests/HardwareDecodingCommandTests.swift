import Foundation
import LivePlayTesting
import Testing

@testable import liveplay

/// `--hwdec`: on this machine (no GPU, as CI's) a device asked for by name is one 2106 with its reason, and every
/// picture then comes from software, byte for byte what `--hwdec no` gives; `auto` falls back without a word. Where
/// a device does open, the same run checks that its pictures are software's.
@Suite struct HardwareDecodingCommandTests {
    /// What one `play FILE --frames N --video-out Y4M --json` printed: its events' codes and parameters, and the pictures.
    struct Played {
        var events: [(code: Int, parameters: [String: Any])] = []
        var pictures: Data
        var standardError: String
        var status: Int32

        init(_ path: String, hwdec: String) throws {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("hwdec-\(UUID().uuidString).y4m")
            defer { try? FileManager.default.removeItem(at: output) }
            let run = try Binary.run([
                path, "--hwdec", hwdec, "--frames", "60", "--video-out", output.path, "--json",
            ])
            for line in run.text.split(separator: "\n") where line.contains("\"kind\":\"event\"") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
                events.append((object["code"] as? Int ?? 0, object["params"] as? [String: Any] ?? [:]))
            }
            pictures = try Data(contentsOf: output)
            standardError = run.standardError
            status = run.status
        }

        func count(_ code: Int) -> Int { events.filter { $0.code == code }.count }
        var summary: [String: Any]? { events.last { $0.code == 9006 }?.parameters }
    }

    @Test(arguments: ["nvdec", "vaapi"])
    func aDeviceThatCannotDecodeIsOne2106AndEveryPictureFromSoftware(_ device: String) throws {
        let path = try Fixture.h264BFramesAAC.path()
        let software = try Played(path, hwdec: "no")
        let asked = try Played(path, hwdec: device)
        #expect(software.status == 0 && asked.status == 0, "\(asked.standardError)")
        #expect(software.count(2106) == 0 && software.summary?["decoder"] as? String == "h264 (software)")
        #expect(asked.count(2108) == 0)
        #expect(asked.pictures.count > 60 * 320 * 240, "60 pictures written")
        #expect(asked.pictures == software.pictures, "the same pictures, byte for byte")
        if asked.summary?["decoder"] as? String == "h264 (\(device))" {
            // A machine with the device: it decoded, and said nothing.
            #expect(asked.count(2106) == 0)
            return
        }
        #expect(asked.count(2106) == 1, "\(asked.events.map(\.code))")
        let warning = try #require(asked.events.first { $0.code == 2106 }?.parameters)
        #expect(warning["device"] as? String == device)
        #expect((warning["reason"] as? String)?.contains("cannot open the \(device) device") == true, "\(warning)")
        #expect(warning["decoder"] as? String == "h264 (software)")
        #expect(asked.summary?["decoder"] as? String == "h264 (software)")
        // libavutil's own words are the reason, not a second warning on stderr.
        #expect(!asked.standardError.contains("AVHWDeviceContext"), "\(asked.standardError)")
    }

    @Test func autoFallsBackQuietly() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let auto = try Played(path, hwdec: "auto")
        #expect(auto.status == 0)
        #expect(auto.count(2106) == 0 && auto.count(2108) == 0, "\(auto.events.map(\.code))")
        #expect(!auto.standardError.contains("AVHWDeviceContext") && !auto.standardError.contains("CUDA"))
        let decoder = auto.summary?["decoder"] as? String
        #expect(["h264 (software)", "h264 (nvdec)", "h264 (vaapi)"].contains(decoder ?? ""), "\(String(describing: decoder))")
    }

    @Test func aChoiceThatIsNotOneIsAUsageErrorNamingTheChoices() throws {
        let output = try Binary.run(["demo", "--hwdec", "bogus"])
        #expect(output.status == ExitStatus.usage)
        for choice in ["auto", "nvdec", "vaapi", "no"] { #expect(output.standardError.contains("'\(choice)'")) }
        #expect(try Binary.run(["monitor", "--hwdec", "cuda"]).status == ExitStatus.usage)
        #expect(try Binary.run(["inspect", "x.flv", "--hwdec", "gpu"]).status == ExitStatus.usage)
    }
}
