/// A width and a height in pixels.
public struct PictureSize: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)" }
}

/// A packed 8-bit RGB picture: rows top to bottom, `R G B` per pixel, no row padding (`rgb24`).
///
/// The form pictures take between a decoded ``VideoFrame`` and an image file: small, Swift-owned, and
/// simple to scale, crop and rotate without libswscale (which liveplay does not link).
public struct RGBPicture: Hashable, Sendable {
    public let width: Int
    public let height: Int
    /// `width * height * 3` bytes.
    public private(set) var pixels: [UInt8]

    /// Wraps packed `rgb24` bytes; `pixels.count` must be `width * height * 3`.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height * 3, "rgb24 size mismatch")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A picture of one colour (black by default): the canvas letterboxing draws on.
    public init(width: Int, height: Int, red: UInt8 = 0, green: UInt8 = 0, blue: UInt8 = 0) {
        precondition(width >= 0 && height >= 0, "negative picture size")
        self.width = width
        self.height = height
        if red == green, green == blue {
            pixels = [UInt8](repeating: red, count: width * height * 3)
        } else {
            pixels = [UInt8](unsafeUninitializedCapacity: width * height * 3) { buffer, count in
                for index in 0..<(width * height) {
                    buffer[index * 3] = red
                    buffer[index * 3 + 1] = green
                    buffer[index * 3 + 2] = blue
                }
                count = width * height * 3
            }
        }
    }

    public var size: PictureSize { PictureSize(width: width, height: height) }

    /// The colour at column `x`, row `y`.
    public func pixel(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8) {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel out of bounds")
        let index = (y * width + x) * 3
        return (pixels[index], pixels[index + 1], pixels[index + 2])
    }

    /// Scaled down, its shape kept, to fit within `size`; as it is when it fits already.
    public func fitted(within size: PictureSize) -> RGBPicture {
        guard width > size.width || height > size.height, width > 0, height > 0 else { return self }
        let scale = min(Double(size.width) / Double(width), Double(size.height) / Double(height))
        return scaled(
            to: PictureSize(
                width: max(1, Int((Double(width) * scale).rounded())),
                height: max(1, Int((Double(height) * scale).rounded()))))
    }

    /// Resampled to `size` by bilinear interpolation between pixel centres.
    ///
    /// Bilinear is sharp enough for snapshots and thumbnails; a large reduction aliases fine detail.
    public func scaled(to size: PictureSize) -> RGBPicture {
        let (outputWidth, outputHeight) = (max(0, size.width), max(0, size.height))
        if outputWidth == width, outputHeight == height { return self }
        guard width > 0, height > 0, outputWidth > 0, outputHeight > 0 else {
            return RGBPicture(width: outputWidth, height: outputHeight)
        }
        let columns = Self.samplePositions(output: outputWidth, input: width)
        let rows = Self.samplePositions(output: outputHeight, input: height)
        let rowBytes = width * 3
        let output = [UInt8](unsafeUninitializedCapacity: outputWidth * outputHeight * 3) { buffer, count in
            pixels.withUnsafeBufferPointer { source in
                for y in 0..<outputHeight {
                    let row = rows[y]
                    let top = row.lower * rowBytes
                    let bottom = row.upper * rowBytes
                    let outputRow = y * outputWidth * 3
                    for x in 0..<outputWidth {
                        let column = columns[x]
                        let left = column.lower * 3
                        let right = column.upper * 3
                        for channel in 0..<3 {
                            let upper =
                                Float(source[top + left + channel]) * (1 - column.weight)
                                + Float(source[top + right + channel]) * column.weight
                            let lower =
                                Float(source[bottom + left + channel]) * (1 - column.weight)
                                + Float(source[bottom + right + channel]) * column.weight
                            let value = upper * (1 - row.weight) + lower * row.weight
                            buffer[outputRow + x * 3 + channel] = UInt8(min(255, max(0, value.rounded())))
                        }
                    }
                }
            }
            count = outputWidth * outputHeight * 3
        }
        return RGBPicture(width: outputWidth, height: outputHeight, pixels: output)
    }

    /// The rectangle at (`x`, `y`) of `size`, clipped to the picture.
    public func cropped(x: Int, y: Int, size: PictureSize) -> RGBPicture {
        let left = min(max(0, x), width)
        let top = min(max(0, y), height)
        let right = min(max(left, x + size.width), width)
        let bottom = min(max(top, y + size.height), height)
        let (outputWidth, outputHeight) = (right - left, bottom - top)
        if outputWidth == width, outputHeight == height { return self }
        var output = [UInt8]()
        output.reserveCapacity(outputWidth * outputHeight * 3)
        for row in top..<bottom {
            let start = (row * width + left) * 3
            output.append(contentsOf: pixels[start..<(start + outputWidth * 3)])
        }
        return RGBPicture(width: outputWidth, height: outputHeight, pixels: output)
    }

    /// Turned clockwise by `quarterTurns` × 90° (any integer; negative turns counter-clockwise).
    /// A quarter turn swaps width and height.
    public func rotated(clockwiseQuarterTurns quarterTurns: Int) -> RGBPicture {
        let turns = ((quarterTurns % 4) + 4) % 4
        guard turns != 0 else { return self }
        let (outputWidth, outputHeight) = turns == 2 ? (width, height) : (height, width)
        let (width, height) = (self.width, self.height)
        let output = [UInt8](unsafeUninitializedCapacity: pixels.count) { buffer, count in
            pixels.withUnsafeBufferPointer { source in
                for y in 0..<outputHeight {
                    for x in 0..<outputWidth {
                        // The source pixel that lands on (x, y).
                        let (sourceX, sourceY) =
                            switch turns {
                            case 1: (y, height - 1 - x)
                            case 2: (width - 1 - x, height - 1 - y)
                            default: (width - 1 - y, x)
                            }
                        let from = (sourceY * width + sourceX) * 3
                        let to = (y * outputWidth + x) * 3
                        buffer[to] = source[from]
                        buffer[to + 1] = source[from + 1]
                        buffer[to + 2] = source[from + 2]
                    }
                }
            }
            count = pixels.count
        }
        return RGBPicture(width: outputWidth, height: outputHeight, pixels: output)
    }

    /// This picture with `picture` drawn over it, its top-left corner at (`x`, `y`); parts outside are clipped.
    public func drawing(_ picture: RGBPicture, atX x: Int, y: Int) -> RGBPicture {
        var result = self
        let left = max(0, x)
        let right = min(width, x + picture.width)
        guard left < right else { return result }
        let rowBytes = (right - left) * 3
        result.pixels.withUnsafeMutableBufferPointer { target in
            picture.pixels.withUnsafeBufferPointer { source in
                for row in max(0, y)..<max(max(0, y), min(height, y + picture.height)) {
                    let from = ((row - y) * picture.width + (left - x)) * 3
                    let to = (row * width + left) * 3
                    for offset in 0..<rowBytes { target[to + offset] = source[from + offset] }
                }
            }
        }
        return result
    }

    /// For each output position, the two input positions around its centre and the second one's weight.
    private static func samplePositions(output: Int, input: Int) -> [(lower: Int, upper: Int, weight: Float)] {
        let ratio = Double(input) / Double(output)
        return (0..<output).map { index in
            let position = min(max(0, (Double(index) + 0.5) * ratio - 0.5), Double(input - 1))
            let lower = Int(position)
            return (lower, min(lower + 1, input - 1), Float(position - Double(lower)))
        }
    }
}
