import LivePlayBuffering
import LivePlayCore
import LivePlayDecode

/// The decode stage: codec configurations applied in stream order, the decoders they open, and what comes
/// out of them. Every loop that decodes (``LiveSession``, ``MediaReader``) uses this one, so a sequence header
/// change, a decoder that failed and waits for a keyframe, and the pictures a decoder holds back are handled
/// in one place.
///
/// A configuration received while a decoder is open applies from the first packet received after it
/// (``ConfigurationChanges``): packets still buffered ahead of it belong to the old one. Before a decoder is
/// replaced it is drained, so its held-back pictures (B-frames' reorder delay) come out first. After a
/// decode error the decoder drops packets until the next keyframe (``VideoDecoder``).
final class DecodeStage {
    /// What the stage did, in order.
    enum Output {
        case video(VideoFrame)
        case audio(AudioFrame)
        /// A video decoder opened for this configuration.
        case started(VideoCodecConfiguration)
        case videoDecoderFailedToOpen(VideoCodecConfiguration, DecodeError)
        case audioDecoderFailedToOpen(AudioCodecConfiguration, DecodeError)
        /// A packet or frame failed to decode; the decoder goes on from the next keyframe.
        case failed(MediaKind, DecodeError)
        /// What the video decoder's device did (``HardwareNotice``); `decoder` says what decodes now.
        case hardware(HardwareNotice, decoder: String)
    }

    private var options: DecoderOptions
    private var video: VideoDecoder?
    private var audio: AudioDecoder?
    /// The newest configurations received (a ``PosterDecoder`` decodes with the video one).
    private(set) var newestVideo: VideoCodecConfiguration?
    private var newestAudio: AudioCodecConfiguration?
    private var videoChanges = ConfigurationChanges<VideoCodecConfiguration>()
    private var audioChanges = ConfigurationChanges<AudioCodecConfiguration>()
    /// The last video packet of a lost connection: what the decoder holds back comes out before the first
    /// packet after it is decoded.
    private var videoBoundary: MediaTimestamp?
    /// What the last ``decode(_:)`` did, kept for the next: decoding a packet allocates no array for it.
    private var outputs: [Output] = []
    /// Where each packet's payload goes once decoded: the demuxer that feeds this stage takes its packets' from here.
    let payloads = PayloadPool()

    init(options: DecoderOptions) {
        self.options = options
    }

    /// The video decoders go on to the next playback (``DecoderShelf``).
    deinit {
        if let video { DecoderShelf.shelve(video) }
    }

    /// Whether a video decoder is open.
    var decodesVideo: Bool { video != nil }
    var decodesAudio: Bool { audio != nil }
    /// The video decoder in words (`h264 (nvdec)`, `hevc (software)`), when one is open.
    var videoDecoder: String? { video?.decoderDescription }

    /// Video decodes with `hardware` from the next keyframe on (and every decoder opened after it).
    func decode(on hardware: HardwareDecoding) {
        options.hardware = hardware
        video?.decode(on: hardware)
    }

    /// A video sequence header arrived. The first opens a decoder at once (the fast path to the first
    /// picture); a change waits for the packets it belongs to.
    func received(_ configuration: VideoCodecConfiguration) -> [Output] {
        guard configuration != newestVideo else { return [] }
        newestVideo = configuration
        guard video == nil else {
            videoChanges.schedule(configuration)
            return []
        }
        return openVideo(configuration)
    }

    /// An audio sequence header arrived; as for video.
    func received(_ configuration: AudioCodecConfiguration) -> [Output] {
        guard configuration != newestAudio else { return [] }
        newestAudio = configuration
        guard audio == nil else {
            audioChanges.schedule(configuration)
            return []
        }
        return openAudio(configuration)
    }

    /// A packet arrived (its timestamp already on the playback timeline): the changes waiting for their first
    /// packet start at it.
    func received(_ packet: EncodedPacket) {
        switch packet.kind {
        case .video: videoChanges.received(dts: packet.dts)
        case .audio: audioChanges.received(dts: packet.dts)
        }
    }

    /// A connection was lost; `lastVideo` is the decode time of the last video packet it delivered. The
    /// decoder's held-back pictures are drained once that packet has gone in (media on demand, whose decoder
    /// goes on, need not call this).
    func connectionLost(after lastVideo: MediaTimestamp?) {
        videoBoundary = lastVideo
    }

    /// Decodes `packet`, switching decoders first where the stream changed configuration.
    func decode(_ packet: EncodedPacket) -> [Output] {
        defer { payloads.giveBack(packet.payload) }
        outputs.removeAll(keepingCapacity: true)
        switch packet.kind {
        case .video:
            if let boundary = videoBoundary, packet.dts > boundary {
                videoBoundary = nil
                outputs = flushVideo()
            }
            if let change = videoChanges.due(at: packet.dts), change != video?.configuration {
                outputs += flushVideo()
                outputs += openVideo(change)
            }
            guard let decoder = video else { return outputs }
            Self.append(decoder.decode(packet), decoder: decoder, to: &outputs)
        case .audio:
            if let change = audioChanges.due(at: packet.dts), change != audio?.configuration {
                outputs = flushAudio()
                outputs += openAudio(change)
            }
            guard let decoder = audio else { return outputs }
            Self.append(decoder.decode(packet), to: &outputs)
        }
        return outputs
    }

    /// Drains the pictures the video decoder still holds; it then takes new input from a keyframe.
    func flushVideo() -> [Output] {
        var outputs: [Output] = []
        if let video { Self.append(video.flush(), decoder: video, to: &outputs) }
        return outputs
    }

    /// Drains the sound the audio decoder still holds.
    func flushAudio() -> [Output] {
        var outputs: [Output] = []
        if let audio { Self.append(audio.flush(), to: &outputs) }
        return outputs
    }

    /// Discards what the decoders hold without output (a seek); each then waits for a keyframe.
    func reset() {
        video?.reset()
        audio?.reset()
        videoBoundary = nil
    }

    private func openVideo(_ configuration: VideoCodecConfiguration) -> [Output] {
        do {
            if let old = video { DecoderShelf.shelve(old) }
            video = try DecoderShelf.video(configuration, options: options)
            return [.started(configuration)]
        } catch {
            video = nil
            return [.videoDecoderFailedToOpen(configuration, error)]
        }
    }

    private func openAudio(_ configuration: AudioCodecConfiguration) -> [Output] {
        do {
            audio = try AudioDecoder(configuration: configuration, options: options)
            return []
        } catch {
            audio = nil
            return [.audioDecoderFailedToOpen(configuration, error)]
        }
    }

    /// Errors first, then frames, appended in place: this runs for every packet.
    private static func append(_ output: DecodeOutput<VideoFrame>, decoder: VideoDecoder, to outputs: inout [Output]) {
        for notice in output.hardware { outputs.append(.hardware(notice, decoder: decoder.decoderDescription)) }
        for error in output.errors { outputs.append(.failed(.video, error)) }
        for frame in output.frames { outputs.append(.video(frame)) }
    }

    private static func append(_ output: DecodeOutput<AudioFrame>, to outputs: inout [Output]) {
        for error in output.errors { outputs.append(.failed(.audio, error)) }
        for frame in output.frames { outputs.append(.audio(frame)) }
    }
}
