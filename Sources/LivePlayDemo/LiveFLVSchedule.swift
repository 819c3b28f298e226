import LivePlayCore
public import LivePlayFLV
public import NIOCore

/// Decides which tags of a looping ``LiveFLVProgram`` are due at a given moment of the stream, and the
/// timestamps they go out with.
///
/// A tag is due `timestamp − firstTimestamp + loop × loopPeriod` milliseconds after the stream started;
/// it goes out with `timestamp + loop × loopPeriod`, so timestamps keep rising across loops. Time is
/// passed in (the server reads its clock once per tick), so tests drive it with plain durations.
public struct LiveFLVSchedule: Sendable {
    /// A tag to send now: its index in ``LiveFLVProgram/tags`` and its rewritten timestamp.
    public struct Emission: Sendable, Equatable {
        public var index: Int
        public var timestamp: UInt32
    }

    private let timestamps: [UInt32]
    private let firstTimestamp: UInt32
    private let loopPeriod: Int64
    public let loops: Bool
    /// Index of the next tag to send.
    public private(set) var nextIndex = 0
    /// How many times the file has been played through.
    public private(set) var completedLoops: Int64 = 0
    /// The timestamp of the last tag sent, or the first timestamp before anything went out.
    public private(set) var lastTimestamp: UInt32

    public init(program: LiveFLVProgram, loops: Bool = true) {
        self.timestamps = program.tags.map(\.timestamp)
        self.firstTimestamp = program.firstTimestamp
        self.loopPeriod = Int64(program.loopPeriod)
        self.loops = loops
        self.lastTimestamp = program.firstTimestamp
    }

    /// True once a non-looping schedule has sent its last tag.
    public var isFinished: Bool { nextIndex >= timestamps.count }

    /// When the next tag is due, measured from the start of the stream; `nil` when finished.
    public var nextDue: Duration? {
        guard !isFinished else { return nil }
        return .milliseconds(dueMilliseconds(nextIndex))
    }

    /// The stream timestamp due at `elapsed`: every tag sent by then has one at most this, every later
    /// tag one above it (for files in timestamp order).
    public func timestamp(at elapsed: Duration) -> UInt32 {
        UInt32(truncatingIfNeeded: Int64(firstTimestamp) + elapsed.milliseconds)
    }

    /// Every tag due at `elapsed` (time since the stream started), in file order.
    public mutating func due(at elapsed: Duration) -> [Emission] {
        let now = elapsed.milliseconds
        var emissions: [Emission] = []
        while !isFinished, dueMilliseconds(nextIndex) <= now {
            let timestamp = UInt32(truncatingIfNeeded: Int64(timestamps[nextIndex]) + completedLoops * loopPeriod)
            emissions.append(Emission(index: nextIndex, timestamp: timestamp))
            lastTimestamp = timestamp
            nextIndex += 1
            if nextIndex == timestamps.count, loops {
                nextIndex = 0
                completedLoops += 1
            }
        }
        return emissions
    }

    private func dueMilliseconds(_ index: Int) -> Int64 {
        Int64(timestamps[index]) - Int64(firstTimestamp) + completedLoops * loopPeriod
    }
}

/// One tick's worth of tags, serialised once and shared by every client.
///
/// A wall-clock stamp, when the tick has one, is the last tag: it is for live clients only, so the GOP
/// cache takes just the media part (``media``, ``mediaFromKeyframe``) and never replays a stale stamp.
public struct LiveChunk: Sendable {
    /// The tags as FLV bytes: the media tags, then the stamp if there is one.
    public var payload: ByteBuffer
    /// The same bytes framed as one HTTP/1.1 chunk (RFC 9112 §7.1), for chunked clients.
    public var chunkedPayload: ByteBuffer
    /// Offset in `payload` of the last video keyframe in this chunk, if there is one.
    public var keyframeOffset: Int?
    public var keyframeTimestamp: UInt32?
    /// Media tags in `payload` (the stamp not counted).
    public var tagCount: Int
    /// Bytes of `payload` taken by media tags; the stamp follows them.
    public var mediaByteCount: Int
    public var clockStamp: WallClockStamp?

    /// Serialises `emissions` of `program` with their rewritten timestamps, then `clockStamp`.
    public init(
        program: LiveFLVProgram, emissions: [LiveFLVSchedule.Emission], clockStamp: WallClockStamp? = nil,
        allocator: ByteBufferAllocator
    ) {
        let stampTag = clockStamp?.tag(allocator: allocator)
        let size = emissions.reduce(stampTag?.readableBytes ?? 0) {
            $0 + FLVTagWriter.byteCount(bodySize: program.tags[$1.index].body.readableBytes)
        }
        var payload = allocator.buffer(capacity: size)
        var keyframeOffset: Int?
        var keyframeTimestamp: UInt32?
        for emission in emissions {
            let tag = program.tags[emission.index]
            if tag.isVideoKeyframe {
                keyframeOffset = payload.writerIndex
                keyframeTimestamp = emission.timestamp
            }
            FLVTagWriter.write(type: tag.type, timestamp: emission.timestamp, body: tag.body, into: &payload)
        }
        self.mediaByteCount = payload.writerIndex
        if let stampTag {
            payload.writeImmutableBuffer(stampTag)
        }
        self.payload = payload
        self.chunkedPayload = HTTPChunk.frame(payload, allocator: allocator)
        self.keyframeOffset = keyframeOffset
        self.keyframeTimestamp = keyframeTimestamp
        self.tagCount = emissions.count
        self.clockStamp = clockStamp
    }

    /// The bytes from the keyframe on (stamp included), for a live client that resumes at a keyframe.
    public var fromKeyframe: ByteBuffer? {
        keyframeOffset.map { payload.getSlice(at: $0, length: payload.writerIndex - $0)! }
    }

    /// The media tags without the stamp.
    public var media: ByteBuffer {
        payload.getSlice(at: payload.readerIndex, length: mediaByteCount - payload.readerIndex)!
    }

    /// The media tags from the keyframe on, without the stamp: what the GOP cache keeps.
    public var mediaFromKeyframe: ByteBuffer? {
        keyframeOffset.map { payload.getSlice(at: $0, length: mediaByteCount - $0)! }
    }
}

/// The media tags from the last video keyframe on, as slices of the chunks that carried them (SRS's `gop_cache`),
/// and the GOPs before it within ``history`` of stream time, for a client that asks to start at one of them (LAS's
/// `startPts`).
///
/// A new client gets the newest GOP right after the sequence headers, so its decoder starts on a keyframe at
/// once instead of waiting up to a GOP. Nothing is cached before the first keyframe (nor for audio-only
/// streams), and the cache is dropped if its newest GOP outgrows `byteLimit` (a file without regular keyframes);
/// older GOPs go first when all of them do. Wall-clock stamps are left out: replayed in a burst they would be
/// stale; a joining client gets a fresh one after the cache instead (``WallClockSchedule/latest``).
public struct GOPCache: Sendable {
    /// One GOP: its keyframe's timestamp and its media.
    public struct Group: Sendable {
        public var timestamp: UInt32
        public var buffers: [ByteBuffer]
        public var byteCount: Int
    }

    public let byteLimit: Int
    /// How much older stream time is kept, in whole GOPs before the newest.
    public let history: Duration
    /// Oldest first; the last is the newest GOP, still growing.
    public private(set) var groups: [Group] = []

    public init(byteLimit: Int = 64 << 20, history: Duration = .zero) {
        self.byteLimit = byteLimit
        self.history = history
    }

    /// The newest GOP's media.
    public var buffers: [ByteBuffer] { groups.last?.buffers ?? [] }
    public var byteCount: Int { groups.reduce(0) { $0 + $1.byteCount } }
    /// Timestamp of the newest cached keyframe.
    public var startTimestamp: UInt32? { groups.last?.timestamp }

    public mutating func append(_ chunk: LiveChunk) {
        if let start = chunk.mediaFromKeyframe, let timestamp = chunk.keyframeTimestamp {
            let before = (chunk.keyframeOffset ?? 0) - chunk.payload.readerIndex
            if before > 0 { add(chunk.payload.getSlice(at: chunk.payload.readerIndex, length: before)!) }
            groups.append(Group(timestamp: timestamp, buffers: [start], byteCount: start.readableBytes))
            let oldest = Int64(timestamp) - Int64(history.milliseconds)
            groups.removeAll { $0.timestamp != timestamp && Int64($0.timestamp) < oldest }
        } else if chunk.mediaByteCount > 0 {
            add(chunk.media)
        }
        while groups.count > 1, byteCount > byteLimit { groups.removeFirst() }
        if byteCount > byteLimit { groups = [] }
    }

    /// The GOPs from the one a client asked to start at (`startPts`, LAS): the newest whose keyframe is stamped at or
    /// before `startPts` (a keyframe's decode time is at or before its presentation time, and a GOP is longer than
    /// their difference), or, for a negative `startPts`, at or before that many milliseconds behind `liveEdge`. The
    /// oldest kept when the start is older than them all; empty when nothing is cached.
    public func buffers(startingAt startPts: Int64, liveEdge: UInt32) -> (timestamp: UInt32, buffers: [ByteBuffer])? {
        guard !groups.isEmpty else { return nil }
        let limit = startPts >= 0 ? startPts : Int64(liveEdge) + startPts
        let index = groups.lastIndex { Int64($0.timestamp) <= limit } ?? 0
        return (groups[index].timestamp, groups[index...].flatMap(\.buffers))
    }

    private mutating func add(_ media: ByteBuffer) {
        guard !groups.isEmpty else { return }
        groups[groups.count - 1].buffers.append(media)
        groups[groups.count - 1].byteCount += media.readableBytes
    }
}

/// HTTP/1.1 chunked framing (RFC 9112 §7.1).
enum HTTPChunk {
    /// `size-in-hex CRLF data CRLF` in one new buffer.
    static func frame(_ data: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer {
        let sizeLine = String(data.readableBytes, radix: 16) + "\r\n"
        var framed = allocator.buffer(capacity: data.readableBytes + sizeLine.utf8.count + 2)
        framed.writeString(sizeLine)
        framed.writeImmutableBuffer(data)
        framed.writeStaticString("\r\n")
        return framed
    }

    static let last: ByteBuffer = ByteBuffer(string: "0\r\n\r\n")
}


extension TimeAmount {
    init(_ duration: Duration) {
        self = .nanoseconds(duration.nanoseconds)
    }
}
