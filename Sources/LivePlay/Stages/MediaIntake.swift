import Foundation
import LivePlayBuffering
import LivePlayCore
import LivePlayDecode
import LivePlayFLV
import Logging

/// The demux side of the play loop: turns each FLV element a connection delivered into what the later
/// stages need, on one media timeline across reconnects.
///
/// A value that gives steps (STYLE.md §2): it maps timestamps (``TimelineStitcher``), decides which
/// packets are played (``PacketAdmission``: resumes, seeks), keeps the newest codec configurations, the
/// server's wall-clock stamps (docs/wall-clock-tags.md) and the stream's ``StreamDescription``; the play
/// loop carries the steps out.
struct MediaIntake {
    /// What the play loop does with an element, in order.
    enum Step {
        case report(Report)
        /// Media arrived on this connection for the first time: the outage, if there was one, is over.
        case mediaArrived
        /// A packet on the session's timeline, before admission: the decoder follows configuration changes
        /// by it, statistics count it.
        case arrived(EncodedPacket)
        /// The connection's first keyframe.
        case firstKeyframe(EncodedPacket)
        /// A packet to play: into the jitter buffer.
        case play(EncodedPacket)
        case videoConfiguration(VideoCodecConfiguration)
        case audioConfiguration(AudioCodecConfiguration)
        /// Metadata named a video codec: playback waits for a picture.
        case videoAnnounced
        /// The FLV header's video flag (often set on audio-only streams): the first picture, not the first sound, is
        /// the first frame, but playback does not wait for one.
        case videoFlagged
        /// The colour description of the pictures from this session time on (nil: none).
        case colorInfo(VideoColorInfo?, from: MediaTimestamp)
        /// The stream's sound is silent until more comes (Enhanced RTMP's empty audio message, SequenceEnd).
        case audioSilence
        /// SEI messages of the asked-for payload types, carried by the played video packet stamped `pts`.
        case sei([SEIMessage], pts: MediaTimestamp)
        /// Caption text from the stream's script data (`onTextData`, `onCaption`), from its time on.
        case caption(CaptionScreen)
        /// CEA-608 data from the stream's script data (`onCaptionInfo`), for the picture stamped `at`.
        case captionData([UInt8], at: MediaTimestamp)
        /// A seek found where to start: the first packet it plays (the keyframe at or before the target).
        case seekLanded(keyframe: MediaTimestamp, target: MediaTimestamp)
    }

    /// What the stream has shown of itself so far.
    private(set) var description = StreamDescription()
    /// The newest configurations received (what arriving packets use); decoders follow them in stream order.
    private(set) var videoConfiguration: VideoCodecConfiguration?
    private(set) var audioConfiguration: AudioCodecConfiguration?
    /// The media's length, from `onMetaData`'s duration (media on demand).
    private(set) var mediaDuration: Double?
    /// The source ended inside a tag, leaving this many bytes of it (a file cut short).
    var cutInsideTag: Int?
    /// Session timestamps minus the stream's own: what the stitcher added.
    private(set) var timelineOffset: Int64 = 0
    /// The header or metadata announced video on this connection: the first picture, not the first sound,
    /// begins playback.
    private(set) var expectsVideo = false
    /// A multitrack stream's tracks, as the demuxer last listed them.
    private(set) var tracks: [FLVTrack] = []
    /// Which received packets are played, and where the source is read from (resumes, seeks).
    var admission = PacketAdmission()
    /// The source is being read from a keyframe's offset: the sequence headers it skipped are known already.
    var readsMidFile = false

    private let enableMessage: Bool
    private let enableMetaData: Bool
    private let seiPayloadTypes: Set<Int>
    /// Captions are on (``LivePlayConfiguration/captionChannel``): script-data caption text goes to play-out.
    private let showsCaptions: Bool
    private let logger: Logger
    private var stitcher = TimelineStitcher()
    private var clockStamp: (wallClockMs: Double, streamMs: Int64)?
    private var warnings = WarningThrottle()
    private var sawKeyframe = false
    private var sawMedia = false

    init(
        enableMessage: Bool, enableMetaData: Bool, seiPayloadTypes: Set<Int> = [], showsCaptions: Bool = false,
        logger: Logger
    ) {
        self.enableMessage = enableMessage
        self.enableMetaData = enableMetaData
        self.seiPayloadTypes = seiPayloadTypes
        self.showsCaptions = showsCaptions
        self.logger = logger
    }

    /// A new connection: media on demand is read again from its own timestamps (what was had is skipped);
    /// a live stream's timeline goes on across the outage.
    mutating func beginConnection(outage: Duration?, onDemand: Bool) {
        sawKeyframe = false
        sawMedia = false
        expectsVideo = false
        if onDemand, outage != nil {
            stitcher = TimelineStitcher()
            admission.resumeAfterLoss()
        } else if let outage {
            stitcher.beginConnection(outage: outage)
        }
    }

    /// Forgets where reading had got to, for a new read of the source (a seek in media on demand).
    mutating func readAgain() {
        admission.readAgain()
        stitcher = TimelineStitcher()
    }

    /// What `element` means for play-out, appended to `steps` (a loop that keeps one array for it allocates none).
    mutating func take(_ element: FLVElement, onDemand: Bool, at now: Duration, into steps: inout [Step]) {
        description.record(element)
        switch element {
        case .packet(let packet):
            take(packet, onDemand: onDemand, into: &steps)
        case .videoConfiguration(let video):
            videoConfiguration = video
            steps.append(.videoConfiguration(video))
        case .audioConfiguration(let audio):
            audioConfiguration = audio
            steps.append(.audioConfiguration(audio))
        case .metadata(let metadata):
            if let duration = metadata.duration, duration.isFinite, duration > 0 { mediaDuration = duration }
            admission.received(metadata)
            // Metadata is trusted to mean it; the FLV header's video flag is often set on audio-only streams.
            if metadata.videoCodecID != nil {
                expectsVideo = true
                steps.append(.videoAnnounced)
            }
            if enableMetaData { steps.append(.report(Reports.metadata(metadata))) }
        case .dataMessage(let message):
            if let stamp = WallClockStamp(message) {
                clockStamp = (Double(stamp.wallClockMs), Int64(stamp.streamMs) + timelineOffset)
            } else if let text = ScriptCaptions.text(of: message) {
                if showsCaptions {
                    let at = MediaTimestamp(milliseconds: message.timestamp.milliseconds + timelineOffset)
                    steps.append(.caption(CaptionScreen(at: at, text: text, channel: .text)))
                }
            } else if let base64 = ScriptCaptions.captionInfoData(of: message) {
                if showsCaptions, let payload = Data(base64Encoded: base64, options: .ignoreUnknownCharacters),
                    let data = ScriptCaptions.ccData(ofCaptionInfo: [UInt8](payload))
                {
                    let at = MediaTimestamp(milliseconds: message.timestamp.milliseconds + timelineOffset)
                    steps.append(.captionData(data, at: at))
                }
            } else if enableMessage {
                steps.append(.report(Reports.scriptMessage(message)))
            }
        case .warning(let warning) where readsMidFile && warning.code == .missingConfiguration:
            break
        case .warning(let warning):
            logger.warning("FLV: \(warning)")
            if let summary = warnings.record(warning.code.rawValue, at: now) {
                steps.append(
                    .report(Reports.malformedData(warning, count: summary.count, suppressed: summary.suppressed)))
            }
        case .header(let header):
            if header.hasVideo, !expectsVideo { steps.append(.videoFlagged) }
            expectsVideo = expectsVideo || header.hasVideo
        case .tracks(let tracks):
            self.tracks = tracks
            steps.append(.report(Reports.tracks(tracks)))
        case .colorInfo(let info, let timestamp):
            steps.append(.colorInfo(info, from: timestamp + timelineOffset))
            if enableMetaData { steps.append(.report(Reports.colorInfo(info))) }
        case .endOfSequence(let kind):
            if kind == .audio { steps.append(.audioSilence) }
        }
    }

    private mutating func take(_ received: EncodedPacket, onDemand: Bool, into steps: inout [Step]) {
        var packet = received
        let mapped = stitcher.map(dts: packet.dts, pts: packet.pts)
        packet.dts = mapped.dts
        packet.pts = mapped.pts
        timelineOffset = mapped.dts.milliseconds - received.dts.milliseconds
        if let jump = mapped.jump { steps.append(.report(Reports.timestampsJumped(by: jump))) }
        if let gap = mapped.gap, gap > .milliseconds(100) { steps.append(.report(Reports.mediaResumed(after: gap))) }
        if !sawMedia {
            sawMedia = true
            steps.append(.mediaArrived)
        }
        steps.append(.arrived(packet))
        if enableMessage, packet.kind == .video, let videoConfiguration {
            steps += Reports.seiMessages(in: packet, videoConfiguration).map(Step.report)
        }
        if packet.kind == .video, packet.isKeyframe, !sawKeyframe {
            sawKeyframe = true
            steps.append(.firstKeyframe(packet))
        }
        switch admission.admit(packet, onDemand: onDemand) {
        case .passOver:
            break
        case .seekIgnored(let packet):
            steps.append(.report(Reports.seekIgnoredOnLive))
            play(packet, into: &steps)
        case .admit(let packet):
            play(packet, into: &steps)
        case .admitSeeking(let packets, let seekDone):
            if let seekDone, let first = packets.first {
                steps.append(.seekLanded(keyframe: first.dts, target: seekDone.target))
            }
            for packet in packets { play(packet, into: &steps) }
        }
    }

    /// A packet to play, with the SEI messages asked for that it carries: those of a packet passed over (a
    /// resume, a seek) are never delivered, as its picture is never shown.
    private func play(_ packet: EncodedPacket, into steps: inout [Step]) {
        steps.append(.play(packet))
        guard !seiPayloadTypes.isEmpty, packet.kind == .video, let videoConfiguration else { return }
        let messages = SEIMessages.messages(
            in: packet, codec: videoConfiguration.codec, nalLengthSize: videoConfiguration.nalLengthSize,
            types: seiPayloadTypes)
        if !messages.isEmpty { steps.append(.sei(messages, pts: packet.pts)) }
    }

    /// "Shown N ms after the server sent it", from the server's `onLivePlayClock` stamps.
    /// - Parameter wallClockMs: now, in milliseconds since 1970.
    func endToEndLatency(at position: MediaTimestamp, wallClockMs: Double) -> Int64? {
        guard let stamp = clockStamp else { return nil }
        let sentAt = stamp.wallClockMs + Double(position.milliseconds - stamp.streamMs)
        return Int64((wallClockMs - sentAt).rounded())
    }

    /// Media on demand that ended short of what it promised: inside a tag, or more than a second (and 2 %) before
    /// its `onMetaData` duration. `(received, promised)` in seconds; nil when it is whole.
    var truncation: (received: Double, promised: Double?)? {
        let received = mediaSeconds(at: admission.newestReceived)
        if let promised = mediaDuration, received < promised - max(1, promised * 0.02) { return (received, promised) }
        return cutInsideTag == nil ? nil : (received, mediaDuration)
    }

    /// A session position as seconds from the start of the media (`EVT_PLAY_PROGRESS` on demand).
    func mediaSeconds(at position: MediaTimestamp?) -> Double {
        guard let position else { return 0 }
        return Double(max(0, position.milliseconds - timelineOffset)) / 1000
    }
}
