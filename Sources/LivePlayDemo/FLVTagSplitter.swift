import LivePlayFLV
public import NIOCore

/// Splits an FLV byte stream into raw tags, in any chunking, without interpreting the bodies.
///
/// The server works at tag level (it rewrites timestamps and fans out bytes), so it needs less than
/// `FLVDemuxer` and must not copy: bodies come out as slices of the input. Short input means
/// "need more data" (``nextTag()`` returns `nil`). With `keepsBodies` off the splitter only reads tag
/// headers and skips the bodies, which is all the load generator needs to follow media time.
/// Layout: Adobe FLV specification v10.1, §E.2 (header), §E.3 (body), §E.4.1 (tag header).
public struct FLVTagSplitter: Sendable {
    /// One FLV tag.
    public struct Tag: Sendable, Equatable {
        /// `TagType` (8 audio, 9 video, 18 script), filter bit cleared.
        public var type: UInt8
        /// The 32-bit timestamp: 24 bits plus the extension byte, in milliseconds.
        public var timestamp: UInt32
        public var dataSize: Int
        /// The body, a slice of the input; `nil` when the splitter skips bodies.
        public var body: ByteBuffer?
    }

    private enum State: Sendable {
        case fileHeader
        case skipping(Int)
        case tagHeader
        case body(type: UInt8, timestamp: UInt32, size: Int)
    }

    static let fileHeaderSize = 9
    static let tagHeaderSize = FLVTagHeader.size
    static let trailerSize = 4

    public let keepsBodies: Bool
    /// The 9-byte FLV file header, once read.
    public private(set) var fileHeader: ByteBuffer?
    /// Bytes consumed so far.
    public private(set) var consumedByteCount: Int64 = 0
    private var state = State.fileHeader
    private var pending = ByteBuffer()

    public init(keepsBodies: Bool = true) {
        self.keepsBodies = keepsBodies
    }

    public mutating func append(_ buffer: ByteBuffer) {
        if pending.readableBytes == 0 {
            pending = buffer
        } else {
            var buffer = buffer
            pending.writeBuffer(&buffer)
        }
    }

    /// The next complete tag, or `nil` until more bytes arrive.
    public mutating func nextTag() throws(DemoError) -> Tag? {
        while true {
            switch state {
            case .fileHeader:
                guard pending.readableBytes >= Self.fileHeaderSize else { return nil }
                let header = pending.readSlice(length: Self.fileHeaderSize)!
                guard header.getBytes(at: header.readerIndex, length: 3) == Array("FLV".utf8),
                    let dataOffset = header.getInteger(at: header.readerIndex + 5, as: UInt32.self),
                    dataOffset >= UInt32(Self.fileHeaderSize), dataOffset < 1 << 20
                else {
                    throw DemoError(.invalidFLV, "no FLV header")
                }
                fileHeader = header
                consumed(Self.fileHeaderSize)
                state = .skipping(Int(dataOffset) - Self.fileHeaderSize + Self.trailerSize)
            case .skipping(let count):
                let step = min(count, pending.readableBytes)
                pending.moveReaderIndex(forwardBy: step)
                consumed(step)
                guard step == count else {
                    state = .skipping(count - step)
                    return nil
                }
                state = .tagHeader
            case .tagHeader:
                guard pending.readableBytes >= Self.tagHeaderSize else {
                    compact()
                    return nil
                }
                let header = pending.withUnsafeReadableBytes { FLVTagHeader($0) }!
                let (type, size, timestamp) = (header.typeByte & 0x1F, header.dataSize, header.timestamp)
                pending.moveReaderIndex(forwardBy: Self.tagHeaderSize)
                consumed(Self.tagHeaderSize)
                if keepsBodies {
                    state = .body(type: type, timestamp: timestamp, size: size)
                } else {
                    state = .skipping(size + Self.trailerSize)
                    return Tag(type: type, timestamp: timestamp, dataSize: size, body: nil)
                }
            case .body(let type, let timestamp, let size):
                guard pending.readableBytes >= size else { return nil }
                let body = pending.readSlice(length: size)!
                consumed(size)
                state = .skipping(Self.trailerSize)
                return Tag(type: type, timestamp: timestamp, dataSize: size, body: body)
            }
        }
    }

    private mutating func consumed(_ count: Int) {
        consumedByteCount += Int64(count)
    }

    /// Drops consumed bytes when little is left, so a long stream does not grow the cumulation buffer.
    private mutating func compact() {
        if pending.readableBytes == 0 {
            pending = ByteBuffer()
        } else if pending.readerIndex > 64 * 1024 {
            pending.discardReadBytes()
        }
    }
}

/// Writes FLV tags (§E.4.1) with a given timestamp, followed by their PreviousTagSize.
enum FLVTagWriter {
    static func byteCount(bodySize: Int) -> Int {
        FLVTagSplitter.tagHeaderSize + bodySize + FLVTagSplitter.trailerSize
    }

    static func write(type: UInt8, timestamp: UInt32, body: ByteBuffer, into buffer: inout ByteBuffer) {
        let size = body.readableBytes
        buffer.writeInteger(type)
        buffer.writeInteger(UInt8(truncatingIfNeeded: size >> 16))
        buffer.writeInteger(UInt16(truncatingIfNeeded: size))
        buffer.writeInteger(UInt8(truncatingIfNeeded: timestamp >> 16))
        buffer.writeInteger(UInt16(truncatingIfNeeded: timestamp))
        buffer.writeInteger(UInt8(truncatingIfNeeded: timestamp >> 24))
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(UInt16(0))
        buffer.writeImmutableBuffer(body)
        buffer.writeInteger(UInt32(size + FLVTagSplitter.tagHeaderSize))
    }
}
