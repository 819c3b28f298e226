public import LivePlayCore

/// An incremental FLV demuxer: bytes in, in any chunking; ``FLVElement``s out, in stream order.
///
/// Feeding a stream one byte at a time gives exactly the output of feeding it whole. Short input means
/// "need more data": ``nextElement()`` returns `nil` and keeps what it has. Each tag is checked against
/// the PreviousTagSize that follows it; after garbage the demuxer resynchronises on the next position
/// where a tag header and its trailing size agree, and says so with a warning. Memory is bounded by
/// ``Configuration/maximumTagSize``: a tag claiming more is treated as garbage.
///
/// ```swift
/// var demuxer = FLVDemuxer()
/// demuxer.append(chunk)
/// while let element = try demuxer.nextElement() { … }
/// demuxer.finish()  // end of input: flush, and report a truncated tail
/// ```
public struct FLVDemuxer: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Largest tag body accepted (the format allows 16 MiB − 1). Also bounds buffered bytes.
        public var maximumTagSize: Int
        /// AMF0 nesting cap for script tags.
        public var maximumAMFDepth: Int
        /// The video / audio track of a multitrack stream to play; nil plays the lowest id.
        public var videoTrack: UInt8?
        public var audioTrack: UInt8?
        /// Hands out the packets of every track, each with its ``EncodedPacket/track`` (a listing such as
        /// `inspect --packets`), not only the playing ones'; configurations stay the playing tracks'.
        public var allTracks: Bool

        public init(
            maximumTagSize: Int = 8 << 20, maximumAMFDepth: Int = AMF0Decoder.defaultMaximumDepth,
            videoTrack: UInt8? = nil, audioTrack: UInt8? = nil, allTracks: Bool = false
        ) {
            self.maximumTagSize = maximumTagSize
            self.maximumAMFDepth = maximumAMFDepth
            self.videoTrack = videoTrack
            self.audioTrack = audioTrack
            self.allTracks = allTracks
        }
    }

    private enum State: Sendable {
        case fileHeader
        /// Before the first tag: PreviousTagSize0 (and any header padding) still to skip.
        case skipping(Int)
        case tags
        /// Looking for the next consistent tag, from `buffer[readIndex]` on.
        case resynchronizing(skippedSoFar: Int64)
        case done
    }

    private static let fileHeaderSize = 9
    private static let tagHeaderSize = FLVTagHeader.size
    private static let trailerSize = 4

    public let configuration: Configuration
    private var state = State.fileHeader
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Stream offset of `buffer[0]`.
    private var bufferBase: Int64 = 0
    private var inputEnded = false
    private var parser: FLVTagParser
    private var pending: [FLVElement] = []
    private var pendingIndex = 0
    /// Where the next framed tag would start in an FLV byte stream (after the 13-byte header), for warnings.
    private var framedOffset: Int64 = 13

    /// - Parameter payloads: where packets' payloads come from (arrays the decoder gave back); nil, new arrays.
    public init(configuration: Configuration = Configuration(), payloads: PayloadPool? = nil) {
        self.configuration = configuration
        self.parser = FLVTagParser(
            maximumAMFDepth: configuration.maximumAMFDepth, videoTrack: configuration.videoTrack,
            audioTrack: configuration.audioTrack, allTracks: configuration.allTracks)
        parser.payloads = payloads
    }

    /// Switches a multitrack stream's `kind` to `track` (nil: back to the default): video at that track's next
    /// keyframe, audio at its next packet. A ``FLVElement/tracks(_:)`` element says when it happened.
    public mutating func select(_ kind: MediaKind, track: UInt8?) {
        parser.select(kind, track: track)
    }

    /// Bytes received so far that have not been turned into elements yet.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        precondition(!inputEnded, "append after finish")
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds one tag that arrived already framed (RTMP): parsed by the same tag parser as bytes; its elements
    /// come out of ``nextElement()``. A demuxer is fed either bytes or tags, not both.
    public mutating func append(tag: FLVTag) {
        guard let type = FLVTagType(rawValue: tag.type) else { return }
        parser.parse(type: type, wireTimestamp: tag.timestamp, body: tag.body[...], offset: framedOffset, into: &pending)
        framedOffset += Int64(tag.framedSize)
    }

    /// Marks the end of input: a tag cut short is then reported as ``FLVError/Code/truncated``.
    public mutating func finish() {
        inputEnded = true
    }

    /// The next element, or `nil` when more bytes are needed (or, after ``finish()``, when all is out).
    ///
    /// Throws only when the stream is not FLV at all.
    public mutating func nextElement() throws(FLVError) -> FLVElement? {
        while true {
            if pendingIndex < pending.count {
                defer { pendingIndex += 1 }
                return pending[pendingIndex]
            }
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            guard try step() else { return nil }
        }
    }

    /// Drops consumed bytes once they dominate the buffer, so appends stay amortised O(n).
    private mutating func compact() {
        guard readIndex > 0, readIndex >= 64 << 10 || readIndex * 2 >= buffer.count else { return }
        buffer.removeSubrange(0..<readIndex)
        bufferBase += Int64(readIndex)
        readIndex = 0
    }

    private var available: Int { buffer.count - readIndex }
    private var streamOffset: Int64 { bufferBase + Int64(readIndex) }

    private func uint32(at index: Int) -> UInt32 {
        UInt32(buffer[index]) << 24 | UInt32(buffer[index + 1]) << 16 | UInt32(buffer[index + 2]) << 8
            | UInt32(buffer[index + 3])
    }

    /// Makes progress by one unit; `false` when nothing more can be done with the bytes at hand.
    private mutating func step() throws(FLVError) -> Bool {
        switch state {
        case .fileHeader:
            return try readFileHeader()
        case .skipping(let count):
            let skipped = min(count, available)
            readIndex += skipped
            if skipped == count {
                state = .tags
                return true
            }
            state = .skipping(count - skipped)
            return endIfTruncated(missing: count - skipped, what: "file header padding")
        case .tags:
            return readTag()
        case .resynchronizing(let skipped):
            return resynchronize(skippedSoFar: skipped)
        case .done:
            return false
        }
    }

    private mutating func readFileHeader() throws(FLVError) -> Bool {
        guard available >= Self.fileHeaderSize else {
            if inputEnded {
                state = .done
                if available == 0 { throw FLVError(.invalidHeader, "empty input, no FLV header", offset: 0) }
                throw FLVError(.invalidHeader, "input ended inside the FLV header", offset: 0)
            }
            return false
        }
        let start = readIndex
        guard buffer[start] == 0x46, buffer[start + 1] == 0x4C, buffer[start + 2] == 0x56 else {
            state = .done
            throw FLVError(.invalidHeader, "missing FLV signature", offset: 0)
        }
        let flags = buffer[start + 4]
        let dataOffset = uint32(at: start + 5)
        guard dataOffset >= Self.fileHeaderSize, dataOffset <= UInt32(Self.fileHeaderSize + configuration.maximumTagSize)
        else {
            state = .done
            throw FLVError(.invalidHeader, "implausible header DataOffset \(dataOffset)", offset: 5)
        }
        readIndex += Self.fileHeaderSize
        let header = FLVFileHeader(
            version: buffer[start + 3], hasAudio: flags & 0x04 != 0, hasVideo: flags & 0x01 != 0,
            dataOffset: dataOffset)
        pending.append(.header(header))
        state = .skipping(Int(dataOffset) - Self.fileHeaderSize + Self.trailerSize)
        return true
    }

    /// Whether a tag header plausibly starts at `index` (which must have 11 bytes after it).
    private func isPlausibleTagHeader(at index: Int, strict: Bool) -> Bool {
        FLVTagHeader(buffer, at: index)?.isPlausible(maximumTagSize: configuration.maximumTagSize, strict: strict)
            ?? false
    }

    private mutating func readTag() -> Bool {
        guard available >= Self.tagHeaderSize else {
            if available == 0, inputEnded {
                state = .done
                return false
            }
            return endIfTruncated(missing: Self.tagHeaderSize - available, what: "tag header")
        }
        let start = readIndex
        guard let header = FLVTagHeader(buffer, at: start) else { return false }
        let (typeByte, dataSize) = (header.typeByte, header.dataSize)
        guard let type = header.type else {
            let reason =
                typeByte & 0x20 != 0
                ? "encrypted tag (filter bit set) is not supported"
                : "unknown tag type \(typeByte & 0x1F)"
            beginResynchronizing(FLVError(.malformedTag, reason, offset: streamOffset))
            return true
        }
        guard dataSize <= configuration.maximumTagSize else {
            beginResynchronizing(
                FLVError(
                    .tagTooLarge, "tag claims \(dataSize) bytes, limit \(configuration.maximumTagSize)",
                    offset: streamOffset))
            return true
        }
        let tagEnd = start + Self.tagHeaderSize + dataSize
        guard buffer.count >= tagEnd + Self.trailerSize else {
            if inputEnded {
                if buffer.count >= tagEnd {
                    // The body is whole; only the final PreviousTagSize is missing.
                    emitTag(type: type, start: start, header: header)
                    readIndex = buffer.count
                    pending.append(.warning(FLVError(.truncated, "input ended before the last PreviousTagSize")))
                    state = .done
                    return true
                }
                return endIfTruncated(missing: tagEnd + Self.trailerSize - buffer.count, what: "tag body")
            }
            return false
        }
        let trailer = uint32(at: tagEnd)
        if trailer != UInt32(dataSize + Self.tagHeaderSize) {
            // Either the trailer lies about a good tag, or DataSize lies and we are reading garbage.
            // A plausible tag header right after the trailer tells them apart.
            let next = tagEnd + Self.trailerSize
            if buffer.count < next + Self.tagHeaderSize, !inputEnded { return false }
            let nextIsTag = buffer.count < next + Self.tagHeaderSize || isPlausibleTagHeader(at: next, strict: true)
            let mismatch = FLVError(
                .previousTagSizeMismatch,
                "PreviousTagSize \(trailer) after a tag of \(dataSize + Self.tagHeaderSize) bytes",
                offset: bufferBase + Int64(tagEnd))
            guard nextIsTag else {
                beginResynchronizing(mismatch)
                return true
            }
            pending.append(.warning(mismatch))
        }
        emitTag(type: type, start: start, header: header)
        readIndex = tagEnd + Self.trailerSize
        return true
    }

    private mutating func emitTag(type: FLVTagType, start: Int, header: FLVTagHeader) {
        let bodyStart = start + FLVTagHeader.size
        parser.parse(
            type: type, wireTimestamp: header.timestamp, body: buffer[bodyStart..<bodyStart + header.dataSize],
            offset: bufferBase + Int64(start), into: &pending)
    }

    /// Reports `reason` and skips from the byte after the current tag start.
    private mutating func beginResynchronizing(_ reason: FLVError) {
        pending.append(.warning(reason))
        readIndex += 1
        state = .resynchronizing(skippedSoFar: 1)
    }

    private mutating func resynchronize(skippedSoFar: Int64) -> Bool {
        var skipped = skippedSoFar
        while available >= Self.tagHeaderSize {
            let candidate = readIndex
            if isPlausibleTagHeader(at: candidate, strict: true) {
                let end = candidate + Self.tagHeaderSize + (FLVTagHeader(buffer, at: candidate)?.dataSize ?? 0)
                if buffer.count < end + Self.trailerSize {
                    if !inputEnded {
                        state = .resynchronizing(skippedSoFar: skipped)
                        return false
                    }
                } else if uint32(at: end) == UInt32(end - candidate) {
                    pending.append(
                        .warning(
                            FLVError(
                                .resynchronized, "skipped \(skipped) bytes to the next consistent tag",
                                offset: streamOffset)))
                    state = .tags
                    return true
                }
            }
            readIndex += 1
            skipped += 1
        }
        if inputEnded {
            skipped += Int64(available)
            readIndex = buffer.count
            pending.append(
                .warning(FLVError(.truncated, "input ended while resynchronising; \(skipped) bytes skipped")))
            state = .done
            return true
        }
        state = .resynchronizing(skippedSoFar: skipped)
        return false
    }

    /// At end of input, reports a cut-short unit and stops; otherwise asks for more bytes.
    private mutating func endIfTruncated(missing: Int, what: String) -> Bool {
        guard inputEnded else { return false }
        pending.append(
            .warning(FLVError(.truncated, "input ended \(missing) bytes short of a complete \(what)", offset: streamOffset)))
        readIndex = buffer.count
        state = .done
        return true
    }
}
