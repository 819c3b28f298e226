import CFFmpeg
public import LivePlayCore

/// Where chroma samples sit relative to luma (`AVChromaLocation`): it tells 4:2:0 flavours apart.
public enum ChromaLocation: String, Sendable, Hashable, CaseIterable {
    case unspecified
    /// MPEG-2/4 and H.264's default for 4:2:0 (Y4M `C420mpeg2`).
    case left
    /// MPEG-1 and JPEG (Y4M `C420jpeg`).
    case center
    /// ITU-R 601 and DV (Y4M `C420paldv`).
    case topLeft
    case top
    case bottomLeft
    case bottom
}

/// How a frame's samples are laid out once semi-planar formats are split: what ``VideoFrame/planarBytes()``
/// returns.
public struct PlanarPicture: Sendable, Hashable {
    /// libavutil's name of the planar format `bytes` are in (`yuv420p`, `yuv420p10le`, …).
    public var pixelFormat: String
    /// Planes packed one after another without padding (ffmpeg's `rawvideo` layout of `pixelFormat`).
    public var bytes: [UInt8]

    /// MD5 of ``bytes``, as ffmpeg's `framemd5` gives it for a picture in ``pixelFormat``.
    public func md5() -> String {
        bytes.withUnsafeBytes(md5Hex)
    }
}

extension VideoFrame {
    /// A picture made from packed bytes in ffmpeg's `rawvideo` layout of `pixelFormat` (the inverse of
    /// ``packedBytes()``): for synthetic sources and tests.
    public init(
        packedBytes: [UInt8], width: Int, height: Int, pixelFormat: String, pts: MediaTimestamp = .zero
    ) throws(DecodeError) {
        let format = av_get_pix_fmt(pixelFormat)
        guard format != AV_PIX_FMT_NONE else {
            throw DecodeError(.unsupportedFormat, "libavutil knows no pixel format \(pixelFormat)")
        }
        guard width > 0, height > 0, let width32 = Int32(exactly: width), let height32 = Int32(exactly: height)
        else {
            throw DecodeError(.unsupportedFormat, "picture size \(width)x\(height) is invalid")
        }
        let expected = Int(av_image_get_buffer_size(format, width32, height32, 1))
        guard expected == packedBytes.count else {
            throw DecodeError(
                .unsupportedFormat,
                "\(pixelFormat) \(width)x\(height) takes \(expected) bytes, \(packedBytes.count) given")
        }
        guard let frame = av_frame_alloc() else { throw DecodeError(.outOfMemory, "av_frame_alloc failed") }
        defer {
            var owned: UnsafeMutablePointer<AVFrame>? = frame
            av_frame_free(&owned)
        }
        frame.pointee.format = format.rawValue
        frame.pointee.width = width32
        frame.pointee.height = height32
        let status = av_frame_get_buffer(frame, 0)
        guard status >= 0 else {
            throw DecodeError(.outOfMemory, "av_frame_get_buffer: \(CodecSession.describe(status))", averror: status)
        }
        packedBytes.withUnsafeBufferPointer { source in
            var sourcePlanes = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: 4)
            var sourceStrides = [Int32](repeating: 0, count: 4)
            _ = av_image_fill_arrays(
                &sourcePlanes, &sourceStrides, source.baseAddress, format, width32, height32, 1)
            var targetPlanes = Self.planes(of: frame).map { $0.map { UnsafeMutablePointer(mutating: $0) } }
            var targetStrides = Self.strides(of: frame)
            var constantPlanes = sourcePlanes.map { $0.map { UnsafePointer($0) } }
            av_image_copy(&targetPlanes, &targetStrides, &constantPlanes, sourceStrides, format, width32, height32)
        }
        frame.pointee.pts = pts.milliseconds
        guard let buffer = FrameBuffer(referencing: frame) else {
            throw DecodeError(.outOfMemory, "av_frame_clone failed")
        }
        self.init(buffer: buffer, pts: pts)
    }

    /// Whether samples use the full code range (JPEG, `yuvj*`, RGB) rather than the limited video range.
    public var isFullRange: Bool {
        let frame = buffer.frame.pointee
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(frame.format)) else { return false }
        return frame.color_range == AVCOL_RANGE_JPEG || pixelFormat.hasPrefix("yuvj")
            || descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB) != 0
    }

    /// Where the chroma samples sit, as the decoder reported it.
    public var chromaLocation: ChromaLocation {
        switch buffer.frame.pointee.chroma_location {
        case AVCHROMA_LOC_LEFT: .left
        case AVCHROMA_LOC_CENTER: .center
        case AVCHROMA_LOC_TOPLEFT: .topLeft
        case AVCHROMA_LOC_TOP: .top
        case AVCHROMA_LOC_BOTTOMLEFT: .bottomLeft
        case AVCHROMA_LOC_BOTTOM: .bottom
        default: .unspecified
        }
    }

    /// The shape of one pixel (width : height), or `nil` when the stream does not say.
    public var sampleAspectRatio: (width: Int, height: Int)? {
        let ratio = buffer.frame.pointee.sample_aspect_ratio
        guard ratio.num > 0, ratio.den > 0 else { return nil }
        return (Int(ratio.num), Int(ratio.den))
    }

    /// The picture in a planar format: planar formats as they are (``packedBytes()``), semi-planar ones
    /// (`nv12`, `nv21`, `p010le`, `p016le`) with their interleaved chroma split into two planes. `nil` for
    /// formats that are neither (RGB, packed YUV, palettes, hardware surfaces).
    public func planarBytes() -> PlanarPicture? {
        let planarEquivalents = [
            "nv12": "yuv420p", "nv21": "yuv420p", "p010le": "yuv420p10le", "p016le": "yuv420p16le",
        ]
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(buffer.frame.pointee.format)) else { return nil }
        let flags = descriptor.pointee.flags
        let unsupported = UInt64(
            AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_RGB
                | AV_PIX_FMT_FLAG_BAYER | AV_PIX_FMT_FLAG_FLOAT)
        guard flags & unsupported == 0 else { return nil }
        guard let planar = planarEquivalents[pixelFormat] else {
            let isPlanar = flags & UInt64(AV_PIX_FMT_FLAG_PLANAR) != 0 || descriptor.pointee.nb_components == 1
            return isPlanar ? PlanarPicture(pixelFormat: pixelFormat, bytes: packedBytes()) : nil
        }
        // Components 0..2 (Y, U, V) read one row at a time into 16-bit samples, then stored at the planar
        // format's sample size: 1 byte, or 2 bytes little-endian with the value in the low bits.
        let bytesPerSample = descriptor.pointee.comp.0.depth > 8 ? 2 : 1
        var output = [UInt8]()
        output.reserveCapacity(packedSize)
        withComponentRows(descriptor: descriptor) { _, row in
            for sample in row {
                output.append(UInt8(truncatingIfNeeded: sample))
                if bytesPerSample == 2 { output.append(UInt8(truncatingIfNeeded: sample >> 8)) }
            }
        }
        return PlanarPicture(pixelFormat: planar, bytes: output)
    }

    /// The picture converted to packed 8-bit RGB.
    ///
    /// YUV is converted with the matrix the frame is tagged with (BT.709 or BT.2020), else BT.601 (what
    /// untagged SD and most live streams use), in limited range unless the frame says full (`yuvj*` or
    /// `color_range` JPEG). Subsampled chroma is taken from the nearest chroma sample. Any 8–16-bit
    /// planar, semi-planar or packed YUV, grey or RGB format libavutil describes is read; palette, Bayer,
    /// float and hardware formats are ``DecodeError/Code/unsupportedFormat``.
    public func rgbPicture() throws(DecodeError) -> RGBPicture {
        let frame = buffer.frame
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(frame.pointee.format)) else {
            throw DecodeError(.unsupportedFormat, "pixel format \(pixelFormat) has no description")
        }
        let unsupported = UInt64(
            AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BAYER
                | AV_PIX_FMT_FLAG_FLOAT)
        let depth = Int(descriptor.pointee.comp.0.depth)
        guard descriptor.pointee.flags & unsupported == 0, depth >= 1, depth <= 16, width > 0, height > 0 else {
            throw DecodeError(.unsupportedFormat, "cannot convert \(pixelFormat) \(width)x\(height) to RGB")
        }
        var planes: [[UInt16]] = []
        withComponentRows(descriptor: descriptor) { component, row in
            if planes.count == component { planes.append([]) }
            planes[component].append(contentsOf: row)
        }
        let pixels: [UInt8]
        if descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB) != 0 {
            pixels = rgbFromRGB(planes, depth: depth)
        } else {
            pixels = rgbFromYUV(
                planes, depth: depth, chromaShift: (descriptor.pointee.log2_chroma_w, descriptor.pointee.log2_chroma_h),
                matrix: ColorMatrix(frame.pointee.colorspace))
        }
        return RGBPicture(width: width, height: height, pixels: pixels)
    }

    /// Reads components 0..<min(3, n) (Y U V, R G B or grey; never alpha) row by row in the component's own
    /// resolution, handing each row to `body` as 16-bit samples.
    private func withComponentRows(
        descriptor: UnsafePointer<AVPixFmtDescriptor>,
        _ body: (_ component: Int, _ row: UnsafeBufferPointer<UInt16>) -> Void
    ) {
        let frame = buffer.frame
        var planes = Self.planes(of: frame)
        let strides = Self.strides(of: frame)
        let components = min(3, Int(descriptor.pointee.nb_components))
        let (shiftX, shiftY) = (descriptor.pointee.log2_chroma_w, descriptor.pointee.log2_chroma_h)
        withExtendedLifetime(buffer) {
            for component in 0..<components {
                // Chroma shifts are 0 for RGB, so components 1 and 2 are full size there.
                let isChroma = component == 1 || component == 2
                let planeWidth = isChroma ? chromaSize(width, shift: shiftX) : width
                let planeHeight = isChroma ? chromaSize(height, shift: shiftY) : height
                var row = [UInt16](repeating: 0, count: planeWidth)
                for y in 0..<planeHeight {
                    row.withUnsafeMutableBufferPointer { target in
                        planes.withUnsafeMutableBufferPointer { data in
                            av_read_image_line2(
                                target.baseAddress, data.baseAddress, strides, descriptor, 0, Int32(y),
                                Int32(component), Int32(planeWidth), 0, 2)
                        }
                    }
                    row.withUnsafeBufferPointer { body(component, $0) }
                }
            }
        }
    }

    private func rgbFromRGB(_ planes: [[UInt16]], depth: Int) -> [UInt8] {
        let maximum = Float((1 << depth) - 1)
        let count = width * height
        return [UInt8](unsafeUninitializedCapacity: count * 3) { output, written in
            for index in 0..<count {
                for channel in 0..<3 {
                    let plane = planes[min(channel, planes.count - 1)]
                    output[index * 3 + channel] = UInt8((Float(plane[index]) * 255 / maximum).rounded())
                }
            }
            written = count * 3
        }
    }

    private func rgbFromYUV(
        _ planes: [[UInt16]], depth: Int, chromaShift: (x: UInt8, y: UInt8), matrix: ColorMatrix
    ) -> [UInt8] {
        let scale = Float(1 << (depth - 8))
        let fullRange = isFullRange
        // Normalised luma in [0, 1] and chroma in [-0.5, 0.5] (ITU-R BT.601 §2.5.3, BT.709 §3.4).
        let lumaOffset: Float = fullRange ? 0 : 16 * scale
        let lumaRange: Float = fullRange ? Float((1 << depth) - 1) : 219 * scale
        let chromaOffset = Float(1 << (depth - 1))
        let chromaRange: Float = fullRange ? Float((1 << depth) - 1) : 224 * scale
        let chromaWidth = chromaSize(width, shift: chromaShift.x)
        let (shiftX, shiftY) = (Int(chromaShift.x), Int(chromaShift.y))
        let (width, height) = (self.width, self.height)
        let (redFromV, greenFromU, greenFromV, blueFromU) = matrix.coefficients
        // Grey formats have luma only: chroma stays neutral.
        let neutral = [UInt16(chromaOffset)]
        let (blueDifferences, redDifferences) = planes.count == 3 ? (planes[1], planes[2]) : (neutral, neutral)
        let chromaMask = planes.count == 3 ? -1 : 0
        return [UInt8](unsafeUninitializedCapacity: width * height * 3) { output, written in
            planes[0].withUnsafeBufferPointer { luma in
                blueDifferences.withUnsafeBufferPointer { blueSamples in
                    redDifferences.withUnsafeBufferPointer { redSamples in
                        for y in 0..<height {
                            for x in 0..<width {
                                let chromaIndex = ((y >> shiftY) * chromaWidth + (x >> shiftX)) & chromaMask
                                let lumaValue = (Float(luma[y * width + x]) - lumaOffset) / lumaRange
                                let blue = (Float(blueSamples[chromaIndex]) - chromaOffset) / chromaRange
                                let red = (Float(redSamples[chromaIndex]) - chromaOffset) / chromaRange
                                let index = (y * width + x) * 3
                                output[index] = Self.byte(lumaValue + redFromV * red)
                                output[index + 1] = Self.byte(lumaValue - greenFromU * blue - greenFromV * red)
                                output[index + 2] = Self.byte(lumaValue + blueFromU * blue)
                            }
                        }
                    }
                }
            }
            written = width * height * 3
        }
    }

    private static func byte(_ value: Float) -> UInt8 {
        UInt8(min(255, max(0, (value * 255).rounded())))
    }

    private func chromaSize(_ size: Int, shift: UInt8) -> Int {
        (size + (1 << Int(shift)) - 1) >> Int(shift)
    }

    fileprivate static func planes(of frame: UnsafeMutablePointer<AVFrame>) -> [UnsafePointer<UInt8>?] {
        let data = frame.pointee.data
        return [data.0, data.1, data.2, data.3].map { $0.map { UnsafePointer($0) } }
    }

    fileprivate static func strides(of frame: UnsafeMutablePointer<AVFrame>) -> [Int32] {
        let linesize = frame.pointee.linesize
        return [linesize.0, linesize.1, linesize.2, linesize.3]
    }
}

/// The luma/chroma matrix a YUV frame was made with (Kr and Kb of ITU-R BT.601, BT.709, BT.2020).
private enum ColorMatrix {
    case bt601
    case bt709
    case bt2020

    init(_ space: AVColorSpace) {
        switch space {
        case AVCOL_SPC_BT709: self = .bt709
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: self = .bt2020
        default: self = .bt601
        }
    }

    /// R = Y + a·V, G = Y − b·U − c·V, B = Y + d·U, with U and V in [-0.5, 0.5].
    var coefficients: (redFromV: Float, greenFromU: Float, greenFromV: Float, blueFromU: Float) {
        let (red, blue): (Float, Float) =
            switch self {
            case .bt601: (0.299, 0.114)
            case .bt709: (0.2126, 0.0722)
            case .bt2020: (0.2627, 0.0593)
            }
        let green = 1 - red - blue
        return (2 * (1 - red), 2 * blue * (1 - blue) / green, 2 * red * (1 - red) / green, 2 * (1 - blue))
    }
}
