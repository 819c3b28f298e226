import Foundation
import LivePlay
import LivePlayDecode
import LivePlayFLV
import LivePlayTesting
import Testing

/// A stream whose only parameter sets are in its keyframes (x264's `repeat-headers`, as GStreamer's x264enc
/// sends), with no sequence header at all: the configuration is built from them, and the pictures are the
/// ones ffmpeg decodes from the same stream with its header.
@Suite struct InBandParameterSetTests {
    struct Material {
        /// The FLV as ffmpeg muxed it, with its sequence header: ffmpeg's oracle.
        var original: String
        /// The same without any sequence header.
        var headerless: [UInt8]
    }

    static func material() throws -> Material {
        let original = try Fixtures.make(
            name: "inband-h264", extension: "flv",
            ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "8", "-c:v", "libx264", "-preset", "veryfast",
                "-bf", "2", "-g", "25", "-x264-params", "repeat-headers=1", "-an", "-f", "flv"])
        return Material(original: original, headerless: Fixtures.withoutSequenceHeaders(try Fixtures.bytes(original)))
    }

    @Test func aFileWithOnlyInBandParameterSetsDecodesAsWithItsHeader() throws {
        let material = try Self.material()
        let elements = try demuxAll(material.headerless)
        #expect(!elements.warnings.contains { $0.code == .missingConfiguration }, "\(elements.warnings)")
        let configurations = elements.compactMap { if case .videoConfiguration(let c) = $0 { c } else { nil } }
        #expect(configurations.map { "\($0.width)x\($0.height)" } == ["320x240"])
        let path = try Fixtures.write(material.headerless, name: "inband-headerless")
        let reader = try MediaReader(path: path, options: MediaReader.Options(decodes: true))
        var pictures: [FrameHash] = []
        while let event = try reader.next() {
            switch event {
            case .videoFrame(let frame): pictures.append(FrameHash(size: frame.packedSize, md5: frame.md5()))
            case .decodeError(let kind, let error): Issue.record("\(kind): \(error)")
            case .hardware(let notice, _): Issue.record("no device was asked for: \(notice)")
            case .audioFrame, .element: break
            }
        }
        let expected = try Oracle.frameHashes(material.original, video: true)
        #expect(expected.count == 200)
        #expect(pictures == expected)
    }

    /// Played live over HTTP-FLV and over RTMP (a scripted server sending the tags as messages): every picture
    /// shown is one of ffmpeg's, in order, from the first keyframe.
    @Test(arguments: ["http", "rtmp"])
    func liveStreamsWithOnlyInBandParameterSetsPlay(_ transport: String) async throws {
        let material = try Self.material()
        let expected = try Oracle.frameHashes(material.original, video: true).map(\.md5)
        let url: String
        let stop: () -> Void
        if transport == "http" {
            let body = material.headerless
            let server = try ScriptedHTTPServer { _, _ in
                .init(body: body, pacing: (body.count / 80, .milliseconds(100)), contentLength: false)
            }
            (url, stop) = ("http://127.0.0.1:\(server.port)/live.flv", server.stop)
        } else {
            var messages: [[UInt8]] = []
            var offset = 13
            let bytes = material.headerless
            while offset + 11 <= bytes.count {
                let size = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                let timestamp = UInt32(bytes[offset + 4]) << 16 | UInt32(bytes[offset + 5]) << 8 | UInt32(bytes[offset + 6])
                messages.append(
                    RTMPChunkWriter.message(
                        type: bytes[offset], body: Array(bytes[offset + 11..<offset + 11 + size]), timestamp: timestamp,
                        messageStreamID: 1, chunkStreamID: 6))
                offset += 11 + size + 4
            }
            let server = try MisbehavingServer(
                .script { [messages] peer in
                    try peer.acceptRTMPHandshake()
                    try peer.write(RTMPChunkWriter.onStatus("NetStream.Play.Start"))
                    for (index, message) in messages.enumerated() {
                        if index % 10 == 9, !peer.sleep(.milliseconds(400)) { return }
                        try peer.write(message)
                    }
                    peer.holdOpen()
                })
            (url, stop) = ("rtmp://127.0.0.1:\(server.port)/live/inband", server.stop)
        }
        defer { stop() }
        let sink = RecordingSink(hashesPictures: true)
        let recording = await SessionRecording.record(
            url, configuration: LivePlayConfiguration(), limit: .seconds(20), sink: sink,
            script: { probe in
                _ = await probe.wait(for: .playBegin, timeout: .seconds(10))
                // Until the stream's last pictures have been shown (or 10 s).
                _ = await eventually(within: .seconds(10)) { sink.pictures.count >= 70 }
                probe.stop()
            })
        #expect(recording.codes.contains(2004), "\(transport): \(recording.codes)")
        #expect(!recording.codes.contains(2103), "\(transport): no reconnect")
        let shown = sink.pictures.compactMap(\.md5)
        #expect(shown.count >= 60, "\(transport): \(shown.count) pictures")
        // In order, each one of ffmpeg's: the shown pictures are a subsequence of the oracle's.
        var next = expected.startIndex
        for hash in shown {
            guard let found = expected[next...].firstIndex(of: hash) else {
                let known = expected.firstIndex(of: hash).map { "ffmpeg's picture \($0), after \(next - 1)" }
                Issue.record("\(transport): \(known ?? "a picture ffmpeg does not decode") of \(shown.count)")
                break
            }
            next = found + 1
        }
        #expect(shown.first == expected.first, "\(transport): from the first keyframe")
    }
}
