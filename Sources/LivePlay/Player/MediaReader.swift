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
    /// What the video decoder's device did; `decoder` says what decodes now (`h264 (nvdec)`).
    case hardware(HardwareNotice, decoder: String)
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
        /// Bytes read from the file at a time.
        public var chunkSize: Int

        public init(
            decodes: Bool = false, decoder: DecoderOptions = DecoderOptions(),
            demuxer: FLVDemuxer.Configuration = FLVDemuxer.Configuration(), chunkSize: Int = 64 << 10
        ) {
            self.decodes = decodes
            self.decoder = decoder
            self.demuxer = demuxer
            self.chunkSize = chunkSize
        }
    }

    private let source: FileSource
    private let options: Options
    private var demuxer: FLVDemuxer
    private let decoding: DecodeStage
    private var queue: [MediaEvent] = []
    private var queueIndex = 0
    private var finished = false
    public private(set) var description = StreamDescription()

    public init(path: String, options: Options = Options()) throws(LivePlayError) {
        do {
            source = try FileSource(path: path, chunkSize: options.chunkSize)
        } catch {
            throw LivePlayError(transport: error)
        }
        self.options = options
        decoding = DecodeStage(options: options.decoder)
        demuxer = FLVDemuxer(configuration: options.demuxer, payloads: decoding.payloads)
    }

    /// Switches a multitrack file's `kind` to `track` (nil: the default): video at that track's next keyframe in
    /// what is read from now on, audio at its next packet.
    public func select(_ kind: MediaKind, track: UInt8?) {
        demuxer.select(kind, track: track)
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
        case .videoConfiguration(let configuration): take(decoding.received(configuration))
        case .audioConfiguration(let configuration): take(decoding.received(configuration))
        case .packet(let packet):
            decoding.received(packet)
            take(decoding.decode(packet))
        default: break
        }
    }

    /// Queues what the decode stage did, in order.
    private func take(_ outputs: [DecodeStage.Output]) {
        for output in outputs {
            switch output {
            case .video(let frame): queue.append(.videoFrame(frame))
            case .audio(let frame): queue.append(.audioFrame(frame))
            case .started: break
            case .videoDecoderFailedToOpen(_, let error): queue.append(.decodeError(.video, error))
            case .audioDecoderFailedToOpen(_, let error): queue.append(.decodeError(.audio, error))
            case .failed(let kind, let error): queue.append(.decodeError(kind, error))
            case .hardware(let notice, let decoder): queue.append(.hardware(notice, decoder: decoder))
            }
        }
    }

    private func flushDecoders() {
        take(decoding.flushVideo() + decoding.flushAudio())
    }
}
