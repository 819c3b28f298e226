import LivePlayCore
import LivePlayFLV

/// # LivePlayFuzzing
///
/// The bodies of liveplay's fuzz targets: each takes arbitrary bytes, feeds them to a parser that reads
/// bytes from the network, and checks what must hold whatever the input (no crash, no hang, memory within
/// the configured bounds, the same result however the input is chunked). Each returns what went wrong, or
/// `nil`. The fuzzers in `fuzz/` call them under libFuzzer and AddressSanitizer and abort on a problem;
/// the normal test suite replays every input they ever failed on (`fuzz/regressions/`) and expects `nil`,
/// so a fixed bug stays fixed. No Foundation, no C: the same code runs in both.
public enum FuzzTargets {
    /// A demuxer's limits small enough that a fuzzer reaches them quickly.
    static let configuration = FLVDemuxer.Configuration(maximumTagSize: 1 << 16, maximumAMFDepth: 16)

    /// The FLV demuxer on a live byte stream, with the input choosing its own chunk boundaries (as FFmpeg's
    /// `target_dem_fuzzer` does): the first byte seeds the chunk sizes. The elements must equal those of the
    /// same stream fed whole, and codec configurations and SEI found in it are parsed too.
    public static func flvDemuxer(_ input: [UInt8]) -> String? {
        guard let seed = input.first else { return nil }
        let stream = Array(input.dropFirst())
        let chunked = demux(stream, chunkSizes: chunkSizes(seed: seed))
        let whole = demux(stream, chunkSizes: [max(1, stream.count)])
        // NaN in metadata is never equal to itself: differences that vanish in the text are none.
        guard chunked != whole, chunked.map(String.init(describing:)) != whole.map(String.init(describing:)) else {
            return nil
        }
        let index = zip(chunked, whole).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(chunked.count, whole.count)
        let (fed, atOnce) = (chunked.dropFirst(index).first, whole.dropFirst(index).first)
        return "chunking changed element \(index): \(String(describing: fed)) vs \(String(describing: atOnce))"
    }

    /// The AMF0 decoder on arbitrary bytes: values or a clean error, with nesting bounded.
    public static func amf0(_ input: [UInt8]) -> String? {
        var decoder = AMF0Decoder(input, maximumDepth: 16)
        _ = try? decoder.decodeAll()
        return nil
    }

    /// The codec configuration records and parameter sets: the first byte picks the parser. A record that
    /// parses must serialize back to bytes that parse to the same record.
    public static func codecConfiguration(_ input: [UInt8]) -> String? {
        guard let selector = input.first else { return nil }
        let body = input.dropFirst()
        switch selector % 6 {
        case 0:
            if let record = try? AVCDecoderConfigurationRecord(parsing: body),
                (try? AVCDecoderConfigurationRecord(parsing: record.serialized())) != record
            {
                return "avcC did not survive serializing: \(record)"
            }
        case 1:
            if let record = try? HEVCDecoderConfigurationRecord(parsing: body),
                (try? HEVCDecoderConfigurationRecord(parsing: record.serialized())) != record
            {
                return "hvcC did not survive serializing: \(record)"
            }
        case 2: _ = try? H264SequenceParameterSet(parsing: body)
        case 3: _ = try? HEVCSequenceParameterSet(parsing: body)
        case 4: _ = try? AudioSpecificConfig(parsing: body)
        default:
            let packet = EncodedPacket(kind: .video, dts: .zero, pts: .zero, isKeyframe: true, payload: Array(body))
            _ = SEIMessages.userData(in: packet, codec: selector & 0x80 == 0 ? .h264 : .hevc, nalLengthSize: 4)
        }
        return nil
    }

    /// The targets by name, as `fuzz/run` and the regression test know them.
    public static let all: [String: @Sendable ([UInt8]) -> String?] = [
        "FuzzFLV": flvDemuxer, "FuzzAMF": amf0, "FuzzCodecConfiguration": codecConfiguration,
    ]

    enum Outcome: Hashable {
        case element(FLVElement)
        case error(FLVError)
    }

    /// Chunk sizes from 1 to 256 bytes, cycling, derived from one byte.
    static func chunkSizes(seed: UInt8) -> [Int] {
        var state = UInt32(seed) &* 2_654_435_761 | 1
        return (0..<16).map { _ in
            state = state &* 1_103_515_245 &+ 12345
            return Int(state >> 24) + 1
        }
    }

    /// What the demuxer made of `stream` fed in chunks of `chunkSizes` (cycling): elements, then the error
    /// that stopped it, if any.
    static func demux(_ stream: [UInt8], chunkSizes: [Int]) -> [Outcome] {
        var demuxer = FLVDemuxer(configuration: configuration)
        var output: [Outcome] = []
        var video: VideoCodecConfiguration?
        var offset = 0
        var chunk = 0
        var failed = false
        func drain() {
            while !failed {
                do {
                    guard let element = try demuxer.nextElement() else { return }
                    switch element {
                    case .videoConfiguration(let configuration): video = configuration
                    case .packet(let packet) where packet.kind == .video:
                        if let video {
                            _ = SEIMessages.userData(in: packet, codec: video.codec, nalLengthSize: video.nalLengthSize)
                        }
                    default: break
                    }
                    output.append(.element(element))
                } catch {
                    output.append(.error(error))
                    failed = true
                }
            }
        }
        while offset < stream.count, !failed {
            let size = min(chunkSizes[chunk % chunkSizes.count], stream.count - offset)
            demuxer.append(stream[offset..<offset + size])
            offset += size
            chunk += 1
            drain()
        }
        demuxer.finish()
        drain()
        return output
    }
}
