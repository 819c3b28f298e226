import Foundation
import LivePlayTesting
import Testing

@testable import liveplay

/// A server that floods or lies about sizes cannot make the player grow past its bounds: the built binary,
/// its peak RSS measured by GNU time.
@Suite(.serialized) struct MemoryBoundTests {
    /// The stated bound: a debug build playing the demo peaks near 60 MiB; the jitter buffer may add its
    /// 64 MiB byte limit, the demuxer one 8 MiB tag, the decoded queues a few pictures.
    static let ceiling = 250 << 20

    /// Runs `liveplay ARGUMENTS` under `/usr/bin/time -f %M`; returns the output and the peak RSS in bytes.
    static func peakRSS(_ arguments: [String]) throws -> (ExternalTool.Output, Int) {
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("liveplay-rss-\(UUID()).txt").path
        defer { try? FileManager.default.removeItem(atPath: report) }
        let output = try ExternalTool.run("/usr/bin/time", ["-o", report, "-f", "%M", Binary.path] + arguments)
        let kilobytes = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n").last.flatMap { Int($0) }
        return (output, (kilobytes ?? 0) * 1024)
    }

    /// The fixture's header and sequence headers, then its media looped `loops` times with timestamps
    /// continuing: 10 s of stream per loop, served as fast as the socket takes it.
    static func flood(loops: Int) throws -> [UInt8] {
        let bytes = try Fixtures.bytes(try Fixture.longH264AAC.path())
        var head = Array(bytes.prefix(13))
        var media: [(timestamp: Int, tag: [UInt8])] = []
        var offset = 13
        while offset + 15 <= bytes.count {
            let size = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let tag = Array(bytes[offset..<offset + 11 + size + 4])
            let timestamp = Int(bytes[offset + 7]) << 24 | Int(bytes[offset + 4]) << 16 | Int(bytes[offset + 5]) << 8
                | Int(bytes[offset + 6])
            let isHeader = bytes[offset] == 18 || (size > 1 && bytes[offset + 12] == 0)
            if isHeader { head += tag } else { media.append((timestamp, tag)) }
            offset += 11 + size + 4
        }
        var output = head
        for loop in 0..<loops {
            for (timestamp, tag) in media {
                var copy = tag
                let shifted = timestamp + loop * 10_000
                copy[4] = UInt8(truncatingIfNeeded: shifted >> 16)
                copy[5] = UInt8(truncatingIfNeeded: shifted >> 8)
                copy[6] = UInt8(truncatingIfNeeded: shifted)
                copy[7] = UInt8(truncatingIfNeeded: shifted >> 24)
                output += copy
            }
        }
        return output
    }

    @Test func aServerFloodingTenMinutesOfMediaAtOnceStaysWithinTheBufferLimits() throws {
        let body = try Self.flood(loops: 60)
        // 10 minutes of media in 10 s: sixty times real time, for longer than the run.
        let server = try ScriptedHTTPServer { _, _ in
            .init(body: body, pacing: (body.count / 100, .milliseconds(100)), contentLength: false)
        }
        let (output, rss) = try Self.peakRSS([
            "http://127.0.0.1:\(server.port)/live.flv", "--json", "--duration", "6", "--retries", "0",
        ])
        let lines = try EventLogTests.lines(output.text)
        let caches = lines.compactMap { ($0["status"] as? [String: Any])?["NET_STATUS_CACHE_SIZE"] as? Int }
        #expect(caches.count >= 4, "a status a second while flooded")
        #expect(caches.allSatisfy { $0 <= 22_000 }, "at most the 20 s buffer limit plus a GOP: \(caches)")
        let skipped = lines.contains { [2107, 9003].contains($0["code"] as? Int ?? 0) }
        #expect(skipped, "the excess is shed as whole GOPs, and said so")
        #expect(rss > 0 && rss < Self.ceiling, "peak RSS \(rss >> 20) MiB for \(body.count >> 20) MiB of flood")
        print("flood of \(body.count >> 20) MiB: peak RSS \(rss >> 20) MiB, cache at most \(caches.max() ?? 0) ms")
    }

    @Test func tagsClaimingSixteenMegabytesAllocateNothing() throws {
        var writer = FLVWriter()
        for index in 0..<2000 {
            // A tag header announcing 16 MiB − 1, then only 200 bytes of it.
            writer.writeTag(
                type: 9, timestamp: UInt32(index * 40), body: Array(repeating: 0x17, count: 200),
                declaredSize: 0xFF_FFFF)
        }
        let body = writer.bytes
        let server = try ScriptedHTTPServer { _, _ in .init(body: body, contentLength: false) }
        let (output, rss) = try Self.peakRSS([
            "http://127.0.0.1:\(server.port)/live.flv", "--json", "--retries", "0", "--read-timeout", "1",
        ])
        #expect(output.status == ExitStatus.unavailable, "lost, not crashed: \(output.standardError)")
        #expect(rss > 0 && rss < Self.ceiling, "peak RSS \(rss >> 20) MiB")
        print("2000 tags claiming 16 MiB each: peak RSS \(rss >> 20) MiB")
    }
}
