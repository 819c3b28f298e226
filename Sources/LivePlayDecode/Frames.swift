import CFFmpeg
public import LivePlayCore

/// A reference to decoded pixels or samples, shared without copying; frees them in `deinit`.
///
/// The `AVFrame` is a new reference to the decoder's refcounted buffers, which libavcodec never
/// writes again once the frame is out, so sharing it across threads is safe.
///
/// `@unchecked Sendable`: a pointer to buffers libavcodec never writes again (above); the `AVFrame` itself is
/// rewritten only by a ``FrameShelf`` holding the one reference left, when no other thread can reach it.
final class FrameBuffer: @unchecked Sendable {
    let frame: UnsafeMutablePointer<AVFrame>

    init?(referencing source: UnsafePointer<AVFrame>) {
        guard let clone = av_frame_clone(source) else { return nil }
        frame = clone
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
    }
}

/// The frames a decoder handed out, kept for reuse once everyone else has let go of them: a picture or a block of
/// sound then costs neither an `AVFrame` nor an object (issue 50). Bounded: past ``capacity`` frames alive at
/// once, the extra ones are not kept.
struct FrameShelf {
    /// More than play-out holds decoded at once (a few pictures ahead, the sound queued to the device).
    static let capacity = 32
    private var frames: [FrameBuffer] = []

    /// A buffer referencing `source`: a kept one nobody else holds, or a new one.
    mutating func buffer(referencing source: UnsafePointer<AVFrame>) -> FrameBuffer? {
        var free: Int?
        for index in frames.indices where isKnownUniquelyReferenced(&frames[index]) {
            // Unused: its pixels go back to libavcodec's pool now rather than at its next use.
            av_frame_unref(frames[index].frame)
            if free == nil { free = index }
        }
        if let free {
            guard av_frame_ref(frames[free].frame, source) >= 0 else { return nil }
            return frames[free]
        }
        guard let buffer = FrameBuffer(referencing: source) else { return nil }
        if frames.count < Self.capacity { frames.append(buffer) }
        return buffer
    }
}

/// MD5 as ffmpeg's `framemd5` muxer computes it (libavutil's implementation, lowercase hex).
func md5Hex(_ bytes: UnsafeRawBufferPointer) -> String {
    var digest = [UInt8](repeating: 0, count: 16)
    av_md5_sum(&digest, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
    return digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

/// A decoded picture. Its planes stay in libavcodec's buffers until someone asks for bytes.
public struct VideoFrame: Sendable {
    let buffer: FrameBuffer
    public let pts: MediaTimestamp
    public let width: Int
    public let height: Int
    /// libavutil's pixel format name (`yuv420p`, `yuv420p10le`, `nv12`, …).
    public let pixelFormat: String

    init(buffer: FrameBuffer, pts: MediaTimestamp) {
        self.buffer = buffer
        self.pts = pts
        let frame = buffer.frame.pointee
        width = Int(frame.width)
        height = Int(frame.height)
        pixelFormat = av_get_pix_fmt_name(AVPixelFormat(frame.format)).map { String(cString: $0) } ?? "unknown"
    }

    /// The closed-caption data the picture carried (ATSC A/53 `cc_data` triplets from its SEI, which libavcodec's
    /// H.264 and HEVC decoders export as `AV_FRAME_DATA_A53_CC`); nil when none.
    public var closedCaptionData: [UInt8]? {
        guard hasClosedCaptionData, let data = av_frame_get_side_data(buffer.frame, AV_FRAME_DATA_A53_CC) else {
            return nil
        }
        return Array(UnsafeBufferPointer(start: data.pointee.data, count: Int(data.pointee.size)))
    }

    /// Whether the picture carries closed-caption data, without copying it (asked of every picture).
    public var hasClosedCaptionData: Bool {
        guard let data = av_frame_get_side_data(buffer.frame, AV_FRAME_DATA_A53_CC) else { return false }
        return data.pointee.size > 0
    }

    /// One plane of the picture in libavcodec's own buffer (no copy): `rows` rows of `stride` bytes each, of
    /// which the first `rowBytes` are pixels and the rest padding.
    public struct Plane {
        public let bytes: UnsafeRawBufferPointer
        public let stride: Int
        public let rowBytes: Int
        public let rows: Int
    }

    /// Calls `body` with the picture's planes as libavcodec decoded them (Y, U, V for `yuv420p`; Y, UV for
    /// `nv12`): what a renderer uploads, with no copy. The pointers are valid only during the call.
    public func withPlanes<Result>(_ body: ([Plane]) throws -> Result) rethrows -> Result {
        let frame = buffer.frame
        let format = AVPixelFormat(frame.pointee.format)
        let count = Int(max(0, av_pix_fmt_count_planes(format)))
        var rowBytes = [Int32](repeating: 0, count: 4)
        _ = av_image_fill_linesizes(&rowBytes, format, frame.pointee.width)
        let chromaShift = Int(av_pix_fmt_desc_get(format)?.pointee.log2_chroma_h ?? 0)
        let height = Int(frame.pointee.height)
        let strides = withUnsafeBytes(of: frame.pointee.linesize) { Array($0.bindMemory(to: Int32.self)) }
        let data = withUnsafeBytes(of: frame.pointee.data) { Array($0.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)) }
        var planes: [Plane] = []
        for index in 0..<min(count, 4) {
            guard let base = data[index], strides[index] > 0 else { continue }
            // Chroma planes (1 and 2) have fewer rows in subsampled formats; alpha (3) has all of them.
            let rows = index == 1 || index == 2 ? (height + (1 << chromaShift) - 1) >> chromaShift : height
            let stride = Int(strides[index])
            planes.append(
                Plane(
                    bytes: UnsafeRawBufferPointer(start: base, count: stride * rows), stride: stride,
                    rowBytes: Int(rowBytes[index]), rows: rows))
        }
        return try withExtendedLifetime(buffer) { try body(planes) }
    }

    /// Bytes of the picture with planes packed and no row padding (ffmpeg's `rawvideo` layout).
    public var packedSize: Int {
        let frame = buffer.frame.pointee
        return Int(av_image_get_buffer_size(AVPixelFormat(frame.format), frame.width, frame.height, 1))
    }

    /// The picture packed as ffmpeg's `rawvideo` muxer writes it.
    public func packedBytes() -> [UInt8] {
        let size = packedSize
        guard size > 0 else { return [] }
        let frame = buffer.frame
        return [UInt8](unsafeUninitializedCapacity: size) { output, count in
            let written = withUnsafePointer(to: &frame.pointee.data) { data in
                withUnsafePointer(to: &frame.pointee.linesize) { linesize in
                    data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { planes in
                        linesize.withMemoryRebound(to: Int32.self, capacity: 8) { strides in
                            av_image_copy_to_buffer(
                                output.baseAddress, Int32(size), planes, strides, AVPixelFormat(frame.pointee.format),
                                frame.pointee.width, frame.pointee.height, 1)
                        }
                    }
                }
            }
            count = max(0, Int(written))
        }
    }

    /// MD5 of ``packedBytes()``, equal to the hash `ffmpeg -f framemd5` prints for the frame.
    public func md5() -> String {
        packedBytes().withUnsafeBytes(md5Hex)
    }
}

/// A decoded block of audio samples, in the decoder's native sample format until converted.
public struct AudioFrame: Sendable {
    let buffer: FrameBuffer
    public let pts: MediaTimestamp
    public let sampleRate: Int
    public let channels: Int
    /// Samples per channel.
    public let sampleCount: Int
    /// libavutil's sample format name (`fltp`, `s16`, …).
    public let sampleFormat: String
    /// The speakers, as libavutil's `AV_CH_*` mask, when the decoder names them in native order (AC-3, E-AC-3,
    /// AAC, FLAC, Opus's mapping family 1); nil when only the count is known.
    public let channelMask: UInt64?

    init(buffer: FrameBuffer, pts: MediaTimestamp) {
        self.buffer = buffer
        self.pts = pts
        let frame = buffer.frame.pointee
        sampleRate = Int(frame.sample_rate)
        channels = Int(frame.ch_layout.nb_channels)
        sampleCount = Int(frame.nb_samples)
        sampleFormat = av_get_sample_fmt_name(AVSampleFormat(frame.format)).map { String(cString: $0) } ?? "unknown"
        channelMask = frame.ch_layout.order == AV_CHANNEL_ORDER_NATIVE ? frame.ch_layout.u.mask : nil
    }

    /// The layout as libavutil names it (`5.1(side)`, `stereo`), or the channel count.
    public var layoutName: String {
        var layout = buffer.frame.pointee.ch_layout
        var name = [CChar](repeating: 0, count: 64)
        guard av_channel_layout_describe(&layout, &name, name.count) > 0 else { return "\(channels) channels" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Reads sample `index` of `channel` as a Float in [-1, 1), whatever the native format.
    private func sample(_ frame: UnsafeMutablePointer<AVFrame>, channel: Int, index: Int) -> Float {
        let format = AVSampleFormat(frame.pointee.format)
        let planar = av_sample_fmt_is_planar(format) != 0
        let plane = planar ? channel : 0
        let position = planar ? index : index * channels + channel
        let base = UnsafeRawPointer(frame.pointee.extended_data[plane]!)
        switch format {
        case AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_FLTP:
            return base.load(fromByteOffset: position * 4, as: Float.self)
        case AV_SAMPLE_FMT_DBL, AV_SAMPLE_FMT_DBLP:
            return Float(base.load(fromByteOffset: position * 8, as: Double.self))
        case AV_SAMPLE_FMT_S16, AV_SAMPLE_FMT_S16P:
            return Float(base.load(fromByteOffset: position * 2, as: Int16.self)) / 32768
        case AV_SAMPLE_FMT_S32, AV_SAMPLE_FMT_S32P:
            return Float(Double(base.load(fromByteOffset: position * 4, as: Int32.self)) / 2_147_483_648)
        case AV_SAMPLE_FMT_U8, AV_SAMPLE_FMT_U8P:
            return (Float(base.load(fromByteOffset: position, as: UInt8.self)) - 128) / 128
        default:
            return 0
        }
    }

    /// Interleaved 32-bit float samples (`pcm_f32le` order).
    public func interleavedFloat32() -> [Float] {
        let frame = buffer.frame
        var output = [Float]()
        output.reserveCapacity(sampleCount * channels)
        for index in 0..<sampleCount {
            for channel in 0..<channels {
                output.append(sample(frame, channel: channel, index: index))
            }
        }
        return output
    }

    /// Interleaved signed 16-bit samples, converted as libswresample does (round to nearest, clip),
    /// so hashes equal ffmpeg's default `framemd5` (`pcm_s16le`).
    public func interleavedInt16() -> [Int16] {
        let frame = buffer.frame
        let format = AVSampleFormat(frame.pointee.format)
        var output = [Int16]()
        output.reserveCapacity(sampleCount * channels)
        let native16 = format == AV_SAMPLE_FMT_S16 || format == AV_SAMPLE_FMT_S16P
        for index in 0..<sampleCount {
            for channel in 0..<channels {
                let value = sample(frame, channel: channel, index: index)
                if native16 {
                    output.append(Int16(value * 32768))
                } else {
                    let scaled = (value * 32768).rounded(.toNearestOrEven)
                    output.append(scaled.isNaN ? 0 : Int16(max(-32768, min(32767, scaled))))
                }
            }
        }
        return output
    }

    /// The format `md5(as:)` hashes.
    public enum HashFormat: String, Sendable, CaseIterable {
        /// ffmpeg's default for `framemd5`.
        case s16le
        /// As `ffmpeg -c:a pcm_f32le -f framemd5`.
        case f32le
    }

    /// MD5 of the interleaved samples in `format`, equal to ffmpeg's `framemd5` with that PCM codec.
    public func md5(as format: HashFormat = .s16le) -> String {
        switch format {
        case .s16le: interleavedInt16().withUnsafeBytes(md5Hex)
        case .f32le: interleavedFloat32().withUnsafeBytes(md5Hex)
        }
    }
}
