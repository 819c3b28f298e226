import Foundation
import LivePlay
import LivePlayMonitor
import LivePlayTesting
import Testing

/// A decoding monitor never counts as up a stream it cannot show: video without its sequence headers stays
/// `loading`, `liveplay_up` 0.
@Suite struct NothingToShowMonitorTests {
    @Test func aStreamWithoutSequenceHeadersIsNotUp() async throws {
        let body = Fixtures.withoutSequenceHeaders(try Fixtures.bytes(try Fixture.longH264AAC.path()))
        let server = try ScriptedHTTPServer { _, _ in
            .init(body: body, pacing: (body.count / 100, .milliseconds(100)), contentLength: false)
        }
        defer { server.stop() }
        let monitor = Monitor(options: MonitorOptions(configuration: LivePlayConfiguration(decodes: true)))
        monitor.load([MonitoredStream(id: "headless", url: "http://127.0.0.1:\(server.port)/live.flv")])
        let bound = Locked<Int?>(nil)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await monitor.run() }
            group.addTask { try await MetricsServer(host: "127.0.0.1", port: 0, monitor: monitor).run { bound.set($0) } }
            defer { group.cancelAll() }
            _ = LoopbackPort.wait(timeout: .seconds(20)) { bound.get() != nil }
            let port = try #require(bound.get())
            // Until three of the file's ten seconds have arrived (more than a GOP of pictures it cannot show), so a
            // stream wrongly counted up would be by then.
            var page = ""
            let arrived = try await eventually {
                page = try MonitorTests.get(port, "/metrics").body
                let received = MonitorTests.value(page, #"liveplay_received_bytes_total{stream="headless"}"#) ?? 0
                return received >= Double(body.count * 3 / 10)
            }
            #expect(arrived, "\(page)")
            #expect(MonitorTests.value(page, #"liveplay_up{stream="headless"}"#) == 0, "\(page)")
            #expect(MonitorTests.value(page, #"liveplay_stream_state{stream="headless",state="loading"}"#) == 1)
            #expect((MonitorTests.value(page, #"liveplay_received_bytes_total{stream="headless"}"#) ?? 0) > 0)
        }
    }
}
