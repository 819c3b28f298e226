public import LivePlayCore
import Synchronization

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

    /// A decoder on the shelf, handed from its last owner's thread to the next owner's: that the last owner let go
    /// of it is more than the compiler can see through the owners' stored properties.
    ///
    /// `@unchecked Sendable`: a decoder on a shelf has no other owner.
    private struct Shelved: @unchecked Sendable {
        let decoder: VideoDecoder
    }

    /// The shelved video decoders, oldest first.
    private static let shelves = Mutex<[Shelved]>([])

    /// A shelved decoder for `configuration` and `options`, or a new one.
    public static func video(
        _ configuration: VideoCodecConfiguration, options: DecoderOptions
    ) throws(DecodeError) -> VideoDecoder {
        let shelved = shelves.withLock { video in
            video.firstIndex { $0.decoder.configuration == configuration && $0.decoder.options == options }
                .map { video.remove(at: $0) }
        }
        if let shelved {
            shelved.decoder.handedOn()
            return shelved.decoder
        }
        return try VideoDecoder(configuration: configuration, options: options)
    }

    /// Keeps `decoder` for the next playback; its owner lets go of it.
    public static func shelve(_ decoder: VideoDecoder) {
        decoder.reset()
        shelves.withLock { video in
            video.append(Shelved(decoder: decoder))
            if video.count > limit { video.removeFirst() }
        }
    }

    /// How many decoders wait.
    public static var count: Int {
        shelves.withLock { $0.count }
    }
}
