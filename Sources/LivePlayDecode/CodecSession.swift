import CFFmpeg
import LivePlayCore

/// Owns an `AVCodecContext` with its reusable `AVPacket` and `AVFrame`; the only place that calls
/// `avcodec_*`. Return codes become ``DecodeError``s here, and nowhere else (STYLE.md, rule 6).
final class CodecSession {
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let packet: UnsafeMutablePointer<AVPacket>
    let frame: UnsafeMutablePointer<AVFrame>

    /// - Parameter maximumPixels: libavcodec's `max_pixels`: frames larger than this are errors, not allocations
    ///   (a stream can change size mid-GOP without a new sequence header).
    /// - Parameter options: the decoder's private options (`avcodec_open2`'s dictionary), e.g. `cc_dec`'s
    ///   `data_field`.
    init(
        codecID: AVCodecID, name: String, extradata: [UInt8], threadCount: Int, maximumPixels: Int,
        options: [String: String] = [:]
    ) throws(DecodeError) {
        guard let codec = avcodec_find_decoder(codecID) else {
            throw DecodeError(.decoderNotFound, "libavcodec has no \(name) decoder")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw DecodeError(.outOfMemory, "avcodec_alloc_context3 failed")
        }
        guard let packet = av_packet_alloc(), let frame = av_frame_alloc() else {
            var context: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&context)
            throw DecodeError(.outOfMemory, "av_packet_alloc / av_frame_alloc failed")
        }
        self.context = context
        self.packet = packet
        self.frame = frame
        // Timestamps go in and come out in FLV milliseconds.
        context.pointee.pkt_timebase = AVRational(num: 1, den: 1000)
        context.pointee.thread_count = Int32(clamping: threadCount)
        context.pointee.max_pixels = Int64(maximumPixels)
        if !extradata.isEmpty {
            let padded = extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)
            guard let buffer = av_mallocz(padded)?.assumingMemoryBound(to: UInt8.self) else {
                throw DecodeError(.outOfMemory, "extradata allocation failed")
            }
            extradata.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: extradata.count) }
            context.pointee.extradata = buffer
            context.pointee.extradata_size = Int32(extradata.count)
        }
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        let status = avcodec_open2(context, codec, &dictionary)
        av_dict_free(&dictionary)
        guard status >= 0 else {
            throw DecodeError(.openFailed, "cannot open \(name) decoder: \(Self.describe(status))", averror: status)
        }
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&packet)
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
    }

    /// `true` when accepted, `false` when the decoder wants frames received first (`EAGAIN`).
    func send(_ encoded: EncodedPacket) throws(DecodeError) -> Bool {
        let size = encoded.payload.count
        let status = av_new_packet(packet, Int32(clamping: size))
        guard status >= 0 else { throw DecodeError(.outOfMemory, "av_new_packet failed", averror: status) }
        defer { av_packet_unref(packet) }
        encoded.payload.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { packet.pointee.data.update(from: base, count: size) }
        }
        packet.pointee.pts = encoded.pts.milliseconds
        packet.pointee.dts = encoded.dts.milliseconds
        if encoded.isKeyframe { packet.pointee.flags |= AV_PKT_FLAG_KEY }
        return try check(avcodec_send_packet(context, packet), what: "send packet")
    }

    /// Enters draining: the frames still inside come out, then ``receive()`` reports the end.
    func sendEndOfStream() throws(DecodeError) {
        _ = try check(avcodec_send_packet(context, nil), what: "drain")
    }

    enum Received {
        case frame
        case needsInput
        case drained
    }

    /// Receives into ``frame`` (valid until the next call).
    func receive() throws(DecodeError) -> Received {
        av_frame_unref(frame)
        let status = avcodec_receive_frame(context, frame)
        if status == liveplay_averror_eagain() { return .needsInput }
        if status == liveplay_averror_eof() { return .drained }
        _ = try check(status, what: "receive frame")
        return .frame
    }

    /// A subtitle decoder's reading of `bytes` at `pts` (ms): the text lines of the subtitle it finished, in
    /// libavcodec's ASS form, when it begins (ms) and how long it shows (ms, when the decoder knows); nil when the
    /// bytes finished none.
    func decodeSubtitle(_ bytes: [UInt8], pts: Int64) throws(DecodeError) -> (
        start: Int64, duration: Int64?, lines: [String]
    )? {
        let status = av_new_packet(packet, Int32(clamping: bytes.count))
        guard status >= 0 else { throw DecodeError(.outOfMemory, "av_new_packet failed", averror: status) }
        defer { av_packet_unref(packet) }
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { packet.pointee.data.update(from: base, count: bytes.count) }
        }
        packet.pointee.pts = pts
        var subtitle = AVSubtitle()
        var finished: Int32 = 0
        _ = try check(avcodec_decode_subtitle2(context, &subtitle, &finished, packet), what: "decode subtitle")
        guard finished != 0 else { return nil }
        defer { avsubtitle_free(&subtitle) }
        var lines: [String] = []
        for index in 0..<Int(subtitle.num_rects) {
            if let rect = subtitle.rects?[index], let ass = rect.pointee.ass { lines.append(String(cString: ass)) }
        }
        // The subtitle's pts is in AV_TIME_BASE (µs), from the packet's; its start is relative to it.
        let start = subtitle.pts == Int64.min ? pts : subtitle.pts / 1000 + Int64(subtitle.start_display_time)
        let shown = Int64(subtitle.end_display_time) - Int64(subtitle.start_display_time)
        return (start, subtitle.end_display_time == UInt32.max || shown <= 0 ? nil : shown, lines)
    }

    /// Forgets everything inside the decoder (after a drain, or to restart at a keyframe).
    func reset() {
        avcodec_flush_buffers(context)
    }

    /// Whether the frame last received came out with decode errors.
    var frameIsCorrupt: Bool {
        frame.pointee.decode_error_flags != 0 || frame.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0
    }

    /// The frame's presentation time in milliseconds.
    var framePresentationTime: MediaTimestamp {
        let pts = frame.pointee.pts != Int64.min ? frame.pointee.pts : frame.pointee.best_effort_timestamp
        return MediaTimestamp(milliseconds: pts == Int64.min ? 0 : pts)
    }

    /// Maps a libavcodec return code: `EAGAIN` is `false`, success `true`, anything else an error.
    private func check(_ status: Int32, what: String) throws(DecodeError) -> Bool {
        if status >= 0 { return true }
        if status == liveplay_averror_eagain() { return false }
        if status == liveplay_averror_eof() { return true }
        let code: DecodeError.Code = status == liveplay_averror_enomem() ? .outOfMemory : .invalidData
        throw DecodeError(code, "\(what): \(Self.describe(status))", averror: status)
    }

    static func describe(_ status: Int32) -> String {
        var text = [CChar](repeating: 0, count: 128)
        av_strerror(status, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
