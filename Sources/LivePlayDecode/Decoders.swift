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
    private var shelf = FrameShelf()

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
            guard let buffer = shelf.buffer(referencing: session.frame) else {
                throw DecodeError(.outOfMemory, "no frame to reference the picture (av_frame_alloc or av_frame_ref failed)")
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
func codecIdentifier(_ name: String) throws(DecodeError) -> AVCodecID {
    guard let descriptor = avcodec_descriptor_get_by_name(name), avcodec_find_decoder(descriptor.pointee.id) != nil
    else { throw DecodeError(.decoderNotFound, "this libavcodec has no \(name) decoder") }
    return descriptor.pointee.id
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
