import Foundation
import LivePlayFLV

/// Where a local FLV file's video keyframes and sequence headers are, found by reading each tag's header and the
/// first two bytes of each video tag's body; the scan ends at the end of the file or at bytes that are not a tag
/// header (``FLVTagFramer/header(_:at:maximumTagSize:)``, with the framer's bound on a tag's size).
struct KeyframeIndex {
    struct Keyframe {
        /// Milliseconds from the file's first tag.
        var time: Int64
        var offset: Int64
    }

    private let file: FileHandle
    private(set) var keyframes: [Keyframe] = []
    private var sequenceHeaders: [Int64] = []

    /// nil when the file does not open or is not FLV.
    init?(path: String) {
        guard let file = FileHandle(forReadingAtPath: path), let length = try? file.seekToEnd(),
            (try? file.seek(toOffset: 0)) != nil, let header = try? file.read(upToCount: 9), header.count == 9,
            header.starts(with: [0x46, 0x4C, 0x56])
        else { return nil }
        self.file = file
        var offset = Int64(header[5...8].reduce(0) { $0 << 8 | UInt32($1) }) + 4
        var first: Int64?
        while (try? file.seek(toOffset: UInt64(offset))) != nil, let read = try? file.read(upToCount: 13),
            case let head = [UInt8](read), head.count == 13,
            let (type, size, timestamp) = FLVTagFramer.header(head, at: 0, maximumTagSize: Self.maximumTagSize),
            // A tag cut off by the end of the file is not one.
            offset + 11 + Int64(size) <= Int64(length)
        {
            let time = Int64(timestamp)
            if first == nil { first = time }
            if type == FLVTagType.video.rawValue, size >= 2 {
                let tag = FLVTag(type: FLVTagType.video.rawValue, timestamp: 0, body: [head[11], head[12]])
                if tag.isSequenceHeader {
                    sequenceHeaders.append(offset)
                } else if tag.isVideoKeyframe {
                    keyframes.append(Keyframe(time: time - (first ?? time), offset: offset))
                }
            }
            offset += 11 + Int64(size) + 4
        }
    }

    /// The framer's bound on a tag's body.
    static let maximumTagSize = FLVTagFramer().maximumTagSize

    /// The keyframe at or before `seconds`, else the first.
    func keyframe(at seconds: Double) -> Keyframe? {
        let target = Int64((seconds * 1000).rounded())
        return keyframes.last { $0.time <= target } ?? keyframes.first
    }

    /// The newest sequence header before `offset`.
    func sequenceHeader(before offset: Int64) -> Int64? { sequenceHeaders.last { $0 < offset } }

    /// The whole tags at `offsets`.
    func tags(at offsets: [Int64]) -> [FLVTag]? {
        var tags: [FLVTag] = []
        for offset in offsets {
            guard (try? file.seek(toOffset: UInt64(offset))) != nil, let read = try? file.read(upToCount: 11),
                let (type, size, timestamp) = FLVTagFramer.header(
                    [UInt8](read), at: 0, maximumTagSize: Self.maximumTagSize),
                let body = try? file.read(upToCount: size), body.count == size
            else { return nil }
            tags.append(FLVTag(type: type, timestamp: timestamp, body: [UInt8](body)))
        }
        return tags
    }
}
