import Foundation
public import LivePlayCore

/// Video decoders of playbacks that ended, kept for the next playback with the same codec configuration and
/// options: opening one (`avcodec_open2`, its frame pools, its threads) then happens once per configuration instead
/// of once per playback, and a process that plays stream after stream reuses the same few decoders' memory.
/// Audio decoders are not kept: they are cheap to open, and libavcodec's AAC decoder, once flushed, does not
/// start the next stream sample for sample as a new one does.
///
/// A decoder is shelved reset (it then waits for a keyframe) by its last owner, and taken by one new owner; at
/// most ``limit`` wait, the oldest let go first. Process-wide, like the playback threads.
public enum DecoderShelf {
    public static let limit = 4

    /// `@unchecked Sendable`: the shelves are read and written under `lock`, and a decoder on a shelf has no other
    /// owner.
    private final class Shelves: @unchecked Sendable {
        let lock = NSLock()
        var video: [VideoDecoder] = []
    }

    private static let shelves = Shelves()

    /// A shelved decoder for `configuration` and `options`, or a new one.
    public static func video(
        _ configuration: VideoCodecConfiguration, options: DecoderOptions
    ) throws(DecodeError) -> VideoDecoder {
        let shelved = shelves.lock.withLock {
            shelves.video.firstIndex { $0.configuration == configuration && $0.options == options }
                .map { shelves.video.remove(at: $0) }
        }
        if let shelved { return shelved }
        return try VideoDecoder(configuration: configuration, options: options)
    }

    /// Keeps `decoder` for the next playback; its owner lets go of it.
    public static func shelve(_ decoder: VideoDecoder) {
        decoder.reset()
        shelves.lock.withLock {
            shelves.video.append(decoder)
            if shelves.video.count > limit { shelves.video.removeFirst() }
        }
    }

    /// How many decoders wait.
    public static var count: Int {
        shelves.lock.withLock { shelves.video.count }
    }
}
