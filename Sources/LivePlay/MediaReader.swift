public import LivePlayCore
public import LivePlayDecode
public import LivePlayFLV
import LivePlayTransport

/// One thing a ``MediaReader`` found: a demuxed element, a decoded frame, or a decode problem.
public enum MediaEvent: Sendable {
    case element(FLVElement)
    case videoFrame(VideoFrame)
    case audioFrame(AudioFrame)
    /// A packet or frame failed to decode; decoding goes on (video from the next keyframe).
    case decodeError(MediaKind, DecodeError)
}

/// Demuxes (and optionally decodes) a local FLV file from start to end: the first end-to-end path.
///
/// Pull-based and synchronous: each ``next()`` reads only as much of the file as it needs.
public final class MediaReader {
    public struct Options: Sendable {
        /// Decode packets into frames, or only demux them.
        public var decodes: Bool
        public var decoder: DecoderOptions
        public var demuxer: FLVDemuxer.Configuration

        public init(
            decodes: Bool = false, decoder: DecoderOptions = DecoderOptions(),
            demuxer: FLVDemuxer.Configuration = FLVDemuxer.Configuration()
        ) {
            self.decodes = decodes
            self.decoder = decoder
            self.demuxer = demuxer
        }
    }

    private let source: FileSource
    private let options: Options
    private var demuxer: FLVDemuxer
    private var videoDecoder: VideoDecoder?
    private var audioDecoder: AudioDecoder?
    private var queue: [MediaEvent] = []
    private var queueIndex = 0
    private var finished = false
    public private(set) var description = StreamDescription()

    public init(path: String, options: Options = Options()) throws(LivePlayError) {
        do {
            source = try FileSource(path: path)
        } catch {
            throw LivePlayError(transport: error)
        }
        self.options = options
        demuxer = FLVDemuxer(configuration: options.demuxer)
    }

    /// The next event, or `nil` at the end of the file.
    public func next() throws(LivePlayError) -> MediaEvent? {
        while queueIndex == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueIndex = 0
            guard try fill() else { return nil }
        }
        defer { queueIndex += 1 }
        return queue[queueIndex]
    }

    /// Produces at least one event, or returns `false` when everything is out.
    private func fill() throws(LivePlayError) -> Bool {
        while queue.isEmpty {
            let element: FLVElement?
            do {
                element = try demuxer.nextElement()
            } catch {
                throw LivePlayError(demux: error)
            }
            if let element {
                handle(element)
                continue
            }
            if finished {
                flushDecoders()
                return !queue.isEmpty
            }
            let chunk: [UInt8]?
            do {
                chunk = try source.read()
            } catch {
                throw LivePlayError(transport: error)
            }
            if let chunk {
                demuxer.append(chunk)
            } else {
                demuxer.finish()
                finished = true
            }
        }
        return true
    }

    private func handle(_ element: FLVElement) {
        description.record(element)
        queue.append(.element(element))
        guard options.decodes else { return }
        switch element {
        case .videoConfiguration(let configuration):
            if let old = videoDecoder { emit(old.flush(), kind: .video, as: MediaEvent.videoFrame) }
            videoDecoder = openDecoder(kind: .video) { () throws(DecodeError) in
                try VideoDecoder(configuration: configuration, options: options.decoder)
            }
        case .audioConfiguration(let configuration):
            if let old = audioDecoder { emit(old.flush(), kind: .audio, as: MediaEvent.audioFrame) }
            audioDecoder = openDecoder(kind: .audio) { () throws(DecodeError) in
                try AudioDecoder(configuration: configuration, options: options.decoder)
            }
        case .packet(let packet) where packet.kind == .video:
            if let decoder = videoDecoder { emit(decoder.decode(packet), kind: .video, as: MediaEvent.videoFrame) }
        case .packet(let packet):
            if let decoder = audioDecoder { emit(decoder.decode(packet), kind: .audio, as: MediaEvent.audioFrame) }
        default:
            break
        }
    }

    private func openDecoder<Decoder>(
        kind: MediaKind, _ make: () throws(DecodeError) -> Decoder
    ) -> Decoder? {
        do {
            return try make()
        } catch {
            queue.append(.decodeError(kind, error))
            return nil
        }
    }

    private func emit<Frame>(_ output: DecodeOutput<Frame>, kind: MediaKind, as wrap: (Frame) -> MediaEvent) {
        for error in output.errors { queue.append(.decodeError(kind, error)) }
        for frame in output.frames { queue.append(wrap(frame)) }
    }

    private func flushDecoders() {
        if let decoder = videoDecoder { emit(decoder.flush(), kind: .video, as: MediaEvent.videoFrame) }
        if let decoder = audioDecoder { emit(decoder.flush(), kind: .audio, as: MediaEvent.audioFrame) }
        videoDecoder = nil
        audioDecoder = nil
    }
}
