import Foundation
import LivePlayTesting
import Logging
import Testing

@testable import LivePlayTransport

/// How a connection attempt ended, and when.
struct RTMPOutcome: Sendable {
    var events: [TransportEvent]
    /// `nil`: `next()` returned `nil` (the stream finished by design).
    var error: TransportError?
    var elapsed: Duration

    var code: TransportError.Code? { error?.code }
}

enum RTMPTest {
    static let logger: Logger = {
        var logger = Logger(label: "liveplay.rtmp.test")
        logger.logLevel = ProcessInfo.processInfo.environment["LIVEPLAY_RTMP_TRACE"] == nil ? .warning : .trace
        return logger
    }()

    static func connection(
        _ url: String, options: TransportOptions = TransportOptions(), limits: RTMPSource.Limits = .init()
    ) -> RTMPConnection {
        RTMPSource(url: url, options: options, logger: logger, limits: limits).makeConnection() as! RTMPConnection
    }

    /// Pulls events until the connection ends (or `limit` passes, which is a failure of the test).
    static func drain(_ connection: RTMPConnection, within limit: Duration) async throws -> RTMPOutcome {
        let start = ContinuousClock.now
        return try await withDeadline(limit) {
            var events: [TransportEvent] = []
            do throws(TransportError) {
                while let event = try await connection.next() {
                    // Keep media events small in the record: their count is what tests look at.
                    if case .tags(let tags) = event { events.append(.tags(Array(tags.prefix(1)))) } else {
                        events.append(event)
                    }
                }
                await connection.close()
                return RTMPOutcome(events: events, error: nil, elapsed: .now - start)
            } catch {
                await connection.close()
                return RTMPOutcome(events: events, error: error, elapsed: .now - start)
            }
        }
    }

    /// Options with short, distinct deadlines, so a test can tell which one fired.
    static func options(
        resolve: Duration = .seconds(2), connect: Duration = .seconds(2), handshake: Duration = .seconds(3),
        noData: Duration = .seconds(3), goodputWindow: Duration = .seconds(10), minimumGoodput: Double = 0.1
    ) -> TransportOptions {
        TransportOptions(
            resolveTimeout: resolve, connectTimeout: connect, handshakeTimeout: handshake, noDataTimeout: noData,
            minimumGoodput: minimumGoodput, goodputWindow: goodputWindow, rtmpBufferLength: .milliseconds(500))
    }

    /// nginx-rtmp, or `nil` when it is not installed: then the test is skipped, except under `CI=true`,
    /// where a missing server is a failure.
    static func nginx() throws -> NginxRTMPServer? {
        if let reason = NginxRTMPServer.unavailableReason {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("nginx-rtmp is required under CI: \(reason)")
            } else {
                print("skipping: \(reason) (apt-get install nginx libnginx-mod-rtmp)")
            }
            return nil
        }
        return try NginxRTMPServer()
    }

    /// Waits until nginx logs that `publisher` is publishing (ffmpeg connected and sent its stream).
    static func waitUntilPublishing(_ nginx: NginxRTMPServer, _ publisher: FFmpegPublisher) throws {
        let publishing = LoopbackPort.wait(timeout: .seconds(10)) { nginx.errorLog.contains("publish: name='") }
        guard publishing else {
            throw LoopbackError("ffmpeg did not start publishing: \(publisher.log.suffix(1000))")
        }
    }
}

extension Duration {
    var milliseconds: Int64 { Int64((self / .milliseconds(1)).rounded()) }
}
