import LivePlayCore
import LivePlayDecode

/// The caption stage: the CEA-608 data of the decoded pictures (ATSC A/53, from H.264 and HEVC SEI) decoded on the
/// configured channel, as each picture leaves the decoder, about the look-ahead (150 ms) before it is shown. The
/// screen changes go to the ``Presenter``, which shows each with its picture.
///
/// The decoder opens with the first picture that carries caption data: a stream without captions costs nothing.
struct CaptionStage {
    private let channel: CaptionChannel?
    private var decoder: CaptionDecoder?
    /// The decoder could not open or failed: no more captions this session (told once).
    private var gaveUp = false

    init(channel: CaptionChannel?) {
        self.channel = channel
    }

    /// The screen change `frame` makes, or a report of why captions stop.
    mutating func decode(_ frame: VideoFrame) -> (change: CaptionScreen?, problem: Report?) {
        guard let channel, !gaveUp, frame.hasClosedCaptionData else { return (nil, nil) }
        do {
            if decoder == nil { decoder = try CaptionDecoder(channel: channel) }
            return (try decoder?.decode(frame), nil)
        } catch {
            gaveUp = true
            decoder = nil
            return (nil, Reports.captionsFailed(error))
        }
    }

    /// A seek: the pictures that follow are not the ones after the screen it knew.
    mutating func reset() {
        decoder?.reset()
    }
}
