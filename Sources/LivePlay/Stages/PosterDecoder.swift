import LivePlayBuffering
import LivePlayCore
import LivePlayDecode

/// A keyframe decoded on a decoder of its own and drained at once, for a picture to show before playback reaches
/// it: a session's first picture (the playing decoder holds a B-frame stream back by its reorder delay), and a
/// preloaded stream's poster, its newest keyframe (``StandbyPlayOut``). The decoder stays open while the
/// configuration holds: preloading decodes one keyframe a GOP.
final class PosterDecoder {
    private let options: DecoderOptions
    private var decoder: VideoDecoder?

    init(options: DecoderOptions) {
        self.options = options
    }

    /// The decoder goes on to the next playback (``DecoderShelf``).
    deinit {
        if let decoder { DecoderShelf.shelve(decoder) }
    }

    /// `keyframe`'s picture under `configuration`, or nil when it does not decode.
    func picture(of keyframe: EncodedPacket, _ configuration: VideoCodecConfiguration) -> VideoFrame? {
        if decoder?.configuration != configuration {
            if let old = decoder { DecoderShelf.shelve(old) }
            decoder = try? DecoderShelf.video(configuration, options: options)
        }
        guard let decoder else { return nil }
        decoder.reset()
        return decoder.decode(keyframe).frames.first ?? decoder.flush().frames.first
    }
}
