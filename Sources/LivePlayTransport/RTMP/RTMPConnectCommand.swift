import CRTMP
import LivePlayCore
import LivePlayFLV

/// The `connect` command liveplay sends: librtmp's own fields (app, flashVer, swfUrl, tcUrl, fpad, capabilities,
/// audio / video codecs, videoFunction, pageUrl, objectEncoding), plus what Enhanced RTMP v2 adds to the command
/// object ("Enhancing NetConnection connect Command"): `fourCcList`, `videoFourCcInfoMap` / `audioFourCcInfoMap`
/// (CanDecode for every FourCC liveplay decodes) and `capsEx`. librtmp has no way to add properties to the
/// object, but `RTMP_Connect1` sends a packet it is given in place of its own.
enum RTMPConnectCommand {
    /// `FourCcInfoMask.CanDecode`.
    static let canDecode = 1.0
    /// `CapsExMask`: Reconnect (1: a server's `NetConnection.Connect.ReconnectRequest` is carried out),
    /// Multitrack (2), ModEx (4) and TimestampNanoOffset (8).
    static let capsEx = 1.0 + 2.0 + 4.0 + 8.0

    static var videoFourCCs: [String] {
        FLVVideoFourCC.allCases.filter(\.codec.isSupported).map(\.name)
    }

    static var audioFourCCs: [String] { FLVAudioFourCC.allCases.map(\.name) }

    /// The command's AMF0 body for `rtmp`'s link, with transaction id `transaction`.
    static func body(_ rtmp: UnsafeMutablePointer<RTMP>, transaction: Int) -> [UInt8] {
        let link = rtmp.pointee.Link
        var properties = [AMF0Property("app", .string(string(link.app)))]
        let flashVersion = string(link.flashVer)
        properties.append(AMF0Property("flashVer", .string(flashVersion.isEmpty ? string(RTMP_DefaultFlashVer) : flashVersion)))
        if link.swfUrl.av_len > 0 { properties.append(AMF0Property("swfUrl", .string(string(link.swfUrl)))) }
        if link.tcUrl.av_len > 0 { properties.append(AMF0Property("tcUrl", .string(string(link.tcUrl)))) }
        properties += [
            AMF0Property("fpad", .boolean(false)),
            AMF0Property("capabilities", .number(15)),
            AMF0Property("audioCodecs", .number(rtmp.pointee.m_fAudioCodecs)),
            AMF0Property("videoCodecs", .number(rtmp.pointee.m_fVideoCodecs)),
            AMF0Property("videoFunction", .number(1)),
        ]
        if link.pageUrl.av_len > 0 { properties.append(AMF0Property("pageUrl", .string(string(link.pageUrl)))) }
        properties += [
            AMF0Property("objectEncoding", .number(rtmp.pointee.m_fEncoding)),
            AMF0Property("fourCcList", .strictArray((videoFourCCs + audioFourCCs).map { .string($0) })),
            AMF0Property("videoFourCcInfoMap", .object(videoFourCCs.map { AMF0Property($0, .number(canDecode)) })),
            AMF0Property("audioFourCcInfoMap", .object(audioFourCCs.map { AMF0Property($0, .number(canDecode)) })),
            AMF0Property("capsEx", .number(capsEx)),
        ]
        var encoder = AMF0Encoder()
        encoder.encode(.string("connect"))
        encoder.encode(.number(Double(transaction)))
        encoder.encode(.object(properties))
        return encoder.bytes
    }

    /// Runs the handshake and sends the command (`RTMP_Connect1` with this packet); false as `RTMP_Connect1` is.
    static func handshakeAndConnect(_ rtmp: UnsafeMutablePointer<RTMP>) -> Bool {
        // librtmp numbers its invokes itself: the connect takes the next number, as its own would.
        rtmp.pointee.m_numInvokes += 1
        let bytes = body(rtmp, transaction: Int(rtmp.pointee.m_numInvokes))
        var packet = RTMPPacket()
        guard RTMPPacket_Alloc(&packet, UInt32(bytes.count)) != 0 else { return false }
        defer { RTMPPacket_Free(&packet) }
        bytes.withUnsafeBytes { raw in
            packet.m_body.withMemoryRebound(to: UInt8.self, capacity: bytes.count) {
                $0.update(from: raw.bindMemory(to: UInt8.self).baseAddress!, count: bytes.count)
            }
        }
        packet.m_nChannel = 0x03
        packet.m_headerType = UInt8(RTMP_PACKET_SIZE_LARGE)
        packet.m_packetType = UInt8(RTMP_PACKET_TYPE_INVOKE)
        packet.m_nTimeStamp = 0
        packet.m_nInfoField2 = 0
        packet.m_hasAbsTimestamp = 0
        packet.m_nBodySize = UInt32(bytes.count)
        return RTMP_Connect1(rtmp, &packet) != 0
    }

    private static func string(_ value: AVal) -> String {
        guard let bytes = value.av_val, value.av_len > 0 else { return "" }
        return bytes.withMemoryRebound(to: UInt8.self, capacity: Int(value.av_len)) {
            String(decoding: UnsafeBufferPointer(start: $0, count: Int(value.av_len)), as: UTF8.self)
        }
    }
}
