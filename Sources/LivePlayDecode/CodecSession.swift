import CFFmpeg
import LivePlayCore

/// Owns an `AVCodecContext` with its reusable `AVPacket` and `AVFrame`; the only place that calls
/// `avcodec_*`. Return codes become ``DecodeError``s here, and nowhere else (STYLE.md, rule 6).
final class CodecSession {
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let packet: UnsafeMutablePointer<AVPacket>
    /// What the decoder gave last.
    private let decoded: UnsafeMutablePointer<AVFrame>
    /// The last frame received (valid until the next call): the decoded one, or, from a device, its copy in memory.
    private(set) var frame: UnsafeMutablePointer<AVFrame>
    /// With a device: its frame copied to memory, and what `get_format` chose.
    private let hardware: (copy: UnsafeMutablePointer<AVFrame>, choice: UnsafeMutablePointer<Negotiation>)?

    /// What `get_format` is to pick and what it picked, read by the callback through the context's `opaque`.
    struct Negotiation {
        var format: AVPixelFormat
        /// libavcodec offered no device format: the device's decoder did not start, and software decodes.
        var declined = false
    }

    /// The device format `codecID`'s decoder decodes into on `device`, or nil when this libavcodec cannot use it.
    static func hardwareFormat(codecID: AVCodecID, device: HardwareDevice) -> AVPixelFormat? {
        guard let codec = avcodec_find_decoder(codecID) else { return nil }
        var index: Int32 = 0
        while let configuration = avcodec_get_hw_config(codec, index) {
            let methods = configuration.pointee.methods
            if methods & Int32(AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) != 0,
                configuration.pointee.device_type == device.type
            {
                return configuration.pointee.pix_fmt
            }
            index += 1
        }
        return nil
    }

    /// - Parameter maximumPixels: libavcodec's `max_pixels`: frames larger than this are errors, not allocations
    ///   (a stream can change size mid-GOP without a new sequence header).
    /// - Parameter options: the decoder's private options (`avcodec_open2`'s dictionary), e.g. `cc_dec`'s
    ///   `data_field`.
    init(
        codecID: AVCodecID, name: String, extradata: [UInt8], threadCount: Int, maximumPixels: Int,
        options: [String: String] = [:], device: (reference: UnsafeMutablePointer<AVBufferRef>, format: AVPixelFormat)? = nil
    ) throws(DecodeError) {
        guard let codec = avcodec_find_decoder(codecID) else {
            throw DecodeError(.decoderNotFound, "libavcodec has no \(name) decoder")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw DecodeError(.outOfMemory, "avcodec_alloc_context3 failed")
        }
        guard let packet = av_packet_alloc(), let frame = av_frame_alloc(), let copy = av_frame_alloc() else {
            var context: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&context)
            var reference = device?.reference
            av_buffer_unref(&reference)
            throw DecodeError(.outOfMemory, "av_packet_alloc / av_frame_alloc failed")
        }
        self.context = context
        self.packet = packet
        decoded = frame
        self.frame = frame
        if let device {
            let choice = UnsafeMutablePointer<Negotiation>.allocate(capacity: 1)
            choice.initialize(to: Negotiation(format: device.format))
            hardware = (copy, choice)
            // The context owns the device reference from here on, and frees it with itself.
            context.pointee.hw_device_ctx = device.reference
            context.pointee.opaque = UnsafeMutableRawPointer(choice)
            context.pointee.get_format = { context, offered in CodecSession.chooseFormat(context, offered) }
            // As mpv does: a stream whose level the device does not list is tried anyway.
            context.pointee.hwaccel_flags |= AV_HWACCEL_FLAG_IGNORE_LEVEL
        } else {
            var unused: UnsafeMutablePointer<AVFrame>? = copy
            av_frame_free(&unused)
            hardware = nil
        }
        // Timestamps go in and come out in FLV milliseconds.
        context.pointee.pkt_timebase = AVRational(num: 1, den: 1000)
        // A device decodes one frame at a time; more threads only reorder its work.
        context.pointee.thread_count = device == nil ? Int32(clamping: threadCount) : 1
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
        var frame: UnsafeMutablePointer<AVFrame>? = decoded
        av_frame_free(&frame)
        if let hardware {
            var copy: UnsafeMutablePointer<AVFrame>? = hardware.copy
            av_frame_free(&copy)
            hardware.choice.deinitialize(count: 1)
            hardware.choice.deallocate()
        }
    }

    /// Whether a device decodes: it was given one, and libavcodec did not fall back to software in `get_format`.
    var decodesOnDevice: Bool { hardware.map { !$0.choice.pointee.declined } ?? false }

    /// `get_format`: libavcodec's offer, as values for ``HardwareFormatChoice``.
    private static func chooseFormat(
        _ context: UnsafeMutablePointer<AVCodecContext>?, _ offered: UnsafePointer<AVPixelFormat>?
    ) -> AVPixelFormat {
        guard let offered, let choice = context?.pointee.opaque?.assumingMemoryBound(to: Negotiation.self) else {
            return AV_PIX_FMT_NONE
        }
        var formats: [AVPixelFormat] = []
        while offered[formats.count] != AV_PIX_FMT_NONE { formats.append(offered[formats.count]) }
        let values = formats.map { format in
            HardwareFormatChoice.Offered(
                name: av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "",
                isHardware: (av_pix_fmt_desc_get(format)?.pointee.flags ?? 0) & UInt64(AV_PIX_FMT_FLAG_HWACCEL) != 0)
        }
        let wanted = av_get_pix_fmt_name(choice.pointee.format).map { String(cString: $0) } ?? ""
        switch HardwareFormatChoice.pick(values, device: wanted) {
        case .hardware(let index):
            choice.pointee.declined = false
            return formats[index]
        case .software(let index):
            choice.pointee.declined = true
            return formats[index]
        case .none:
            return AV_PIX_FMT_NONE
        }
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
        av_frame_unref(decoded)
        frame = decoded
        let status = avcodec_receive_frame(context, decoded)
        if status == liveplay_averror_eagain() { return .needsInput }
        if status == liveplay_averror_eof() { return .drained }
        _ = try check(status, what: "receive frame")
        if let hardware, decoded.pointee.format == hardware.choice.pointee.format.rawValue {
            // The device's surface, copied to memory in its software format (NV12, P010).
            av_frame_unref(hardware.copy)
            _ = try check(av_hwframe_transfer_data(hardware.copy, decoded, 0), what: "copy from the device")
            _ = try check(av_frame_copy_props(hardware.copy, decoded), what: "copy from the device")
            frame = hardware.copy
        }
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
