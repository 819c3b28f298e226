import Foundation
import LivePlayCore
public import LivePlayDecode
import LivePlayFLV
public import LivePlayTransport

/// Pictures for a seek bar's hover preview (Brightcove's thumbnails over the progress bar, Media3's scrubbing
/// preview): for a time in a local FLV file, or in a session's time-shift window
/// (``LivePlayer/timeShiftThumbnails(deliver:)``), the keyframe at or before it, decoded on a decoder of its own and
/// scaled down to fit a size.
///
/// Reading and decoding block, so they run on a thread of its own (`liveplay-thumbs`), never on a play loop or a
/// window's thread. Only the newest request waits: one not yet begun is replaced (a pointer moving along the bar
/// wants the picture where it is now). The file's keyframes are found on the first request, by reading each tag's
/// header and skipping its body; the pictures of the last 64 keyframes asked for are kept.
///
/// `@unchecked Sendable`: the request, the stop and the thread's end are read and written under `condition`; the
/// file, the index and the decoder are used on the thread alone.
public final class ThumbnailReader: @unchecked Sendable {
    /// Called on the reader's thread with the time asked for and its picture (nil: none there, or no file).
    public typealias Delivery = @Sendable (_ seconds: Double, _ picture: RGBPicture?) -> Void

    private let condition = NSCondition()
    // Guarded by `condition`:
    private var request: (seconds: Double, size: PictureSize)?
    private var stopped = false
    private var exited = false
    // The thread's own:
    private let source: Source
    private let deliver: Delivery
    /// The index of the file read last.
    private var index: (path: String, index: KeyframeIndex?)?
    private var pictures: [String: RGBPicture] = [:]
    private let posters = PosterDecoder(options: DecoderOptions())

    /// An HTTP file's keyframe index and video sequence header, read on the first request (nil inside: none).
    private var httpHead: HTTPFileHead??

    /// What the pictures come from.
    private enum Source {
        case file(String)
        /// The ring now (nil: no time-shift); its segments are FLV files with their sequence headers at the start.
        case timeShift(@Sendable () -> TimeShiftRing?)
        /// A file over HTTP(S), read by byte ranges.
        case http(HTTPRangeReader)
    }

    /// Starts the reader's thread for the file at `path`; `deliver` gets each picture asked for.
    public convenience init(path: String, deliver: @escaping Delivery) {
        self.init(source: .file(path), deliver: deliver)
    }

    /// Starts the reader's thread for an FLV file over HTTP(S) at `url` (with `options`' headers, timeouts and TLS):
    /// byte ranges of the keyframes its metadata's keyframe index (`-flvflags add_keyframe_index`, yamdi, flvtool2)
    /// lists, from a server that answers ranges. The index and the sequence header are read from its first 256 KiB
    /// on the first request; a file without them, or a server without ranges, gives no pictures.
    public convenience init(url: String, options: TransportOptions, deliver: @escaping Delivery) {
        self.init(source: .http(HTTPRangeReader(url: url, options: options)), deliver: deliver)
    }

    /// Starts the reader's thread for the time-shift window of whichever ring `ring` gives at each request.
    convenience init(timeShiftRing ring: @escaping @Sendable () -> TimeShiftRing?, deliver: @escaping Delivery) {
        self.init(source: .timeShift(ring), deliver: deliver)
    }

    private init(source: Source, deliver: @escaping Delivery) {
        self.source = source
        self.deliver = deliver
        let thread = Thread { [self] in
            nameCurrentThread("liveplay-thumbs")
            run()
        }
        thread.start()
    }

    /// Asks for the picture at `seconds` from the media's start, fitted into `size`; replaces a request not yet
    /// begun.
    public func request(at seconds: Double, size: PictureSize) {
        condition.withLock {
            request = (seconds, size)
            condition.signal()
        }
    }

    /// Stops the thread once the request it is on is done, and waits for it.
    public func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
            while !exited { condition.wait() }
        }
    }

    private func run() {
        while true {
            let next: (seconds: Double, size: PictureSize)? = condition.withLock {
                while request == nil, !stopped { condition.wait() }
                defer { request = nil }
                return stopped ? nil : request
            }
            guard let next else { break }
            deliver(next.seconds, picture(at: next.seconds, size: next.size))
        }
        if case .http(let reader) = source { reader.close() }
        condition.withLock {
            exited = true
            condition.broadcast()
        }
    }

    /// The keyframe at or before `seconds` (the first after the start when none is before), decoded and fitted.
    private func picture(at seconds: Double, size: PictureSize) -> RGBPicture? {
        guard let keyframe = keyframe(at: seconds) else { return nil }
        if let kept = pictures[keyframe.key], kept.width <= size.width, kept.height <= size.height,
            kept.width == size.width || kept.height == size.height
        {
            return kept
        }
        guard let tags = keyframe.tags() else { return nil }
        var demuxer = FLVDemuxer()
        var configuration: VideoCodecConfiguration?
        var packet: EncodedPacket?
        for tag in tags {
            demuxer.append(tag: tag)
            while let element = (try? demuxer.nextElement()) ?? nil {
                switch element {
                case .videoConfiguration(let found): configuration = found
                case .packet(let found) where found.kind == .video: packet = found
                default: break
                }
            }
        }
        guard let configuration, let packet, let frame = posters.picture(of: packet, configuration),
            let full = try? frame.rgbPicture()
        else { return nil }
        let fitted = full.fitted(into: size)
        if pictures.count >= 64 { pictures.removeAll() }
        pictures[keyframe.key] = fitted
        return fitted
    }

    /// The keyframe at or before `seconds`: a key for the pictures kept, and how to read its sequence header's tag
    /// and its own.
    private func keyframe(at seconds: Double) -> (key: String, tags: () -> [FLVTag]?)? {
        switch source {
        case .file(let path):
            return index(of: path)?.keyframe(at: seconds).map { fileKeyframe(path, $0.offset) }
        case .timeShift(let ring):
            return ring()?.keyframe(atWindowOffset: .milliseconds(Int64((seconds * 1000).rounded())))
                .map { fileKeyframe($0.path, $0.offset) }
        case .http(let reader):
            if httpHead == nil { httpHead = HTTPFileHead(reader) }
            guard let head = httpHead ?? nil,
                let keyframe = head.keyframes.last(where: { $0.time <= seconds }) ?? head.keyframes.first
            else { return nil }
            return (
                "\(keyframe.position)",
                { HTTPFileHead.tag(at: keyframe.position, reader).map { [head.sequenceHeader, $0] } }
            )
        }
    }

    /// The keyframe whose tag starts `offset` bytes into the file at `path`, with the sequence header before it.
    private func fileKeyframe(_ path: String, _ offset: Int64) -> (key: String, tags: () -> [FLVTag]?) {
        (
            "\(path)@\(offset)",
            {
                guard let index = self.index(of: path), let header = index.sequenceHeader(before: offset) else {
                    return nil
                }
                return index.tags(at: [header, offset])
            }
        )
    }

    /// The keyframe index of the file at `path`, kept until another file is read (a time-shift segment's newest
    /// keyframes may be past it: its sequence headers, at the start, are not).
    private func index(of path: String) -> KeyframeIndex? {
        if index?.path != path { index = (path, KeyframeIndex(path: path)) }
        return index?.index
    }
}

extension RGBPicture {
    /// Scaled down (never up) to fit inside `size`, keeping its shape.
    fileprivate func fitted(into size: PictureSize) -> RGBPicture {
        let scale = min(1, Double(size.width) / Double(max(1, width)), Double(size.height) / Double(max(1, height)))
        guard scale < 1 else { return self }
        return scaled(
            to: PictureSize(
                width: max(1, Int((Double(width) * scale).rounded())),
                height: max(1, Int((Double(height) * scale).rounded()))))
    }
}

/// What an HTTP FLV file's start says for thumbnails: its keyframes (the metadata's keyframe index) and its video
/// sequence header.
private struct HTTPFileHead {
    var keyframes: [KeyframePosition]
    var sequenceHeader: FLVTag

    /// How much of the file's start is read for them.
    static let length: Int64 = 256 << 10

    /// nil when the start does not arrive, or has no keyframe index or no video sequence header.
    init?(_ reader: HTTPRangeReader) {
        guard let bytes = reader.read(0..<Self.length) else { return nil }
        var framer = FLVTagFramer()
        framer.append(bytes)
        var demuxer = FLVDemuxer()
        var keyframes: [KeyframePosition] = []
        var sequenceHeader: FLVTag?
        while sequenceHeader == nil || keyframes.isEmpty, let tag = (try? framer.nextTag()) ?? nil {
            if tag.type == FLVTagType.video.rawValue, tag.isSequenceHeader, sequenceHeader == nil {
                sequenceHeader = tag
            }
            demuxer.append(tag: tag)
            while let element = (try? demuxer.nextElement()) ?? nil {
                if case .metadata(let metadata) = element, keyframes.isEmpty { keyframes = metadata.keyframeIndex }
            }
        }
        guard let sequenceHeader, !keyframes.isEmpty else { return nil }
        self.keyframes = keyframes
        self.sequenceHeader = sequenceHeader
    }

    /// The whole tag at `position`: its header, then (by its size, within the framer's bound) the rest.
    static func tag(at position: Int64, _ reader: HTTPRangeReader) -> FLVTag? {
        guard let head = reader.read(position..<position + 11),
            let (type, size, timestamp) = FLVTagFramer.header(
                head, at: 0, maximumTagSize: KeyframeIndex.maximumTagSize),
            let body = reader.read(position + 11..<position + 11 + Int64(size))
        else { return nil }
        return FLVTag(type: type, timestamp: timestamp, body: body)
    }
}
