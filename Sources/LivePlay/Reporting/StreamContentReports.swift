import Foundation
import LivePlayCore
import LivePlayDecode
import LivePlayFLV

/// What the stream itself carries, as events: its metadata, its tracks, its `colorInfo`, and the messages in it
/// (script data, SEI, captions). The rest of ``Reports`` is in `SessionReports.swift`.
extension Reports {
    static func metadata(_ metadata: FLVMetadata) -> Report {
        var parameters: [String: PlayEventValue] = [:]
        for property in metadata.values {
            if let number = property.value.numberValue { parameters[property.key] = .double(number) }
            if let text = property.value.stringValue { parameters[property.key] = .string(text) }
            if let flag = property.value.booleanValue { parameters[property.key] = .bool(flag) }
        }
        return Report(.getMetadata, "onMetaData", parameters)
    }

    /// `LIVEPLAY_WARNING_TRUNCATED`: media on demand ended short of what it promised (its metadata's duration), or
    /// inside a tag. What was there is played; the warning says how much of how much.
    static func truncated(received: Double, promised: Double?, cutInsideTag: Int?) -> Report {
        let shown = { (seconds: Double) in String(format: "%.1f s", seconds) }
        let of = promised.map { " of the \(shown($0)) its metadata promises" } ?? ""
        let inside = cutInsideTag.map { ", cut inside a tag (\($0) bytes of it left)" } ?? ""
        var parameters: [String: PlayEventValue] = ["received_s": .double((received * 1000).rounded() / 1000)]
        if let promised { parameters["EVT_PLAY_DURATION"] = .double(promised) }
        if let cutInsideTag { parameters["cut_inside_tag_bytes"] = .int(Int64(cutInsideTag)) }
        return Report(.truncated, "the media is truncated: it ends at \(shown(received))\(of)\(inside)", parameters)
    }

    /// 9016: the tracks of a multitrack stream, one `id codec details` line each, the playing ones marked.
    static func tracks(_ tracks: [FLVTrack]) -> Report {
        var parameters: [String: PlayEventValue] = ["tracks": .string(tracks.map(\.summary).joined(separator: "; "))]
        for kind in MediaKind.allCases {
            let ofKind = tracks.filter { $0.kind == kind }
            parameters["\(kind.rawValue)_tracks"] = .string(ofKind.map { String($0.id) }.joined(separator: " "))
            if let active = ofKind.first(where: \.isActive) { parameters["\(kind.rawValue)_track"] = .int(Int64(active.id)) }
        }
        return Report(.tracksChanged, "tracks: " + tracks.map(\.summary).joined(separator: "; "), parameters)
    }

    /// `PLAY_EVT_GET_METADATA` (2028, with `enableMetaData`) for Enhanced RTMP's `colorInfo` video metadata.
    static func colorInfo(_ info: VideoColorInfo?) -> Report {
        var parameters: [String: PlayEventValue] = [:]
        if let info {
            for (key, value) in [
                ("bitDepth", info.bitDepth), ("colorPrimaries", info.colorPrimaries),
                ("transferCharacteristics", info.transferCharacteristics),
                ("matrixCoefficients", info.matrixCoefficients), ("maxCLL", info.maxContentLightLevel),
                ("maxFall", info.maxFrameAverageLightLevel),
            ] {
                if let value { parameters[key] = .int(Int64(value)) }
            }
            for (key, value) in info.masteringDisplay { parameters[key] = .double(value) }
            parameters["hdr"] = .bool(info.isHDR)
        }
        return Report(.getMetadata, info == nil ? "colorInfo reset" : "colorInfo", parameters)
    }

    static func scriptMessage(_ message: FLVDataMessage) -> Report {
        Report(
            .getMessage, message.name,
            ["EVT_GET_MSG": .string(String(describing: message.arguments)), "source": .string("script")])
    }

    /// `PLAY_EVT_GET_MESSAGE` for user-data SEI messages carried in the video (with `enableMessage`).
    static func seiMessages(in packet: EncodedPacket, _ video: VideoCodecConfiguration) -> [Report] {
        SEIMessages.userData(in: packet, codec: video.codec, nalLengthSize: video.nalLengthSize).map { message in
            // Text payloads often end in a C string's NUL (x264's does): not part of the message.
            let text = String(decoding: message.payload.reversed().drop { $0 == 0 }.reversed(), as: UTF8.self)
            return Report(
                .getMessage, "SEI user data",
                ["EVT_GET_MSG": .string(text), "source": .string("sei"),
                    "uuid": .string(message.uuidString), "pts_ms": .int(packet.pts.milliseconds)])
        }
    }

    /// `LIVEPLAY_EVT_SEI_MESSAGE` (9018): an SEI message of an asked-for payload type, as its picture is shown.
    static func sei(_ message: SEIMessage, pts: MediaTimestamp) -> Report {
        var parameters: [String: PlayEventValue] = [
            "payload_type": .int(Int64(message.payloadType)), "pts_ms": .int(pts.milliseconds),
            "payload": .string(Data(message.payload).base64EncodedString()), "size": .int(Int64(message.payload.count)),
        ]
        if let uuid = message.uuidString { parameters["uuid"] = .string(uuid) }
        return Report(.seiMessage, "SEI message, payload type \(message.payloadType)", parameters)
    }

    /// `LIVEPLAY_EVT_CAPTION` (9020): a caption left the screen; its times are the pictures' it showed with.
    static func caption(_ caption: Caption) -> Report {
        Report(
            .caption, caption.text,
            [
                "start_ms": .int(caption.start.milliseconds), "end_ms": .int(caption.end.milliseconds),
                "text": .string(caption.text), "channel": .string(caption.channel.rawValue),
            ])
    }

    /// Captions stop for this session: libavcodec cannot decode them (`LIVEPLAY_WARNING_MALFORMED_DATA`).
    static func captionsFailed(_ error: DecodeError) -> Report {
        Report(.malformedData, "captions cannot be decoded: \(error)", ["reason": .string("captions")])
    }
}
