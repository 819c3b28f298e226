import LivePlayCore
import LivePlayFLV
import LivePlayManifest
import LivePlayWire

/// # LivePlayFuzzing
///
/// The bodies of liveplay's fuzz targets: each takes arbitrary bytes, feeds them to a parser that reads
/// bytes from the network, and checks what must hold whatever the input (no crash, no hang, memory within
/// the configured bounds, the same result however the input is chunked). Each returns what went wrong, or
/// `nil`. The fuzzers in `fuzz/` call them under libFuzzer and AddressSanitizer and abort on a problem;
/// the normal test suite replays every input they ever failed on (`fuzz/regressions/`) and expects `nil`,
/// so a fixed bug stays fixed. No Foundation, no C: the same code runs in both (the manifest's JSON is read by
/// FoundationEssentials, which has neither ICU nor locales).
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
    /// parses must serialize back to bytes that parse to the same record; the Enhanced RTMP ones (av1C with
    /// its sequence header, VP8 / VP9 keyframe headers, Opus's ID header, FLAC's STREAMINFO, an AC-3 syncframe,
    /// MultichannelConfig) must not trap or claim an empty picture.
    public static func codecConfiguration(_ input: [UInt8]) -> String? {
        guard let selector = input.first else { return nil }
        let body = input.dropFirst()
        switch selector % 12 {
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
        case 6:
            if let video = try? VideoCodecConfiguration.av1(record: Array(body.prefix(32)), keyframe: Array(body.dropFirst(32))),
                video.width < 0 || video.height < 0
            {
                return "av1C gave a negative size: \(video)"
            }
        case 7, 8:
            let codec: VideoCodec = selector % 12 == 7 ? .vp9 : .vp8
            if let video = try? VideoCodecConfiguration.vpx(codec, record: Array(body.prefix(12)), keyframe: Array(body.dropFirst(12))),
                video.width <= 0 || video.height <= 0
            {
                return "\(codec) keyframe gave an empty picture: \(video)"
            }
        case 9:
            if let audio = try? AudioCodecConfiguration.opus(header: Array(body)), audio.channels <= 0 {
                return "Opus header gave no channels: \(audio)"
            }
        case 10:
            if let audio = try? AudioCodecConfiguration.flac(header: Array(body)), audio.channels <= 0 || audio.sampleRate <= 0 {
                return "STREAMINFO gave no sound: \(audio)"
            }
        case 11:
            if let audio = AudioCodecConfiguration.dolby(frame: body), audio.channels <= 0 || audio.sampleRate <= 0 {
                return "AC-3 header gave no sound: \(audio)"
            }
            _ = try? FLVMultichannelConfig(parsing: body)
        default:
            let packet = EncodedPacket(kind: .video, dts: .zero, pts: .zero, isKeyframe: true, payload: Array(body))
            // Every payload type a player may be asked for, not only user data (`--sei`).
            _ = SEIMessages.messages(
                in: packet, codec: selector & 0x80 == 0 ? .h264 : .hevc, nalLengthSize: 4, types: Self.seiTypes)
        }
        return nil
    }

    /// The SEI payload types the fuzzers ask for: user data, the CDNs' 242 / 243, and a type coded in two bytes.
    static let seiTypes: Set<Int> = [4, 5, 242, 243, 300]

    /// Limits small enough that a fuzzer reaches them quickly.
    static let rtmpLimits = RTMPLimits(
        maximumBytesInProgress: 1 << 14, maximumMediaSize: 1 << 13, maximumCommandSize: 1 << 11,
        maximumDataSize: 1 << 12, maximumAMFDepth: 16, maximumChunkSize: 1 << 16)

    /// The RTMP checks a server's bytes pass before librtmp sees them, on a run of records the input
    /// spells out: a chunk header checked against the input's idea of what is unfinished, or a complete
    /// message (type, 16-bit length, body) inspected and, when it is media, written as FLV. Header parsing
    /// must ask for more rather than fail and never claim bytes it was not given; sizes over a limit must
    /// be refused; and the FLV made from media that passed must demux without a framing error.
    public static func rtmpMessages(_ input: [UInt8]) -> String? {
        let check = RTMPMessageGuard(limits: rtmpLimits)
        var writer = FLVTagWriter()
        var flv: [UInt8] = []
        var flvTags: [FLVTag] = []
        var offset = 0
        while offset < input.count {
            let record = input[offset]
            offset += 1
            if record & 1 == 0 {
                let window = Array(input[offset..<min(input.count, offset + Int(record >> 1) % 19)])
                switch window.withUnsafeBytes({ RTMPChunkHeader.parse($0) }) {
                case .needMore(let count) where count <= window.count:
                    return "chunk header asks for \(count) bytes with \(window.count) buffered"
                case .header(let header) where header.size > window.count || (header.format <= 1) != (header.messageLength != nil):
                    return "chunk header \(header) from \(window.count) bytes"
                case .header(let header):
                    let unfinished = record & 0x80 == 0 ? nil : (bodySize: 100, bytesRead: 10)
                    let held = Int(record & 0x7F) << 8
                    do {
                        try check.check(header, unfinished: unfinished, bytesInProgress: held)
                        if let length = header.messageLength {
                            if unfinished != nil { return "a new message was accepted over an unfinished one" }
                            if length > check.maximumSize(ofType: header.messageTypeID ?? 0)
                                || held + length > rtmpLimits.maximumBytesInProgress
                            {
                                return "a header announcing \(length) bytes with \(held) held was accepted"
                            }
                        }
                    } catch {}
                case .needMore:
                    break
                }
                offset += window.count
            } else {
                guard offset + 3 <= input.count else { break }
                let type = input[offset]
                let length = min(Int(input[offset + 1]) << 8 | Int(input[offset + 2]), input.count - offset - 3)
                let body = Array(input[(offset + 3)..<(offset + 3 + length)])
                offset += 3 + length
                let verdict: RTMPMessageVerdict
                do {
                    verdict = try body.withUnsafeBytes { bytes throws(WireError) in try check.inspect(type: type, body: bytes) }
                } catch {
                    continue
                }
                if body.count > check.maximumSize(ofType: type) { return "a \(body.count)-byte message of type \(type) passed" }
                switch verdict {
                case .command(let name, let values) where values.first?.stringValue != name:
                    return "command named \(name) from \(values)"
                case .media:
                    body.withUnsafeBytes { bytes in
                        _ = writer.append(type: type, timestamp: UInt32(offset), body: bytes, to: &flv)
                        FLVTagWriter.appendTags(type: type, timestamp: UInt32(offset), body: bytes, to: &flvTags)
                    }
                default:
                    break
                }
            }
        }
        guard !flv.isEmpty else { return nil }
        let tags = FLVDemuxer.Configuration(maximumTagSize: 1 << 16, maximumAMFDepth: 16)
        let framing: Set<FLVError.Code> = [
            .invalidHeader, .truncated, .previousTagSizeMismatch, .resynchronized, .tagTooLarge,
        ]
        let outcomes = demux(flv, chunkSizes: [max(1, flv.count)], configuration: tags)
        for case .error(let error) in outcomes where framing.contains(error.code) {
            return "FLV written from checked media does not demux: \(error)"
        }
        // The player's path: the same media as tags, through the same tag parser, gives the same elements.
        var tagDemuxer = FLVDemuxer(configuration: tags)
        for tag in flvTags { tagDemuxer.append(tag: tag) }
        var fromTags: [FLVElement] = []
        while let element = try? tagDemuxer.nextElement() { fromTags.append(element) }
        let fromBytes = outcomes.compactMap { outcome -> FLVElement? in
            guard case .element(let element) = outcome else { return nil }
            if case .header = element { return nil }
            return element
        }
        // Compared by description when unequal: a NaN in metadata is never equal to itself.
        if fromTags != fromBytes, "\(fromTags)" != "\(fromBytes)" {
            return "media as tags and as FLV bytes demux differently: \(fromTags) vs \(fromBytes)"
        }
        return nil
    }

    /// An HTTP-FLV response as SwiftNIO hands it over: the input spells a status, header lines up to an
    /// empty line, and the body in chunks it sizes itself. A head that passes must be 2xx with at most one
    /// length; the body must never run past that length unnoticed, and only a body that reaches it is a
    /// finished file.
    public static func httpFLVResponse(_ input: [UInt8]) -> String? {
        guard input.count >= 3 else { return nil }
        let status = 100 + (Int(input[0]) << 8 | Int(input[1])) % 500
        let chunkSeed = input[2]
        var rest = input.dropFirst(3)
        var headers: [(name: String, value: String)] = []
        while let newline = rest.firstIndex(of: 0x0A) {
            let line = String(decoding: rest[..<newline], as: UTF8.self)
            rest = rest[(newline + 1)...]
            guard !line.isEmpty else { break }
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            headers.append((String(parts[0]), parts.count > 1 ? String(parts[1]) : ""))
        }
        var response: HTTPFLVResponse
        do {
            response = try HTTPFLVResponse(status: status, reason: "Fuzzed", headers: headers)
        } catch {
            if (200..<300).contains(status), error.code == .httpStatus { return "2xx refused: \(error)" }
            return nil
        }
        if !(200..<300).contains(status) { return "HTTP \(status) accepted" }
        let body = Array(rest)
        var offset = 0
        var chunk = 0
        let sizes = chunkSizes(seed: chunkSeed)
        while offset < body.count {
            let size = min(sizes[chunk % sizes.count], body.count - offset)
            do {
                try response.receive(size)
            } catch {
                guard let expected = response.expectedLength, offset + size > expected else {
                    return "body refused within its length: \(error)"
                }
                return nil
            }
            offset += size
            chunk += 1
        }
        if let expected = response.expectedLength, offset > expected { return "\(offset) bytes passed a length of \(expected)" }
        let finished = response.expectedLength == offset
        if (response.end == .finished) != finished { return "end \(response.end) after \(offset) of \(String(describing: response.expectedLength))" }
        _ = demux(body, chunkSizes: sizes)
        return nil
    }

    /// The targets by name, as `fuzz/run` and the regression test know them.
    public static let all: [String: @Sendable ([UInt8]) -> String?] = [
        "FuzzFLV": flvDemuxer, "FuzzAMF": amf0, "FuzzCodecConfiguration": codecConfiguration,
        "FuzzRTMP": rtmpMessages, "FuzzHTTPFLV": httpFLVResponse, "FuzzURL": streamAddress,
        "FuzzManifest": lasManifest, "FuzzPlaylist": m3uPlaylist,
    ]

    /// A LAS manifest from any bytes: refused with a sentence, or renditions to play, each with a network URL, and
    /// a start rendition among them; the same bytes read twice give the same manifest.
    public static func lasManifest(_ input: [UInt8]) -> String? {
        let manifest: LASManifest
        do {
            manifest = try LASManifest(parsing: input)
        } catch {
            return error.message.isEmpty ? "refused without a sentence" : nil
        }
        guard !manifest.renditions.isEmpty else { return "a manifest with no rendition" }
        guard manifest.renditions.contains(manifest.startRendition) else { return "a start outside the renditions" }
        for rendition in manifest.renditions {
            let schemes = ["http://", "https://", "rtmp://", "rtmps://"]
            for url in [rendition.url] + rendition.backupURLs where !schemes.contains(where: url.lowercased().hasPrefix) {
                return "rendition \(rendition.id) plays from something else than the network: \(url)"
            }
        }
        return (try? LASManifest(parsing: input)) == manifest ? nil : "read twice, two manifests"
    }

    /// The stream URL check on any text a person could type (as UTF-8, invalid sequences repaired): a
    /// clear error or an address whose port is in range and whose host and port, written back as a URL,
    /// parse to the same address. No input may trap (an out-of-range port once did, in the HTTP path).
    public static func streamAddress(_ input: [UInt8]) -> String? {
        let text = String(decoding: input, as: UTF8.self)
        guard let address = try? StreamAddress(parsing: text) else { return nil }
        if address.scheme == .file { return address.host.isEmpty ? nil : "a file with a host: \(address)" }
        guard (1...65535).contains(address.port), !address.host.isEmpty else { return "out of range: \(address)" }
        let path = address.scheme == .rtmp || address.scheme == .rtmps ? "/app/stream" : "/"
        let again = "\(address.scheme.rawValue)://\(address.hostAndPort)\(path)"
        guard let reparsed = try? StreamAddress(parsing: again) else { return "\(again) no longer parses" }
        guard reparsed.host == address.host, reparsed.port == address.port else {
            return "\(again) parses to \(reparsed.hostAndPort), not \(address.hostAndPort)"
        }
        return nil
    }

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
    static func demux(
        _ stream: [UInt8], chunkSizes: [Int], configuration: FLVDemuxer.Configuration = configuration
    ) -> [Outcome] {
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
                            _ = SEIMessages.messages(
                                in: packet, codec: video.codec, nalLengthSize: video.nalLengthSize, types: Self.seiTypes)
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

    /// An M3U playlist from any bytes, read as a remote one and as a local one: refused with a sentence, or entries
    /// that are absolute URLs of what liveplay plays (no local file from the network, no playlist inside), as many
    /// as the bound allows; the same bytes read twice give the same playlist.
    public static func m3uPlaylist(_ input: [UInt8]) -> String? {
        for base in ["http://127.0.0.1/lists/feed.m3u", "/srv/lists/feed.m3u"] {
            let playlist: M3UPlaylist
            do {
                playlist = try M3UPlaylist(parsing: input, base: base)
            } catch {
                if error.message.isEmpty { return "refused without a sentence" }
                continue
            }
            guard !playlist.entries.isEmpty, playlist.entries.count <= M3UPlaylist.maximumEntries else {
                return "\(playlist.entries.count) entries"
            }
            let schemes = ["http://", "https://", "rtmp://", "rtmps://"] + (base.hasPrefix("/") ? ["/"] : [])
            for entry in playlist.entries where !schemes.contains(where: entry.url.lowercased().hasPrefix) {
                return "an entry that is not what liveplay plays from \(base): \(entry.url)"
            }
            if playlist.entries.contains(where: { M3UPlaylist.names($0.url) }) { return "a playlist inside" }
            guard (try? M3UPlaylist(parsing: input, base: base)) == playlist else { return "read twice, two playlists" }
        }
        return nil
    }
}
