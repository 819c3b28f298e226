import CFFmpeg

extension DecodeError.Code {
    /// This libavcodec build has no encoder for the format (PNG needs libavcodec built with zlib).
    public static let encoderNotFound = DecodeError.Code(rawValue: "encoder_not_found")
    /// libavcodec refused to encode a picture.
    public static let encodeFailed = DecodeError.Code(rawValue: "encode_failed")
}

/// Encodes ``RGBPicture``s as PNG files with libavcodec's PNG encoder (lossless, `rgb24`).
///
/// A value with no state: each ``encode(_:)`` opens an encoder for that picture's size and frees it before
/// returning, so pictures of any size can follow each other and one encoder can be used from any thread.
/// Snapshots are rare enough that the open (microseconds) does not matter.
public struct PNGEncoder: Sendable, Hashable {
    /// zlib's level, 0 (store, fastest) to 9 (smallest); libavcodec's default when `nil`.
    public var compressionLevel: Int?

    public init(compressionLevel: Int? = nil) {
        self.compressionLevel = compressionLevel
    }

    /// The PNG file's bytes.
    public func encode(_ picture: RGBPicture) throws(DecodeError) -> [UInt8] {
        guard picture.width > 0, picture.height > 0 else {
            throw DecodeError(.unsupportedFormat, "cannot encode an empty \(picture.size) picture")
        }
        let session = try PNGSession(size: picture.size, compressionLevel: compressionLevel)
        return try session.encode(picture)
    }
}

/// One PNG encoder for one picture's size.
private final class PNGSession {
    private let codec: PictureCodec

    init(size: PictureSize, compressionLevel: Int?) throws(DecodeError) {
        guard let encoder = avcodec_find_encoder(AV_CODEC_ID_PNG) else {
            throw DecodeError(.encoderNotFound, "libavcodec has no PNG encoder")
        }
        guard let width = Int32(exactly: size.width), let height = Int32(exactly: size.height) else {
            throw DecodeError(.unsupportedFormat, "picture size \(size) is too large")
        }
        codec = try PictureCodec(encoder)
        let (context, frame) = (codec.context, codec.frame)
        context.pointee.width = width
        context.pointee.height = height
        context.pointee.pix_fmt = AV_PIX_FMT_RGB24
        // Video encoders refuse to open without a time base, though a still picture has no timing.
        context.pointee.time_base = AVRational(num: 1, den: 1)
        if let compressionLevel { context.pointee.compression_level = Int32(clamping: compressionLevel) }
        try PictureCodec.check(avcodec_open2(context, encoder, nil), code: .openFailed, what: "open PNG encoder")
        frame.pointee.format = AV_PIX_FMT_RGB24.rawValue
        frame.pointee.width = width
        frame.pointee.height = height
        try PictureCodec.check(av_frame_get_buffer(frame, 0), code: .outOfMemory, what: "allocate PNG frame")
    }

    func encode(_ picture: RGBPicture) throws(DecodeError) -> [UInt8] {
        let (context, frame, packet) = (codec.context, codec.frame, codec.packet)
        // libavcodec's rows may be padded (linesize ≥ width × 3): copy row by row.
        let rowBytes = picture.width * 3
        let stride = Int(frame.pointee.linesize.0)
        guard let base = frame.pointee.data.0 else { throw DecodeError(.outOfMemory, "PNG frame has no buffer") }
        picture.pixels.withUnsafeBufferPointer { source in
            for row in 0..<picture.height {
                (base + row * stride).update(from: source.baseAddress! + row * rowBytes, count: rowBytes)
            }
        }
        frame.pointee.pts = 0
        try PictureCodec.check(avcodec_send_frame(context, frame), code: .encodeFailed, what: "send picture")
        try PictureCodec.check(avcodec_send_frame(context, nil), code: .encodeFailed, what: "flush encoder")
        try PictureCodec.check(avcodec_receive_packet(context, packet), code: .encodeFailed, what: "receive PNG")
        defer { av_packet_unref(packet) }
        guard let data = packet.pointee.data, packet.pointee.size > 0 else {
            throw DecodeError(.encodeFailed, "the PNG encoder produced no bytes")
        }
        return Array(UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)))
    }
}
