public import LivePlayFLV

/// RTMP message type ids (Adobe RTMP specification 1.0, §5.4 protocol control, §6.2 user control, §7.1
/// message types).
public enum RTMPMessageType: UInt8, Sendable {
    case setChunkSize = 1
    case abort = 2
    case acknowledgement = 3
    case userControl = 4
    case windowAcknowledgementSize = 5
    case setPeerBandwidth = 6
    case audio = 8
    case video = 9
    case amf3Data = 15
    case amf3SharedObject = 16
    case amf3Command = 17
    case amf0Data = 18
    case amf0SharedObject = 19
    case amf0Command = 20
    case aggregate = 22
}

/// The part of an RTMP chunk header (§5.3.1) that decides what librtmp is about to allocate.
///
/// librtmp's `RTMP_ReadPacket` allocates a message body from the 24-bit message length as soon as it
/// reads a type 0 or type 1 header, and in the Debian version (2.4+20151223) a type 1 header on a chunk
/// stream whose previous message is unfinished reuses the old, smaller buffer for the new length (a
/// heap overflow). So the header is parsed here, from librtmp's receive buffer, before librtmp sees it.
public struct RTMPChunkHeader: Sendable, Hashable {
    /// `fmt`, 0...3 (§5.3.1.2).
    public var format: UInt8
    public var chunkStreamID: Int
    /// The message length, for format 0 and 1 headers.
    public var messageLength: Int?
    /// The message type id, for format 0 and 1 headers.
    public var messageTypeID: UInt8?
    /// Bytes of the basic and message header, without an extended timestamp.
    public var size: Int

    public init(format: UInt8, chunkStreamID: Int, messageLength: Int? = nil, messageTypeID: UInt8? = nil, size: Int) {
        self.format = format
        self.chunkStreamID = chunkStreamID
        self.messageLength = messageLength
        self.messageTypeID = messageTypeID
        self.size = size
    }

    /// Parses a chunk header at the start of `bytes`, or returns how many bytes are needed first.
    ///
    /// Incremental like every parser here: too few bytes is not an error.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> ParseResult {
        guard let first = bytes.first else { return .needMore(1) }
        let format = first >> 6
        let basicSize: Int
        switch first & 0x3F {
        case 0: basicSize = 2
        case 1: basicSize = 3
        default: basicSize = 1
        }
        let messageHeaderSize = [11, 7, 3, 0][Int(format)]
        let size = basicSize + messageHeaderSize
        guard bytes.count >= size else { return .needMore(size) }
        let chunkStreamID: Int
        switch first & 0x3F {
        case 0: chunkStreamID = Int(bytes[1]) + 64
        case 1: chunkStreamID = Int(bytes[1]) + Int(bytes[2]) << 8 + 64
        default: chunkStreamID = Int(first & 0x3F)
        }
        var header = RTMPChunkHeader(
            format: format, chunkStreamID: chunkStreamID, messageLength: nil, messageTypeID: nil, size: size)
        if format <= 1 {
            let base = basicSize + 3
            header.messageLength = Int(bytes[base]) << 16 | Int(bytes[base + 1]) << 8 | Int(bytes[base + 2])
            header.messageTypeID = bytes[base + 3]
        }
        return .header(header)
    }

    public enum ParseResult: Sendable, Hashable {
        case header(RTMPChunkHeader)
        /// At least this many bytes must be buffered before the header can be parsed.
        case needMore(Int)
    }
}

/// Bounds on what an RTMP server can make the player hold; a message breaking one is a
/// ``WireError/Code/protocolViolation``.
public struct RTMPLimits: Sendable, Hashable {
    /// Body bytes of unfinished messages across all chunk streams. librtmp allocates a message's whole
    /// body when its first chunk header arrives.
    public var maximumBytesInProgress: Int
    /// Largest audio, video or aggregate message.
    public var maximumMediaSize: Int
    /// Largest command or shared-object message (real ones are well under 4 KiB).
    public var maximumCommandSize: Int
    /// Largest data message (metadata).
    public var maximumDataSize: Int
    /// AMF nesting allowed in commands and data (FFmpeg caps it at 16).
    public var maximumAMFDepth: Int
    /// Largest chunk size a server may set (RTMP specification 1.0, §5.4.1).
    public var maximumChunkSize: Int

    public init(
        maximumBytesInProgress: Int = 8 << 20, maximumMediaSize: Int = 8 << 20,
        maximumCommandSize: Int = 64 << 10, maximumDataSize: Int = 1 << 20,
        maximumAMFDepth: Int = 16, maximumChunkSize: Int = 1 << 20
    ) {
        self.maximumBytesInProgress = maximumBytesInProgress
        self.maximumMediaSize = maximumMediaSize
        self.maximumCommandSize = maximumCommandSize
        self.maximumDataSize = maximumDataSize
        self.maximumAMFDepth = maximumAMFDepth
        self.maximumChunkSize = maximumChunkSize
    }
}

/// What to do with a complete message that passed the checks.
public enum RTMPMessageVerdict: Sendable, Hashable {
    /// A protocol control or user control message: librtmp's `RTMP_ClientPacket` may handle it.
    case control
    /// A command (§7.1.1); librtmp may handle it after the player looked at it.
    case command(name: String, values: [AMF0Value])
    /// Audio, video, data or aggregate: becomes FLV; librtmp never sees it.
    case media
    /// Nothing anyone needs (shared objects, AMF3 data, unknown types, empty messages).
    case ignore
}

/// The Swift checks every server message passes before librtmp's handlers may see it.
///
/// librtmp's AMF0 decoder recurses without a limit (`AMF_Decode` ↔ `AMFProp_Decode`; measured: a
/// command with ~44,000 nested objects crashes the client), its protocol control handlers read four body
/// bytes without checking the length, and it allocates whatever the message length says. So commands
/// and data are decoded here first with ``AMF0Decoder``'s depth cap, control messages are length-checked,
/// and sizes are bounded.
public struct RTMPMessageGuard: Sendable {
    public var limits: RTMPLimits

    public init(limits: RTMPLimits) {
        self.limits = limits
    }

    /// Checks a chunk header before librtmp reads it.
    ///
    /// - Parameters:
    ///   - unfinished: the body size and bytes read of the message in progress on the header's chunk
    ///     stream, if one is.
    ///   - bytesInProgress: body bytes allocated for unfinished messages on all chunk streams.
    public func check(
        _ header: RTMPChunkHeader, unfinished: (bodySize: Int, bytesRead: Int)?, bytesInProgress: Int
    ) throws(WireError) {
        guard let length = header.messageLength else { return }
        if let unfinished {
            // §5.3.1.2: chunks of one message follow each other on their chunk stream; a new header there
            // before the message is complete leaves librtmp with a buffer of the wrong size.
            throw WireError(
                .protocolViolation,
                "a new message started on chunk stream \(header.chunkStreamID) after \(unfinished.bytesRead) of "
                    + "\(unfinished.bodySize) bytes of the previous one")
        }
        let cap = maximumSize(ofType: header.messageTypeID ?? 0)
        guard length <= cap else {
            throw WireError(
                .protocolViolation,
                "message of type \(header.messageTypeID ?? 0) announces \(length) bytes (limit \(cap))")
        }
        guard bytesInProgress + length <= limits.maximumBytesInProgress else {
            throw WireError(
                .protocolViolation,
                "unfinished messages would hold \(bytesInProgress + length) bytes "
                    + "(limit \(limits.maximumBytesInProgress))")
        }
    }

    /// The largest body accepted for a message type.
    public func maximumSize(ofType type: UInt8) -> Int {
        switch RTMPMessageType(rawValue: type) {
        case .amf0Command, .amf3Command, .amf0SharedObject, .amf3SharedObject: limits.maximumCommandSize
        case .amf0Data, .amf3Data: limits.maximumDataSize
        case .audio, .video, .aggregate, nil: limits.maximumMediaSize
        case .setChunkSize, .abort, .acknowledgement, .userControl, .windowAcknowledgementSize,
            .setPeerBandwidth:
            64
        }
    }

    /// Checks a complete message and says who handles it.
    public func inspect(type: UInt8, body: UnsafeRawBufferPointer) throws(WireError) -> RTMPMessageVerdict {
        guard !body.isEmpty else { return .ignore }
        guard body.count <= maximumSize(ofType: type) else {
            throw WireError(.protocolViolation, "message of type \(type) has \(body.count) bytes")
        }
        guard let known = RTMPMessageType(rawValue: type) else { return .ignore }
        switch known {
        case .setChunkSize:
            // §5.4.1: 31 bits, at least 1; librtmp would loop forever on 0 and misbehave when negative.
            guard body.count >= 4 else { throw violation("Set Chunk Size with \(body.count) bytes") }
            let size = Int(body[0]) << 24 | Int(body[1]) << 16 | Int(body[2]) << 8 | Int(body[3])
            guard (1...limits.maximumChunkSize).contains(size) else {
                throw violation("chunk size \(size) outside 1...\(limits.maximumChunkSize)")
            }
            return .control
        case .windowAcknowledgementSize, .setPeerBandwidth:
            // librtmp's HandleServerBW / HandleClientBW read four bytes unchecked.
            guard body.count >= 4 else { throw violation("bandwidth message with \(body.count) bytes") }
            return .control
        case .userControl:
            // §6.2: a 2-byte event type, then event data; librtmp checks the length itself.
            guard body.count >= 2 else { throw violation("user control message with \(body.count) bytes") }
            return .control
        case .acknowledgement:
            return .control
        case .abort, .amf3Data, .amf3SharedObject, .amf0SharedObject:
            return .ignore
        case .amf0Command:
            return try command(body[...])
        case .amf3Command:
            // §7.1.1: an AMF3 command is a format byte (0) and then AMF0 values, which librtmp decodes
            // from the second byte.
            return try command(body[1...])
        case .audio, .video:
            return .media
        case .amf0Data:
            try checkData(body[...])
            return .media
        case .aggregate:
            try checkAggregate(body)
            return .media
        }
    }

    private func command(_ body: Slice<UnsafeRawBufferPointer>) throws(WireError) -> RTMPMessageVerdict {
        // librtmp's HandleInvoke insists on a string method name first.
        guard body.first == AMF0Marker.string.rawValue else {
            throw violation("command does not start with a method name")
        }
        var decoder = AMF0Decoder(Array(body), maximumDepth: limits.maximumAMFDepth)
        let values: [AMF0Value]
        do {
            values = try decoder.decodeAll()
        } catch {
            // Stricter than librtmp on purpose: what this decoder rejects is not handed to a decoder
            // without limits.
            throw violation("command: \(error.message)")
        }
        return .command(name: values.first?.stringValue ?? "", values: values)
    }

    /// Data messages go to the FLV demuxer, which tolerates malformed metadata, but not to hostile nesting.
    private func checkData(_ body: Slice<UnsafeRawBufferPointer>) throws(WireError) {
        var decoder = AMF0Decoder(Array(body), maximumDepth: limits.maximumAMFDepth)
        do {
            _ = try decoder.decodeAll()
        } catch where error.code == .amfNestingTooDeep {
            throw violation("data message: \(error.message)")
        } catch {
            return
        }
    }

    /// §7.1.6 (aggregate message): FLV tags back to back, each with a back pointer.
    private func checkAggregate(_ body: UnsafeRawBufferPointer) throws(WireError) {
        var offset = 0
        while offset < body.count {
            guard offset + 11 <= body.count else { throw violation("aggregate sub-message header truncated") }
            let size = Int(body[offset + 1]) << 16 | Int(body[offset + 2]) << 8 | Int(body[offset + 3])
            let end = offset + 11 + size + 4
            guard end <= body.count else { throw violation("aggregate sub-message overruns its message") }
            if body[offset] == RTMPMessageType.amf0Data.rawValue {
                try checkData(body[(offset + 11)..<(offset + 11 + size)])
            }
            offset = end
        }
    }

    private func violation(_ message: String) -> WireError {
        WireError(.protocolViolation, message)
    }
}
