import LivePlayLab
import LivePlayTesting
import Testing

/// End-to-end tests of the proxy in front of the live server, over loopback.
@Suite struct ImpairmentProxyTests {
    private func proxyConfiguration(
        upstream port: Int, downstream: [Toxic] = [], timeline: String? = nil
    ) throws -> ImpairmentProxy.Configuration {
        ImpairmentProxy.Configuration(
            upstreamPort: port, downstream: ToxicSet(downstream),
            timeline: try timeline.map { try ImpairmentTimeline.parse($0) } ?? ImpairmentTimeline(), threads: 1)
    }

    /// The longest silence between two reads, and how many bytes came after it.
    private func longestGap(_ recording: StreamRecorder.Recording) -> (Duration, bytesAfter: Int) {
        var longest = Duration.zero
        var bytesAfter = 0
        for (previous, next) in zip(recording.arrivals, recording.arrivals.dropFirst())
        where next.at - previous.at > longest {
            longest = next.at - previous.at
            bytesAfter = recording.bytes.count - next.offset
        }
        return (longest, bytesAfter)
    }

    @Test func passesBytesUnchanged() async throws {
        let path = try LabFixture.stream(seconds: 2, gop: 25)
        try await withServer(path) { _, serverPort in
            try await withProxy(try proxyConfiguration(upstream: serverPort)) { _, port in
                let direct = try await StreamRecorder.record(
                    port: serverPort, request: StreamRecorder.get("/file.flv"), duration: .seconds(5))
                let proxied = try await StreamRecorder.record(
                    port: port, request: StreamRecorder.get("/file.flv"), duration: .seconds(5))
                #expect(proxied.response?.isComplete == true)
                #expect(proxied.bytes.count == direct.bytes.count)
                #expect(proxied.bytes == direct.bytes)
            }
        }
    }

    @Test func slicerSplitsWritesAndKeepsBytes() async throws {
        let path = try LabFixture.stream(seconds: 1, gop: 12)
        try await withServer(path) { _, serverPort in
            let configuration = try proxyConfiguration(
                upstream: serverPort,
                downstream: [.slicer(averageSize: 200, sizeVariation: 150, delay: .milliseconds(1))])
            try await withProxy(configuration) { _, port in
                let direct = try await StreamRecorder.record(
                    port: serverPort, request: StreamRecorder.get("/file.flv"), duration: .seconds(5))
                let sliced = try await StreamRecorder.record(
                    port: port, request: StreamRecorder.get("/file.flv"), duration: .seconds(10))
                #expect(sliced.bytes == direct.bytes)
                #expect(sliced.arrivals.count > direct.bytes.count / 1000)
                let sizes = sliced.arrivals.map(\.count).sorted()
                #expect(sizes[sizes.count / 2] <= 350)
            }
        }
    }

    @Test func latencyDelaysTheResponse() async throws {
        let path = try LabFixture.stream(seconds: 1, gop: 12)
        try await withServer(path) { _, serverPort in
            let configuration = try proxyConfiguration(
                upstream: serverPort, downstream: [.latency(.milliseconds(300), jitter: .milliseconds(50))])
            try await withProxy(configuration) { _, port in
                let recording = try await StreamRecorder.record(
                    port: port, request: StreamRecorder.get("/file.flv"), duration: .seconds(5))
                let first = try #require(recording.arrivals.first)
                #expect(first.at >= .milliseconds(240))
                #expect(recording.response?.isComplete == true)
            }
        }
    }

    @Test func stallHoldsBytesThenResumes() async throws {
        let path = try LabFixture.stream(seconds: 2, gop: 25)
        try await withServer(path) { _, serverPort in
            let configuration = try proxyConfiguration(upstream: serverPort, timeline: "at=600ms stall=1.2s")
            try await withProxy(configuration) { _, port in
                let recording = try await StreamRecorder.record(
                    port: port, request: StreamRecorder.get("/live.flv?chunked=0"), duration: .milliseconds(2600))
                let (gap, bytesAfter) = longestGap(recording)
                #expect(gap >= .milliseconds(900) && gap <= .milliseconds(2000), "longest gap \(gap)")
                #expect(bytesAfter > 5000, "nothing came after the stall")
                #expect(!recording.closedByPeer)
                #expect(try demuxedBody(recording).warnings.isEmpty)
            }
        }
    }

    @Test func resetClosesTheConnection() async throws {
        let path = try LabFixture.stream(seconds: 2, gop: 25)
        try await withServer(path) { _, serverPort in
            let configuration = try proxyConfiguration(upstream: serverPort, timeline: "at=500ms reset")
            try await withProxy(configuration) { proxy, port in
                let recording = try await StreamRecorder.record(
                    port: port, request: StreamRecorder.get("/live.flv"), duration: .seconds(3))
                #expect(recording.bytes.count > 0)
                #expect(recording.closedByPeer)
                let closedAt = try #require(recording.closedAt)
                #expect(closedAt > .milliseconds(300) && closedAt < .milliseconds(1500))
                #expect(proxy.statistics.resets == 1)
            }
        }
    }

    @Test func downRefusesConnectionsThenRecovers() async throws {
        let path = try LabFixture.stream(seconds: 1, gop: 12)
        try await withServer(path) { _, serverPort in
            try await withProxy(try proxyConfiguration(upstream: serverPort)) { proxy, port in
                let clock = ContinuousClock()
                let start = clock.now
                proxy.down(for: .milliseconds(1500))
                let refused = try await StreamRecorder.record(
                    port: port, request: StreamRecorder.get("/file.flv"), duration: .seconds(1))
                // Accepted and reset at once: the connect itself may already report the reset.
                #expect(refused.bytes.isEmpty)
                #expect(refused.closedByPeer || refused.error?.contains("reset") == true, "\(refused)")
                #expect(proxy.statistics.refused >= 1)
                // Not a wait for a condition: the 1.5 s down period is the timer under test, and while down the
                // proxy accepts and resets, so only the clock says it is over; the next request must find it serving.
                try await clock.sleep(until: start + .milliseconds(1700))
                let recovered = try await StreamRecorder.record(
                    port: port, request: StreamRecorder.get("/file.flv"), duration: .seconds(5))
                #expect(recovered.response?.status == 200)
                #expect(recovered.response?.isComplete == true)
            }
        }
    }

    @Test func bandwidthCapLimitsThroughput() async throws {
        let path = try LabFixture.stream(seconds: 2, gop: 25)
        let size = try Fixtures.bytes(path).count
        let rate = size * 2 / 3  // about 1.5 s for the file
        try await withServer(path) { _, serverPort in
            let configuration = try proxyConfiguration(
                upstream: serverPort, downstream: [.bandwidth(bytesPerSecond: rate)])
            try await withProxy(configuration) { _, port in
                let recording = try await StreamRecorder.record(
                    port: port, request: StreamRecorder.get("/file.flv"), duration: .seconds(8))
                #expect(recording.response?.isComplete == true)
                let last = try #require(recording.arrivals.last)
                #expect(last.at > .milliseconds(1100) && last.at < .seconds(4), "took \(last.at)")
            }
        }
    }

    @Test func refusesNonLoopbackUpstream() async throws {
        let proxy = ImpairmentProxy(configuration: .init(upstreamHost: "192.0.2.1", upstreamPort: 80))
        let error = await #expect(throws: DemoError.self) { try await proxy.start() }
        #expect(error?.code == .notLoopback)
        await proxy.stop()
    }
}
