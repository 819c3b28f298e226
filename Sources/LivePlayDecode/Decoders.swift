import CFFmpeg
public import LivePlayCore

/// Decoder options shared by audio and video.
public struct DecoderOptions: Sendable, Hashable {
    /// libavcodec worker threads; 0 lets libavcodec choose (one per core).
    public var threadCount: Int
    /// Largest picture (width × height) decoded: a stream whose parameter sets claim more is refused before
    /// libavcodec allocates for it. 4096 × 2304 by default (4K UHD and DCI 4K); raise it for 8K.
    public var maximumPixels: Int
    /// Whether video decodes on a device (``HardwareDecoding``): software by default.
    public var hardware: HardwareDecoding
    /// Tests only: a software decoder plays the device, failing on command.
    var standIn: HardwareStandIn?

    public init(threadCount: Int = 1, maximumPixels: Int = 4096 * 2304, hardware: HardwareDecoding = .off) {
        self.threadCount = threadCount
        self.maximumPixels = maximumPixels
        self.hardware = hardware
    }
}

/// The send/receive loop and the keyframe gate, shared by both decoders.
///
/// After any error the decoder waits for a keyframe: the frames in between would reference the
/// damaged picture, so they are dropped rather than shown smeared.
final class PacketDecoder {
    private let session: CodecSession
    private let gatesOnKeyframes: Bool
    private(set) var awaitingKeyframe: Bool
    private(set) var skippedPacketCount = 0

    init(session: CodecSession, gatesOnKeyframes: Bool) {
        self.session = session
        self.gatesOnKeyframes = gatesOnKeyframes
        self.awaitingKeyframe = gatesOnKeyframes
    }

    func send(_ packet: EncodedPacket) throws(DecodeError) -> DecoderSendResult {
        if awaitingKeyframe, gatesOnKeyframes {
            guard packet.isKeyframe else {
                skippedPacketCount += 1
                return .skippedAwaitingKeyframe
            }
            awaitingKeyframe = false
        }
        do {
            return try session.send(packet) ? .accepted : .full
        } catch {
            awaitingKeyframe = gatesOnKeyframes
            throw error
        }
    }

    func receive() throws(DecodeError) -> DecoderReceiveResult<FrameBuffer> {
        switch try session.receive() {
        case .needsInput: return .needsInput
        case .drained:
            // Drained (end of a connection, a configuration change): ready for new input from a keyframe.
            session.reset()
            awaitingKeyframe = gatesOnKeyframes
            return .drained
        case .frame:
            if session.frameIsCorrupt {
                awaitingKeyframe = gatesOnKeyframes
                throw DecodeError(
                    .corruptFrame, "frame at \(session.framePresentationTime) decoded with errors; dropped")
            }
            guard let buffer = FrameBuffer(referencing: session.frame) else {
                throw DecodeError(.outOfMemory, "av_frame_clone failed")
            }
            return .frame(buffer)
        }
    }

    var presentationTime: MediaTimestamp { session.framePresentationTime }

    /// Whether a device decodes (``CodecSession/decodesOnDevice``).
    var decodesOnDevice: Bool { session.decodesOnDevice }

    /// The packet just sent failed elsewhere (a stand-in device): as after an error, the next packet used is a
    /// keyframe.
    func failed() {
        awaitingKeyframe = gatesOnKeyframes
    }

    /// Discards everything inside without output (a seek); the next packet used is a keyframe.
    func reset() {
        session.reset()
        awaitingKeyframe = gatesOnKeyframes
    }

    func drain() throws(DecodeError) {
        try session.sendEndOfStream()
    }

    /// Sends one packet and receives everything it releases, collecting errors instead of stopping.
    func decode<Frame>(_ packet: EncodedPacket, _ makeFrame: (FrameBuffer, MediaTimestamp) -> Frame) -> DecodeOutput<
        Frame
    > {
        var output = DecodeOutput<Frame>()
        decode(packet, into: &output, makeFrame)
        return output
    }

    /// ``decode(_:_:)`` into `output`, emptied first: a decoder that keeps one allocates no arrays per packet.
    func decode<Frame>(
        _ packet: EncodedPacket, into output: inout DecodeOutput<Frame>, _ makeFrame: (FrameBuffer, MediaTimestamp) -> Frame
    ) {
        output.removeAll()
        var pending = true
        while pending {
            do {
                switch try send(packet) {
                case .accepted: pending = false
                case .skippedAwaitingKeyframe:
                    output.skipped = true
                    return
                case .full: break
                }
            } catch {
                output.errors.append(error)
                pending = false
            }
            receiveAll(into: &output, makeFrame)
        }
    }

    /// Drains the decoder: every frame still inside comes out.
    func flush<Frame>(_ makeFrame: (FrameBuffer, MediaTimestamp) -> Frame) -> DecodeOutput<Frame> {
        var output = DecodeOutput<Frame>()
        do {
            try drain()
        } catch {
            output.errors.append(error)
        }
        receiveAll(into: &output, makeFrame)
        return output
    }

    private func receiveAll<Frame>(
        into output: inout DecodeOutput<Frame>, _ makeFrame: (FrameBuffer, MediaTimestamp) -> Frame
    ) {
        while true {
            do {
                switch try receive() {
                case .frame(let buffer): output.frames.append(makeFrame(buffer, presentationTime))
                case .needsInput, .drained: return
                }
            } catch {
                output.errors.append(error)
                // A corrupt frame is dropped but the decoder goes on; a hard receive error ends the turn.
                if error.code != .corruptFrame { return }
            }
        }
    }
}

/// libavcodec's id for a codec liveplay names as ffmpeg does (the codec enums' raw values).
private func codecIdentifier(_ name: String) throws(DecodeError) -> AVCodecID {
    guard let descriptor = avcodec_descriptor_get_by_name(name), avcodec_find_decoder(descriptor.pointee.id) != nil
    else { throw DecodeError(.decoderNotFound, "this libavcodec has no \(name) decoder") }
    return descriptor.pointee.id
}

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

/// Decodes AAC, MP3, Opus, FLAC, AC-3 or E-AC-3 with libavcodec; one instance per codec configuration.
public final class AudioDecoder {
    public let configuration: AudioCodecConfiguration
    public let options: DecoderOptions
    private let decoder: PacketDecoder
    /// What the last packet released, kept for the next: decoding allocates no arrays per packet.
    private var output = DecodeOutput<AudioFrame>()

    public init(configuration: AudioCodecConfiguration, options: DecoderOptions = DecoderOptions())
        throws(DecodeError)
    {
        let codecID = try codecIdentifier(configuration.codec.rawValue)
        self.configuration = configuration
        self.options = options
        let session = try CodecSession(
            codecID: codecID, name: configuration.codec.rawValue, extradata: configuration.extradata,
            threadCount: options.threadCount, maximumPixels: options.maximumPixels)
        decoder = PacketDecoder(session: session, gatesOnKeyframes: false)
    }

    public func send(_ packet: EncodedPacket) throws(DecodeError) -> DecoderSendResult {
        try decoder.send(packet)
    }

    public func receive() throws(DecodeError) -> DecoderReceiveResult<AudioFrame> {
        switch try decoder.receive() {
        case .frame(let buffer): .frame(AudioFrame(buffer: buffer, pts: decoder.presentationTime))
        case .needsInput: .needsInput
        case .drained: .drained
        }
    }

    public func decode(_ packet: EncodedPacket) -> DecodeOutput<AudioFrame> {
        decoder.decode(packet, into: &output, AudioFrame.init)
        return output
    }

    public func flush() -> DecodeOutput<AudioFrame> {
        decoder.flush(AudioFrame.init)
    }

    /// Discards the sound inside without output (a seek).
    public func reset() {
        decoder.reset()
    }
}
