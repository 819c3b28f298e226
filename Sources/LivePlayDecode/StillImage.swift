import CFFmpeg

/// A PNG or JPEG file's picture, decoded by libavcodec's own image decoders (`png`, `mjpeg`): a poster or a cover.
///
/// Bounded before anything is allocated for it: at most ``maximumBytes`` of file and ``maximumPixels`` of picture
/// (libavcodec's `max_pixels`, so a header claiming 60,000 × 60,000 is refused, not allocated). Transparency is
/// dropped (the colour as it is, over black); a paletted PNG is looked up in its palette.
public enum StillImage {
    /// Larger files are not posters.
    public static let maximumBytes = 16 << 20
    /// 4096 × 4096: a larger picture is refused.
    public static let maximumPixels = 4096 * 4096

    /// The picture in `bytes`, a whole PNG or JPEG file.
    /// - Throws: ``DecodeError``: `unsupportedFormat` (not PNG or JPEG), `tooLarge`, `invalidData` (libavcodec could
    ///   not decode it), `decoderNotFound`.
    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> RGBPicture {
        guard bytes.count <= maximumBytes else {
            throw DecodeError(.tooLarge, "the image is larger than \(maximumBytes >> 20) MiB")
        }
        let codecID: AVCodecID
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            codecID = AV_CODEC_ID_PNG
        } else if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            codecID = AV_CODEC_ID_MJPEG
        } else {
            throw DecodeError(.unsupportedFormat, "the image is not a PNG or a JPEG file")
        }
        let session = try ImageSession(codecID)
        return try session.decode(bytes)
    }
}

/// One image decoder, for one file.
private final class ImageSession {
    private let codec: PictureCodec

    init(_ codecID: AVCodecID) throws(DecodeError) {
        guard let decoder = avcodec_find_decoder(codecID) else {
            throw DecodeError(.decoderNotFound, "libavcodec has no \(codecID == AV_CODEC_ID_PNG ? "PNG" : "JPEG") decoder")
        }
        codec = try PictureCodec(decoder)
        codec.context.pointee.max_pixels = Int64(StillImage.maximumPixels)
        // One picture: no frame threads to start and join.
        codec.context.pointee.thread_count = 1
        try PictureCodec.check(avcodec_open2(codec.context, decoder, nil), code: .openFailed, what: "open the image decoder")
    }

    func decode(_ bytes: [UInt8]) throws(DecodeError) -> RGBPicture {
        let (context, frame, packet) = (codec.context, codec.frame, codec.packet)
        try PictureCodec.check(av_new_packet(packet, Int32(bytes.count)), code: .outOfMemory, what: "allocate the image packet")
        defer { av_packet_unref(packet) }
        bytes.withUnsafeBufferPointer { packet.pointee.data.update(from: $0.baseAddress!, count: bytes.count) }
        for status in [avcodec_send_packet(context, packet), avcodec_send_packet(context, nil)] {
            try PictureCodec.check(status, code: .invalidData, what: "decode the image")
        }
        try PictureCodec.check(avcodec_receive_frame(context, frame), code: .invalidData, what: "decode the image")
        defer { av_frame_unref(frame) }
        let (width, height) = (Int(frame.pointee.width), Int(frame.pointee.height))
        guard width > 0, height > 0, width * height <= StillImage.maximumPixels else {
            throw DecodeError(.tooLarge, "the image is \(width)x\(height), more than \(StillImage.maximumPixels) pixels")
        }
        if AVPixelFormat(frame.pointee.format) == AV_PIX_FMT_PAL8 { return paletted(width: width, height: height) }
        guard let buffer = FrameBuffer(referencing: frame) else { throw DecodeError(.outOfMemory, "av_frame_clone failed") }
        return try VideoFrame(buffer: buffer, pts: .zero).rgbPicture()
    }

    /// A `pal8` picture through its palette (`data[1]`: 256 native-endian `0xAARRGGBB` words).
    private func paletted(width: Int, height: Int) -> RGBPicture {
        let frame = codec.frame
        let indices = frame.pointee.data.0!
        let stride = Int(frame.pointee.linesize.0)
        let palette = UnsafeRawPointer(frame.pointee.data.1!).assumingMemoryBound(to: UInt32.self)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for row in 0..<height {
            for column in 0..<width {
                let colour = palette[Int(indices[row * stride + column])]
                let at = (row * width + column) * 3
                pixels[at] = UInt8(truncatingIfNeeded: colour >> 16)
                pixels[at + 1] = UInt8(truncatingIfNeeded: colour >> 8)
                pixels[at + 2] = UInt8(truncatingIfNeeded: colour)
            }
        }
        return RGBPicture(width: width, height: height, pixels: pixels)
    }
}
