import LivePlayCore
import LivePlayDecode

/// The caption stage: the CEA-608 data of the decoded pictures (ATSC A/53, from H.264 and HEVC SEI), or else of the
/// stream's `onCaptionInfo` messages, decoded on the configured channel as each picture leaves the decoder, about
/// the look-ahead (150 ms) before it is shown. The screen changes go to the ``Presenter``, which shows each with its
/// picture.
///
/// `onCaptionInfo` data waits for the first picture at or after its time and is decoded just before it, so both
/// kinds reach the decoder in presentation order. A stream whose pictures carry caption data has its captions
/// there; its `onCaptionInfo` messages (the same captions, when a server adds them) are then left alone.
///
/// The decoder opens with the first caption data: a stream without captions costs nothing.
struct CaptionStage {
    private let channel: CaptionChannel?
    private var decoder: CaptionDecoder?
    /// The decoder could not open or failed: no more captions this session (told once).
    private var gaveUp = false
    /// `onCaptionInfo` data by time, waiting for its picture.
    private var waiting: [(at: MediaTimestamp, data: [UInt8])] = []
    /// A picture carried caption data.
    private var picturesCarryCaptions = false

    /// At most this much `onCaptionInfo` data waits (20 s of one message a picture at 30 fps); the oldest goes.
    static let maximumWaiting = 600

    init(channel: CaptionChannel?) {
        self.channel = channel
    }

    /// `onCaptionInfo` data for the picture stamped `at`.
    mutating func received(_ data: [UInt8], at: MediaTimestamp) {
        guard channel != nil, !gaveUp, !picturesCarryCaptions else { return }
        let index = waiting.firstIndex { $0.at > at } ?? waiting.endIndex
        waiting.insert((at, data), at: index)
        if waiting.count > Self.maximumWaiting { waiting.removeFirst() }
    }

    /// The screen changes up to `frame`, or a report of why captions stop.
    mutating func decode(_ frame: VideoFrame) -> (changes: [CaptionScreen], problem: Report?) {
        guard let channel, !gaveUp else { return ([], nil) }
        var inputs: [(at: MediaTimestamp, data: [UInt8])] = []
        if frame.hasClosedCaptionData, let data = frame.closedCaptionData {
            picturesCarryCaptions = true
            waiting.removeAll()
            inputs.append((frame.pts, data))
        } else if let first = waiting.first, first.at <= frame.pts {
            let due = waiting.prefix { $0.at <= frame.pts }
            inputs = Array(due)
            waiting.removeFirst(due.count)
        }
        guard !inputs.isEmpty else { return ([], nil) }
        do throws(DecodeError) {
            if self.decoder == nil { self.decoder = try CaptionDecoder(channel: channel) }
            guard let decoder else { return ([], nil) }
            var changes: [CaptionScreen] = []
            for input in inputs {
                if let change = try decoder.decode(input.data, at: input.at) { changes.append(change) }
            }
            return (changes, nil)
        } catch {
            gaveUp = true
            decoder = nil
            waiting.removeAll()
            return ([], Reports.captionsFailed(error))
        }
    }

    /// A seek: the pictures that follow are not the ones after the screen it knew.
    mutating func reset() {
        decoder?.reset()
        waiting.removeAll()
    }
}
