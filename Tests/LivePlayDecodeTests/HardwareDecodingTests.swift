import LivePlay
import LivePlayTesting
import Testing

@testable import LivePlayDecode

/// Hardware decoding's choices and fallbacks, as values, and a video decoder that falls back without losing or
/// repeating a picture. No GPU here: a software decoder that fails on command stands in for the device
/// (``HardwareStandIn``), and a real device that does not open shows the 2106 path.
@Suite struct HardwareDecodingTests {
    // MARK: get_format's choice

    @Test func theDeviceFormatIsChosenWhenOfferedAndSoftwareOtherwise() {
        let cuda = HardwareFormatChoice.Offered(name: "cuda", isHardware: true)
        let vaapi = HardwareFormatChoice.Offered(name: "vaapi", isHardware: true)
        let yuv = HardwareFormatChoice.Offered(name: "yuv420p", isHardware: false)
        let nv12 = HardwareFormatChoice.Offered(name: "nv12", isHardware: false)
        #expect(HardwareFormatChoice.pick([cuda, yuv], device: "cuda") == .hardware(index: 0))
        #expect(HardwareFormatChoice.pick([yuv, cuda], device: "cuda") == .hardware(index: 1))
        // libavcodec's second call, after the device's decoder failed to start: software only.
        #expect(HardwareFormatChoice.pick([yuv], device: "cuda") == .software(index: 0))
        // Another device's format is not software.
        #expect(HardwareFormatChoice.pick([vaapi, nv12, yuv], device: "cuda") == .software(index: 1))
        #expect(HardwareFormatChoice.pick([vaapi], device: "cuda") == HardwareFormatChoice.Choice.none)
    }

    // MARK: The fallback counter

    @Test func theFirstKeyframeFailingFallsBackAtOnce() {
        var fallback = HardwareFallback()
        #expect(fallback.decoded(failed: false, pictures: 0) == .goOn, "a keyframe taken without a picture yet")
        #expect(fallback.decoded(failed: true, pictures: 0) == .firstKeyframeFailed)
    }

    @Test func threeFailedPacketsInARowFallBackWhilePlaying() {
        var fallback = HardwareFallback()
        #expect(fallback.decoded(failed: false, skipped: true, pictures: 0) == .goOn, "before the first keyframe")
        #expect(fallback.decoded(failed: false, pictures: 1) == .goOn)
        #expect(fallback.decoded(failed: true, pictures: 0) == .goOn)
        #expect(fallback.decoded(failed: true, pictures: 0) == .goOn)
        // A packet that decodes ends the run.
        #expect(fallback.decoded(failed: false, pictures: 1) == .goOn)
        #expect(fallback.consecutiveFailures == 0)
        #expect(fallback.decoded(failed: true, pictures: 0) == .goOn)
        #expect(fallback.decoded(failed: true, pictures: 0) == .goOn)
        #expect(fallback.decoded(failed: true, pictures: 0) == .failedWhilePlaying)
        // The packets dropped after a failure, waiting for a keyframe, count: the picture does not freeze for a GOP.
        var dropping = HardwareFallback()
        #expect(dropping.decoded(failed: false, pictures: 1) == .goOn)
        #expect(dropping.decoded(failed: true, pictures: 0) == .goOn)
        #expect(dropping.decoded(failed: false, skipped: true, pictures: 0) == .goOn)
        #expect(dropping.decoded(failed: false, skipped: true, pictures: 0) == .failedWhilePlaying)
        // A packet that failed but still gave a picture (a concealed one) is not a failure of the device.
        var concealing = HardwareFallback()
        #expect(concealing.decoded(failed: true, pictures: 1) == .goOn)
        #expect(concealing.consecutiveFailures == 0)
    }

    @Test func theChoicesAreMPVsNamesAndAutoTriesNVDECThenVAAPI() {
        #expect(HardwareDecoding.allCases.map(\.rawValue) == ["no", "auto", "nvdec", "vaapi"])
        #expect(HardwareDecoding.auto.devices == [.nvdec, .vaapi])
        #expect(HardwareDecoding.off.devices.isEmpty)
        #expect(!HardwareDecoding.auto.warns && HardwareDecoding.nvdec.warns && HardwareDecoding.vaapi.warns)
    }

    // MARK: A decoder that falls back

    /// A file's video decoded with `options`, packet by packet: the pictures as (pts, MD5 of the planar picture),
    /// what the device did, and the errors. `change` is asked before each packet for a new choice of hardware.
    struct Run {
        var pictures: [String] = []
        var notices: [HardwareNotice] = []
        var errors: [DecodeError] = []
        var description = ""

        init(
            _ path: String, options: DecoderOptions, change: (Int) -> HardwareDecoding? = { _ in nil }
        ) throws {
            let reader = try MediaReader(path: path, options: MediaReader.Options(decodes: false))
            var packets: [EncodedPacket] = []
            var configuration: VideoCodecConfiguration?
            while let event = try reader.next() {
                switch event {
                case .element(.videoConfiguration(let video)): configuration = configuration ?? video
                case .element(.packet(let packet)) where packet.kind == .video: packets.append(packet)
                default: break
                }
            }
            let decoder = try VideoDecoder(configuration: try #require(configuration), options: options)
            for (index, packet) in packets.enumerated() {
                if let hardware = change(index) { decoder.decode(on: hardware) }
                take(decoder.decode(packet))
            }
            take(decoder.flush())
            description = decoder.decoderDescription
        }

        private mutating func take(_ output: DecodeOutput<VideoFrame>) {
            pictures += output.frames.map { "\($0.pts.milliseconds) \($0.planarBytes()?.md5() ?? "?")" }
            notices += output.hardware
            errors += output.errors
        }
    }

    static func software(_ path: String) throws -> Run { try Run(path, options: DecoderOptions()) }

    static func standIn(failing: Set<Int>, hardware: HardwareDecoding = .nvdec) -> DecoderOptions {
        var options = DecoderOptions(hardware: hardware)
        options.standIn = HardwareStandIn(failing: failing)
        return options
    }

    @Test func aDeviceFailingOnTheFirstKeyframeGivesTheSamePicturesFromSoftware() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let expected = try Self.software(path)
        let run = try Run(path, options: Self.standIn(failing: [0]))
        #expect(run.notices.first == .started(.nvdec))
        #expect(run.notices.filter { if case .firstKeyframeFailed(.nvdec, _) = $0 { true } else { false } }.count == 1)
        #expect(run.pictures == expected.pictures, "every picture, the first keyframe's too, once")
        #expect(run.errors.isEmpty, "the device's failure is a notice (2108), not a decode error")
        #expect(run.description == "h264 (software)")
    }

    @Test func aDeviceFailingWhilePlayingHandsOverWithoutLosingOrRepeatingAPicture() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let expected = try Self.software(path)
        // One failed packet: the two dropped after it make three, and software decodes again from the keyframe.
        let run = try Run(path, options: Self.standIn(failing: [14]))
        let failed = run.notices.filter { if case .failed(.nvdec, _) = $0 { true } else { false } }
        #expect(failed.count == 1, "\(run.notices)")
        #expect(run.pictures == expected.pictures)
        #expect(run.description == "h264 (software)")
        // A device that does not fail decodes to the end.
        let working = try Run(path, options: Self.standIn(failing: []))
        #expect(working.pictures == expected.pictures)
        #expect(working.notices == [.started(.nvdec)])
        #expect(working.description == "h264 (nvdec)")
    }

    @Test func hardwareChosenWhilePlayingTakesOverAtTheNextKeyframeWithNoGap() throws {
        let path = try Fixture.h264BFramesAAC.path()
        let expected = try Self.software(path)
        // Software at first, the (stand-in) device from packet 10 on, software again from packet 40.
        let run = try Run(path, options: Self.standIn(failing: [], hardware: .off)) { index in
            switch index {
            case 10: .nvdec
            case 40: .off
            default: nil
            }
        }
        #expect(run.pictures == expected.pictures, "no picture lost or repeated at either change")
        #expect(run.notices.filter { $0 == .started(.nvdec) }.count == 1, "\(run.notices)")
    }

    @Test func aDeviceThatDoesNotOpenIsOneNoticeAndSoftware() throws {
        let path = try Fixture.h264AAC.path()
        let expected = try Self.software(path)
        for hardware in [HardwareDecoding.nvdec, .vaapi] {
            let device = try #require(hardware.devices.first)
            let run = try Run(path, options: DecoderOptions(hardware: hardware))
            #expect(run.pictures == expected.pictures, "\(hardware): the same pictures")
            if HardwareDevices.opens(device) {
                #expect(run.notices == [.started(device)])
                continue
            }
            guard case .unavailable(device, let reason, warns: true)? = run.notices.first, run.notices.count == 1 else {
                Issue.record("\(hardware): \(run.notices)")
                continue
            }
            #expect(reason.contains("cannot open the \(device) device"), "\(reason)")
            #expect(run.description == "h264 (software)")
        }
        // auto: quiet (a notice that does not warn), or a device.
        let auto = try Run(path, options: DecoderOptions(hardware: .auto))
        #expect(auto.pictures == expected.pictures)
        #expect(auto.notices.allSatisfy { if case .unavailable(_, _, warns: true) = $0 { false } else { true } })
    }
}
