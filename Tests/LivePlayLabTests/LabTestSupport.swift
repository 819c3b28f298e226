import LivePlayFLV
import LivePlayLab
import LivePlayTesting
import NIOCore
import Testing

/// Media for the lab tests, made by ffmpeg at test time (cached like the other fixtures).
enum LabFixture {
    /// H.264 (no B-frames) + AAC, 160x120 at 25 fps; `seconds` long with a keyframe every `gop` frames.
    static func stream(seconds: Int, gop: Int) throws -> String {
        try Fixtures.make(
            name: "lab-\(seconds)s-g\(gop)", extension: "flv",
            ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25",
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100", "-t", "\(seconds)",
                "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-bf", "0", "-g", "\(gop)",
                "-c:a", "aac", "-b:a", "64k", "-f", "flv"])
    }
}

/// Runs `body` with a started server and always stops it.
func withServer(
    _ path: String, configuration: LiveFLVServer.Configuration = .init(),
    _ body: (LiveFLVServer, Int) async throws -> Void
) async throws {
    let server = try LiveFLVServer(path: path, configuration: configuration)
    let port = try await server.start()
    do {
        try await body(server, port)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

/// Waits until `server` has sent every tag of its stream's first `milliseconds` (counted by its own statistics, so
/// a client joins once the stream is there, however loaded the machine); `false` if that took more than 10 s.
func streamed(_ server: LiveFLVServer, through milliseconds: UInt32) async -> Bool {
    let due = server.program.tags.prefix { $0.timestamp - server.program.firstTimestamp <= milliseconds }.count
    return await eventually { server.statistics.tagsSent >= due }
}

/// Runs `body` with a started proxy and always stops it.
func withProxy(
    _ configuration: ImpairmentProxy.Configuration, _ body: (ImpairmentProxy, Int) async throws -> Void
) async throws {
    let proxy = ImpairmentProxy(configuration: configuration)
    let port = try await proxy.start()
    do {
        try await body(proxy, port)
    } catch {
        await proxy.stop()
        throw error
    }
    await proxy.stop()
}

/// A tag of a recorded body, with where it ended in the raw recording.
struct RecordedTag {
    var type: UInt8
    var timestamp: UInt32
    var body: [UInt8]
    /// Offset in the raw recording of the tag's last byte.
    var endOffset: Int
}

/// Splits a recorded close-delimited body into tags (timestamps as sent, bodies as bytes).
func recordedTags(_ recording: StreamRecorder.Recording) throws -> [RecordedTag] {
    let response = try #require(recording.response)
    var splitter = FLVTagSplitter()
    var tags: [RecordedTag] = []
    splitter.append(ByteBuffer(bytes: response.body))
    while let tag = try splitter.nextTag() {
        let body = tag.body.map { Array($0.readableBytesView) } ?? []
        tags.append(
            RecordedTag(
                type: tag.type, timestamp: tag.timestamp, body: body,
                endOffset: response.headLength + Int(splitter.consumedByteCount) - 1))
    }
    return tags
}

/// The body of a recorded response, demuxed.
func demuxedBody(_ recording: StreamRecorder.Recording) throws -> [FLVElement] {
    let response = try #require(recording.response)
    return try demuxAll(response.body)
}
