import CFFmpeg
public import LivePlayCore

/// Decodes H.264, HEVC, AV1 (libdav1d), VP9 or VP8 with libavcodec; one instance per codec configuration.
///
/// With ``DecoderOptions/hardware`` a device decodes where it can (``HardwareDecoding``), and software takes over
/// without losing a picture where it cannot: at the start (the device does not open, or has no decoder for the
/// codec), on the stream's first keyframe, or after ``HardwareFallback/failuresAllowed`` failed packets in a row.
/// What the device did comes out with the frames (``DecodeOutput/hardware``). A change of ``DecoderOptions/hardware``
/// (``decode(on:)``) takes effect at the next keyframe.
public final class VideoDecoder {
    public let configuration: VideoCodecConfiguration
    /// The options it decodes with; ``DecoderOptions/hardware`` as last asked for.
    public private(set) var options: DecoderOptions
    private var decoder: PacketDecoder
    /// The device decoding, nil in software.
    public private(set) var device: HardwareDevice?
    /// What the last packet released, kept for the next: decoding allocates no arrays per packet.
    private var output = DecodeOutput<VideoFrame>()
    /// What the device did since the last output, handed out with the next.
    private var notices: [HardwareNotice] = []
    private var fallback = HardwareFallback()
    /// While a device decodes: the packets since the last keyframe, for software to decode again if the device gives
    /// up (at most ``replayLimit``; past it, software starts at the next keyframe), and the newest picture's time.
    private var sinceKeyframe: [EncodedPacket] = []
    private var newestPicture: MediaTimestamp?
    /// A change of ``DecoderOptions/hardware`` waiting for the next keyframe.
    private var pendingHardware: HardwareDecoding?
    /// Packets sent to the decoder since it opened: what ``HardwareStandIn`` counts.
    private var packetIndex = 0
    /// The device's last error, the reason a fallback gives.
    private var failure = ""

    /// The most packets kept for software to decode again: a GOP of 10 s at 60 frames a second.
    static let replayLimit = 600

    public init(configuration: VideoCodecConfiguration, options: DecoderOptions = DecoderOptions())
        throws(DecodeError)
    {
        // A hostile or broken SPS can claim any size: refuse before libavcodec allocates frames for it.
        guard configuration.width * configuration.height <= options.maximumPixels else {
            throw DecodeError(
                .tooLarge,
                "a \(configuration.width)x\(configuration.height) picture exceeds the \(options.maximumPixels)-pixel limit")
        }
        self.configuration = configuration
        self.options = options
        (decoder, device, notices) = try Self.open(configuration, options)
        openingNotices = notices
    }

    /// What opening said, for each owner: a decoder from the shelf tells its new playback again.
    private var openingNotices: [HardwareNotice] = []

    /// A new owner took the decoder from the shelf (``DecoderShelf``).
    func handedOn() {
        notices = openingNotices
    }

    /// A decoder on the first device of `options.hardware` that decodes the codec, else in software, and what was
    /// tried.
    private static func open(_ configuration: VideoCodecConfiguration, _ options: DecoderOptions) throws(DecodeError)
        -> (PacketDecoder, HardwareDevice?, [HardwareNotice])
    {
        let codecID = try codecIdentifier(configuration.codec.rawValue)
        let name = configuration.codec.rawValue
        var reasons: [(HardwareDevice, String)] = []
        for device in options.hardware.devices {
            if options.standIn != nil {
                let session = try CodecSession(
                    codecID: codecID, name: name, extradata: configuration.extradata, threadCount: 1,
                    maximumPixels: options.maximumPixels)
                return (PacketDecoder(session: session, gatesOnKeyframes: true), device, [.started(device)])
            }
            guard let format = CodecSession.hardwareFormat(codecID: codecID, device: device) else {
                reasons.append((device, "this libavcodec has no \(device) decoder for \(name)"))
                continue
            }
            switch HardwareDevices.reference(device) {
            case .failure(let failure):
                reasons.append((device, failure.reason))
            case .success(let reference):
                do {
                    let session = try CodecSession(
                        codecID: codecID, name: name, extradata: configuration.extradata, threadCount: 1,
                        maximumPixels: options.maximumPixels, device: (reference, format))
                    return (PacketDecoder(session: session, gatesOnKeyframes: true), device, [.started(device)])
                } catch {
                    reasons.append((device, error.message))
                }
            }
        }
        let session = try CodecSession(
            codecID: codecID, name: name, extradata: configuration.extradata, threadCount: options.threadCount,
            maximumPixels: options.maximumPixels)
        let notices: [HardwareNotice] =
            reasons.isEmpty
            ? []
            : [
                .unavailable(
                    reasons.count == 1 ? reasons[0].0 : nil, reason: reasons.map(\.1).joined(separator: "; "),
                    warns: options.hardware.warns)
            ]
        return (PacketDecoder(session: session, gatesOnKeyframes: true), nil, notices)
    }

    /// Whether packets are being dropped until the next keyframe (at start, and after an error).
    public var isAwaitingKeyframe: Bool { decoder.awaitingKeyframe }
    /// Packets dropped so far while waiting for a keyframe.
    public var skippedPacketCount: Int { decoder.skippedPacketCount }

    /// The decoder in words, for the net status: `h264 (nvdec)`, `hevc (software)`.
    public var decoderDescription: String {
        "\(configuration.codec.rawValue) (\(device?.rawValue ?? "software"))"
    }

    /// Decodes with `hardware` from the next keyframe on: the pictures before it come from the decoder that has them.
    public func decode(on hardware: HardwareDecoding) {
        pendingHardware = hardware == options.hardware ? nil : hardware
    }

    /// Sends one packet: `.full` means receive first, then send it again.
    public func send(_ packet: EncodedPacket) throws(DecodeError) -> DecoderSendResult {
        try decoder.send(packet)
    }

    /// Receives the next frame, if one is ready.
    public func receive() throws(DecodeError) -> DecoderReceiveResult<VideoFrame> {
        switch try decoder.receive() {
        case .frame(let buffer): .frame(VideoFrame(buffer: buffer, pts: decoder.presentationTime))
        case .needsInput: .needsInput
        case .drained: .drained
        }
    }

    /// Sends `packet` and returns the frames it released, the errors met and what the device did.
    public func decode(_ packet: EncodedPacket) -> DecodeOutput<VideoFrame> {
        var before: DecodeOutput<VideoFrame>?
        if packet.isKeyframe, let hardware = pendingHardware {
            // The pictures the old decoder holds come out first; the new one starts at this keyframe.
            before = decoder.flush(VideoFrame.init)
            pendingHardware = nil
            reopen(on: hardware)
        }
        if device != nil { keep(packet) }
        packetIndex += 1
        if let standIn = options.standIn, device != nil, standIn.failing.contains(packetIndex - 1) {
            // As a device's failed packet does: an error, and the decoder waits for a keyframe.
            output.removeAll()
            output.errors.append(DecodeError(.invalidData, "the stand-in device failed packet \(packetIndex - 1)"))
            decoder.failed()
        } else {
            decoder.decode(packet, into: &output, VideoFrame.init)
        }
        if let device { followDevice(device) }
        if let before {
            output.frames.insert(contentsOf: before.frames, at: 0)
            output.errors.insert(contentsOf: before.errors, at: 0)
        }
        if !notices.isEmpty {
            output.hardware = notices
            notices.removeAll()
        }
        return output
    }

    /// The packets since the keyframe, for software to decode again.
    private func keep(_ packet: EncodedPacket) {
        if packet.isKeyframe { sinceKeyframe.removeAll(keepingCapacity: true) }
        if sinceKeyframe.count < Self.replayLimit { sinceKeyframe.append(packet) }
    }

    /// After a packet on `device`: software takes over where the device gave up.
    private func followDevice(_ device: HardwareDevice) {
        if options.standIn == nil, !decoder.decodesOnDevice {
            // libavcodec found the device's decoder unusable for this stream and decodes it in software itself.
            notices.append(.firstKeyframeFailed(device, reason: "the \(device) decoder did not start for this stream"))
            fallBack()
            return
        }
        if let error = output.errors.last { failure = error.message }
        let verdict = fallback.decoded(
            failed: !output.errors.isEmpty, skipped: output.skipped, pictures: output.frames.count)
        let reason = failure
        switch verdict {
        case .goOn:
            if let last = output.frames.last { newestPicture = last.pts }
        case .firstKeyframeFailed:
            notices.append(.firstKeyframeFailed(device, reason: reason))
            replayInSoftware()
        case .failedWhilePlaying:
            notices.append(.failed(device, reason: reason))
            replayInSoftware()
        }
    }

    /// Software decodes again what the device had since the keyframe; the pictures the device already gave are not
    /// given twice.
    private func replayInSoftware() {
        let packets = sinceKeyframe
        let shown = newestPicture
        reopen(on: .off, keepingRequest: true)
        output.removeAll()
        var replayed = DecodeOutput<VideoFrame>()
        for packet in packets {
            decoder.decode(packet, into: &replayed, VideoFrame.init)
            output.frames += replayed.frames.filter { frame in shown.map { frame.pts > $0 } ?? true }
            output.errors += replayed.errors
        }
    }

    /// libavcodec went on in software in the device's context: nothing to decode again.
    private func fallBack() {
        device = nil
        sinceKeyframe.removeAll()
        newestPicture = nil
    }

    /// A new decoder for `hardware`; the old one is let go first (a device's memory is freed before the next asks).
    private func reopen(on hardware: HardwareDecoding, keepingRequest: Bool = false) {
        var opening = options
        opening.hardware = hardware
        if !keepingRequest { options.hardware = hardware }
        fallBack()
        fallback = HardwareFallback()
        packetIndex = 0
        do {
            let opened = try Self.open(configuration, opening)
            (decoder, device) = (opened.0, opened.1)
            notices += opened.2
        } catch {
            // The codec opened before with the same configuration; if it no longer does, the old decoder goes on.
            notices.append(.unavailable(nil, reason: error.message, warns: true))
        }
    }

    /// Drains the frames still inside (end of stream, a lost connection, a configuration change); the
    /// decoder then takes new input from a keyframe.
    public func flush() -> DecodeOutput<VideoFrame> {
        decoder.flush(VideoFrame.init)
    }

    /// Discards the frames inside without output (a seek); the decoder then waits for a keyframe.
    public func reset() {
        decoder.reset()
        sinceKeyframe.removeAll()
    }
}
