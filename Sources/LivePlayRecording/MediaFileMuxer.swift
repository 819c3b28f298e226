import CFFmpegFormat
import CLazyLibraries
public import LivePlayCore

/// Writes received packets, as they are, into an FLV or a fragmented MP4 file through libavformat's own muxers.
///
/// Owns the `AVFormatContext*` (STYLE.md rule 5) and turns every libavformat return code into a
/// ``RecordingError`` in one place. The file is written through libavformat's buffered I/O with
/// `flush_packets=1`, so what a call returns after has reached the kernel: a process killed later leaves every
/// complete FLV tag, or every complete MP4 fragment (`frag_keyframe+empty_moov+default_base_moof`: a moov with no
/// samples first, then one moof+mdat per GOP), on disk. Not thread-safe: one writer thread uses it.
public final class MediaFileMuxer {
    public let path: String
    public let format: RecordingFormat
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var videoStream: UnsafeMutablePointer<AVStream>?
    private var audioStream: UnsafeMutablePointer<AVStream>?
    private let audioFrameDuration: Int64?
    /// Where the last audio packet ended, in the track's time base (MP4: samples).
    private var nextAudioDTS: Int64?
    private var packet: UnsafeMutablePointer<AVPacket>?

    /// Opens `path` (created or truncated) and writes the file header for these tracks.
    public init(
        path: String, format: RecordingFormat, video: VideoCodecConfiguration?, audio: AudioCodecConfiguration?
    ) throws(RecordingError) {
        self.path = path
        self.format = format
        audioFrameDuration = audio.map { $0.codec == .aac ? 1024 : 1152 }
        var error = [CChar](repeating: 0, count: 512)
        guard liveplay_lazy_load(LIVEPLAY_LAZY_AVFORMAT, &error, error.count) == 0 else {
            // The soname is the one liveplay was built against; Debian's package is named after its major version.
            let package = "libavformat\(LIBAVFORMAT_VERSION_MAJOR)"
            throw RecordingError(.missingLibrary, "\(Self.text(error)) (Debian: apt-get install \(package))")
        }
        var context: UnsafeMutablePointer<AVFormatContext>?
        try Self.check(avformat_alloc_output_context2(&context, nil, format.muxerName, path), "open the muxer")
        self.context = context
        guard let context else { throw RecordingError(.writeFailed, "libavformat has no \(format.muxerName) muxer") }
        if let video { videoStream = try addStream(video: video) }
        if let audio { audioStream = try addStream(audio: audio) }
        try Self.check(avio_open(&context.pointee.pb, path, AVIO_FLAG_WRITE), "create \(path)")
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        if format == .mp4 { av_dict_set(&options, "movflags", "frag_keyframe+empty_moov+default_base_moof", 0) }
        av_dict_set(&options, "flush_packets", "1", 0)
        try Self.check(avformat_write_header(context, &options), "write the \(format.rawValue) header")
        avio_flush(context.pointee.pb)
        packet = av_packet_alloc()
    }

    deinit {
        abandon()
    }

    /// Bytes written so far (the file's length, less what libavformat still buffers).
    public var bytesWritten: Int64 {
        guard let io = context?.pointee.pb else { return 0 }
        return avio_tell(io)
    }

    /// Writes one packet at `dts` / `pts` (milliseconds on the recording's timeline, from 0).
    public func write(_ encoded: EncodedPacket, dts: Int64, pts: Int64) throws(RecordingError) {
        guard let context, let packet else { throw RecordingError(.writeFailed, "the recording is closed") }
        let stream = encoded.kind == .video ? videoStream : audioStream
        guard let stream else { return }
        av_packet_unref(packet)
        try Self.check(av_new_packet(packet, Int32(encoded.payload.count)), "allocate a packet")
        encoded.payload.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { packet.pointee.data.update(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
        }
        packet.pointee.stream_index = stream.pointee.index
        packet.pointee.dts = dts
        packet.pointee.pts = pts
        if encoded.isKeyframe { packet.pointee.flags |= AV_PKT_FLAG_KEY }
        let milliseconds = AVRational(num: 1, den: 1000)
        av_packet_rescale_ts(packet, milliseconds, stream.pointee.time_base)
        if encoded.kind == .audio, let frames = audioFrameDuration {
            let duration = av_rescale_q(
                frames, AVRational(num: 1, den: stream.pointee.codecpar.pointee.sample_rate), stream.pointee.time_base)
            packet.pointee.duration = duration
            // FLV stamps sound in whole milliseconds: rounded to samples, a packet can start a few samples before
            // the last one ended, which the MP4 muxer rejects ("out of range", then "pts has no value"). Sound that
            // goes on within a millisecond of where it ended is the same sound: it continues sample-exactly
            // (what FFmpeg's own remuxing does with `av_rescale_delta`). A real gap keeps its time.
            let millisecond = av_rescale_q(1, milliseconds, stream.pointee.time_base) + 1
            if format == .mp4, let next = nextAudioDTS, abs(packet.pointee.dts - next) <= millisecond {
                packet.pointee.pts += next - packet.pointee.dts
                packet.pointee.dts = next
            }
            nextAudioDTS = packet.pointee.dts + duration
        }
        try Self.check(av_write_frame(context, packet), "write to \(path)")
    }

    /// Writes what the muxer still holds (MP4: the last fragment) and the trailer, and closes the file.
    public func finish() throws(RecordingError) {
        guard let context else { return }
        defer { abandon() }
        try Self.check(av_write_trailer(context), "finish \(path)")
        avio_flush(context.pointee.pb)
        if let io = context.pointee.pb, io.pointee.error < 0 { try Self.check(io.pointee.error, "finish \(path)") }
    }

    /// Closes the file without writing more (after an error): what reached the disk stays.
    public func abandon() {
        av_packet_free(&packet)
        guard let context else { return }
        if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
        avformat_free_context(context)
        self.context = nil
    }

    private func addStream(video: VideoCodecConfiguration) throws(RecordingError) -> UnsafeMutablePointer<AVStream> {
        let stream = try newStream()
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = try Self.codecID(video.codec.rawValue)
        parameters.pointee.width = Int32(video.width)
        parameters.pointee.height = Int32(video.height)
        try setExtradata(video.extradata, of: parameters)
        stream.pointee.time_base = AVRational(num: 1, den: 1000)
        return stream
    }

    private func addStream(audio: AudioCodecConfiguration) throws(RecordingError) -> UnsafeMutablePointer<AVStream> {
        let stream = try newStream()
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        parameters.pointee.codec_id = try Self.codecID(audio.codec.rawValue)
        parameters.pointee.sample_rate = Int32(audio.sampleRate)
        parameters.pointee.frame_size = Int32(audioFrameDuration ?? 0)
        av_channel_layout_default(&parameters.pointee.ch_layout, Int32(max(1, audio.channels)))
        try setExtradata(audio.extradata, of: parameters)
        stream.pointee.time_base = AVRational(num: 1, den: Int32(audio.sampleRate))
        return stream
    }

    /// libavcodec's id for a codec liveplay names as ffmpeg does (the codec enums' raw values).
    private static func codecID(_ name: String) throws(RecordingError) -> AVCodecID {
        guard let descriptor = avcodec_descriptor_get_by_name(name) else {
            throw RecordingError(.unsupported, "\(name) cannot be recorded: this libavcodec does not know it")
        }
        return descriptor.pointee.id
    }

    private func newStream() throws(RecordingError) -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(context, nil) else { throw RecordingError(.writeFailed, "no memory for a track") }
        return stream
    }

    /// The codec configuration as libavformat wants it: its own allocation, padded.
    private func setExtradata(_ bytes: [UInt8], of parameters: UnsafeMutablePointer<AVCodecParameters>) throws(RecordingError) {
        guard !bytes.isEmpty else { return }
        guard let buffer = av_mallocz(bytes.count + Int(liveplay_format_input_padding())) else {
            throw RecordingError(.writeFailed, "no memory for the codec configuration")
        }
        buffer.copyMemory(from: bytes, byteCount: bytes.count)
        parameters.pointee.extradata = buffer.assumingMemoryBound(to: UInt8.self)
        parameters.pointee.extradata_size = Int32(bytes.count)
    }

    /// The text a C function wrote into `buffer`, up to its terminating zero.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A libavformat return code as a Swift error: below 0 is `-errno` (or an FFmpeg tag), with its text.
    static func check(_ code: Int32, _ doing: String) throws(RecordingError) {
        guard code < 0 else { return }
        var buffer = [CChar](repeating: 0, count: 128)
        av_strerror(code, &buffer, buffer.count)
        let message = text(buffer)
        let kind: RecordingError.Code
        switch code {
        case liveplay_format_averror_enospc(): kind = .diskFull
        // A codec the container cannot carry (HEVC in FLV: "not compatible with flv", ENOSYS in FFmpeg 5.1).
        case -Int32(EINVAL) where doing.hasPrefix("write the"), -Int32(ENOSYS) where doing.hasPrefix("write the"):
            kind = .unsupported
        default: kind = .writeFailed
        }
        throw RecordingError(kind, "cannot \(doing): \(message)", errno: code > -4096 ? -code : nil)
    }
}
