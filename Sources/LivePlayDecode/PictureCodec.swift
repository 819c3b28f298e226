import CFFmpeg

/// A codec context with one frame and one packet, for a single picture coded at once (a PNG snapshot, a poster):
/// allocated together, freed together in `deinit`.
final class PictureCodec {
    let context: UnsafeMutablePointer<AVCodecContext>
    let frame: UnsafeMutablePointer<AVFrame>
    let packet: UnsafeMutablePointer<AVPacket>

    init(_ codec: UnsafePointer<AVCodec>) throws(DecodeError) {
        guard let context = avcodec_alloc_context3(codec) else {
            throw DecodeError(.outOfMemory, "avcodec_alloc_context3 failed")
        }
        guard let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            var context: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&context)
            throw DecodeError(.outOfMemory, "av_frame_alloc / av_packet_alloc failed")
        }
        (self.context, self.frame, self.packet) = (context, frame, packet)
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&packet)
    }

    /// A negative libavcodec return code becomes a ``DecodeError`` (out of memory whatever `code` says).
    static func check(_ status: Int32, code: DecodeError.Code, what: String) throws(DecodeError) {
        guard status < 0 else { return }
        let code = status == liveplay_averror_enomem() ? .outOfMemory : code
        throw DecodeError(code, "\(what): \(CodecSession.describe(status))", averror: status)
    }
}
