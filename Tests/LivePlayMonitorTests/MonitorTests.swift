import Foundation
@testable import LivePlay
import LivePlayLab
@testable import LivePlayMonitor
import LivePlayTesting
import Logging
import Prometheus
import Testing

/// A monitor in process against the stream lab: its metrics page as Prometheus's own parser reads it, counters
/// that only grow, a stream that goes down and is tried again, a probe.
@Suite(.serialized) struct MonitorTests {
    static var quiet: Logger {
        var logger = Logger(label: "lab")
        logger.logLevel = .critical
        return logger
    }

    /// `GET http://127.0.0.1:PORT/PATH` with curl: status and body.
    static func get(_ port: Int, _ path: String) throws -> (status: Int, body: String) {
        let output = try ExternalTool.run(
            "curl", ["-s", "--max-time", "30", "-w", "\n%{http_code}", "http://127.0.0.1:\(port)\(path)"])
        var lines = output.text.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.popLast() ?? "") ?? 0
        return (status, lines.joined(separator: "\n"))
    }

    /// Runs `body` with a metrics server of `monitor` listening on a free loopback port (given to it), stopped after.
    static func withMetricsServer(
        _ monitor: Monitor = Monitor(), probeAllowance: [ProbeAllowance] = [], _ body: @Sendable (Int) throws -> Void
    ) async throws {
        let bound = Locked<Int?>(nil)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await MetricsServer(host: "127.0.0.1", port: 0, monitor: monitor, probeAllowance: probeAllowance).run {
                    bound.set($0)
                }
            }
            defer { group.cancelAll() }
            _ = LoopbackPort.wait(timeout: .seconds(20)) { bound.get() != nil }
            try body(try #require(bound.get()))
        }
    }

    /// The value of the sample `name{labels}` on a metrics page (labels as written, in order).
    static func value(_ page: String, _ series: String) -> Double? {
        page.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    /// Every reconnect reason is on the page at 0 before anything happened: `increase()` over a series that
    /// appears with its first reconnect misses that reconnect.
    @Test func reconnectCountersAreOnThePageAtZeroFromTheStart() {
        let registry = PrometheusCollectorRegistry()
        _ = StreamMetrics(id: "news", registry: registry)
        let page = registry.emitToString()
        for reason in [
            "dns_failed", "connect_failed", "handshake_failed", "server_closed", "read_failed", "no_data", "too_slow",
            "http_status", "protocol_violation", "restart", "other",
        ] {
            #expect(Self.value(page, #"liveplay_reconnects_total{stream="news",reason="\#(reason)"}"#) == 0, "\(page)")
        }
        for counter in ["stalls", "stall_seconds", "received_bytes", "frames_shown", "frames_dropped"] {
            #expect(Self.value(page, #"liveplay_\#(counter)_total{stream="news"}"#) == 0, "\(counter)")
        }
    }

    /// Reconnects are counted by reason from the playback's typed state: what is new since its last state, once; a
    /// reason the page does not list goes to `other`; a new session counts from its own start.
    @Test func reconnectsAreCountedByReasonFromThePlaybackState() {
        let registry = PrometheusCollectorRegistry()
        let stream = StreamMetrics(id: "news", registry: registry)
        let count = { (reason: String) in
            Self.value(registry.emitToString(), #"liveplay_reconnects_total{stream="news",reason="\#(reason)"}"#) ?? -1
        }
        let closed = TransportErrorCode(rawValue: "server_closed"), odd = TransportErrorCode(rawValue: "gremlins")
        stream.reconnected([closed: 1])
        stream.reconnected([closed: 1])
        stream.reconnected([closed: 3, odd: 1])
        #expect(count("server_closed") == 3 && count("other") == 1)
        stream.sessionStarted()
        stream.reconnected([closed: 1])
        #expect(count("server_closed") == 4, "the new session's first")
    }

    /// A stream played from a LAS manifest has its rendition and its switches on the page, from its first net status
    /// that names a rendition; a stream played from its URL has neither; a new session's switches count on.
    @Test func aManifestsRenditionAndItsSwitchesAreOnThePage() {
        let registry = PrometheusCollectorRegistry()
        let (plain, las) = (StreamMetrics(id: "plain", registry: registry), StreamMetrics(id: "las", registry: registry))
        var status = NetStatus(
            elapsedMilliseconds: 5000, state: "playing", processCPU: 10, machineCPU: 20, videoWidth: 320,
            videoHeight: 240, netSpeedKbps: 700, netJitterMilliseconds: 12, videoFPS: 30, videoBitrateKbps: 600,
            audioBitrateKbps: 64, cacheMilliseconds: 1000, serverAddress: "127.0.0.1:8080", videoCacheFrames: 30,
            audioCacheMilliseconds: 1000, decodedCacheFrames: 2, avReceiveIntervalMilliseconds: 0,
            avPlayIntervalMilliseconds: 0, gopSeconds: 1, audioSampleRate: 44100, audioChannels: 1, videoCodec: "h264",
            audioCodec: "aac", latencyMilliseconds: 1000, endToEndLatencyMilliseconds: nil, target: .seconds(1),
            rate: 1, stutters: 0, stutterMilliseconds: 0, droppedFrames: 0, framesShown: 150, reconnects: 0,
            mode: "auto")
        plain.update(status, protocol: "http-flv")
        status.rendition = 2
        las.update(status, protocol: "http-flv")
        #expect(Self.value(registry.emitToString(), #"liveplay_rendition_switches_total{stream="las"}"#) == 0)
        status.rendition = 1
        status.renditionSwitches = 1
        las.update(status, protocol: "http-flv")
        las.update(status, protocol: "http-flv")
        las.sessionStarted()
        status.renditionSwitches = 2
        las.update(status, protocol: "http-flv")
        let page = registry.emitToString()
        #expect(Self.value(page, #"liveplay_rendition{stream="las"}"#) == 1, "\(page)")
        #expect(Self.value(page, #"liveplay_rendition_switches_total{stream="las"}"#) == 3)
        #expect(!page.contains(#"liveplay_rendition{stream="plain"}"#))
        #expect(!page.contains(#"liveplay_rendition_switches_total{stream="plain"}"#))
        las.unregister()
        #expect(!registry.emitToString().contains("liveplay_rendition"))
    }

    /// Start-up times go to one histogram for the whole monitor (a thousand streams' buckets were half the page),
    /// and each stream's last start to its own gauges, which appear with its first start.
    @Test func startUpTimesAreOneHistogramForAllStreamsAndAGaugePerStream() {
        let registry = PrometheusCollectorRegistry()
        let streams = ["news", "sport"].map { StreamMetrics(id: $0, registry: registry) }
        #expect(!registry.emitToString().contains("liveplay_last_first_frame_seconds{"), "no start made yet")
        for (stream, milliseconds) in zip(streams, [40, 900]) {
            var startup = StartupTimeline()
            startup.firstShown = .milliseconds(milliseconds)
            startup.connected = .milliseconds(5)
            stream.started(startup)
            startup.firstShown = .seconds(3)
            stream.started(startup)  // the same session's later states: counted once
        }
        let page = registry.emitToString()
        #expect(Self.value(page, #"liveplay_first_frame_seconds_count"#) == 2, "\(page)")
        #expect(Self.value(page, #"liveplay_first_frame_seconds_bucket{le="0.05"}"#) == 1)
        #expect(Self.value(page, #"liveplay_connect_seconds_count"#) == 2)
        #expect(!page.contains(#"liveplay_first_frame_seconds_bucket{stream="#), "no per-stream buckets")
        #expect(Self.value(page, #"liveplay_last_first_frame_seconds{stream="news"}"#) == 0.04)
        #expect(Self.value(page, #"liveplay_last_first_frame_seconds{stream="sport"}"#) == 0.9)
        #expect(Self.value(page, #"liveplay_last_connect_seconds{stream="sport"}"#) == 0.005)
        streams[0].unregister()
        let after = registry.emitToString()
        #expect(Self.value(after, #"liveplay_last_first_frame_seconds{stream="news"}"#) == nil)
        #expect(Self.value(after, #"liveplay_first_frame_seconds_count"#) == 2, "the fleet's histogram stays")
    }

    /// An audio-only stream has no picture: its info series leaves the video labels out rather than saying
    /// `video_codec=""`, `width="0"`.
    @Test func anAudioOnlyStreamsInfoLeavesOutWhatItDoesNotHave() async throws {
        let server = try LiveFLVServer(
            path: try Fixture.audioOnly.path(), configuration: .init(port: 0, threads: 1), logger: Self.quiet)
        let port = try await server.start()
        let monitor = Monitor()
        monitor.load([MonitoredStream(id: "radio", url: "http://127.0.0.1:\(port)/live.flv")])
        let expected = #"liveplay_stream_info{stream="radio",protocol="http-flv",audio_codec="aac"} 1"#
        // The start-up time comes from the playback's typed state (its first sound heard), not from an event's keys.
        let started = #"liveplay_last_first_frame_seconds{stream="radio"}"#
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await monitor.run() }
            _ = LoopbackPort.wait(timeout: .seconds(10)) {
                let page = monitor.registry.emitToString()
                return page.contains(expected) && page.contains(started)
            }
            group.cancelAll()
        }
        await server.stop()
        let page = monitor.registry.emitToString()
        #expect(page.contains(expected), "\(page)")
        #expect((Self.value(page, started) ?? 0) > 0, "\(page)")
        #expect(!page.contains(#"video_codec="""#) && !page.contains(#"width="0""#), "\(page)")
    }

    /// A probe that cannot be made is a 400 that says why, before anything plays.
    @Test func aProbeThatCannotBeMadeIsABadRequestThatSaysWhy() async throws {
        try await Self.withMetricsServer { port in
            let notANumber = try Self.get(port, "/probe?target=http://127.0.0.1:1/a.flv&seconds=abc")
            #expect(notANumber.status == 400, "\(notANumber)")
            #expect(notANumber.body.contains("seconds=abc is not a number"), "\(notANumber)")
            let ftp = try Self.get(port, "/probe?target=ftp://example.com/a.flv")
            #expect(ftp.status == 400 && ftp.body.contains("ftp:// URLs are not supported"), "\(ftp)")
            let port70000 = try Self.get(port, "/probe?target=http://example.com:70000/a.flv")
            #expect(port70000.status == 400 && port70000.body.contains("the port '70000'"), "\(port70000)")
            let tooLong = try Self.get(port, "/probe?target=http://127.0.0.1:1/a.flv&seconds=500")
            #expect(tooLong.status == 400 && tooLong.body.contains("at most 120"), "\(tooLong)")
        }
    }

    /// Another method on the metrics port is 405 with the methods it takes (a POST with a body, a DELETE), the body
    /// read and let go; another path is 404. Sent by curl, a client nobody here wrote.
    @Test func anotherMethodIs405WithAllowAndAnotherPathIs404() async throws {
        try await Self.withMetricsServer { port in
            for method in [["-X", "POST", "--data-binary", String(repeating: "x", count: 100_000)], ["-X", "DELETE"]] {
                let output = try ExternalTool.run(
                    "curl", ["-s", "-i", "--max-time", "30"] + method + ["http://127.0.0.1:\(port)/metrics"])
                let head = output.text.components(separatedBy: "\r\n\r\n").first ?? ""
                #expect(head.hasPrefix("HTTP/1.1 405"), "\(method[1]): \(head)")
                #expect(head.contains("Allow: GET, HEAD"), "\(method[1]): \(head)")
            }
            #expect(try Self.get(port, "/metrics/../etc/passwd").status == 404)
            #expect(try Self.get(port, "/metrics").status == 200, "the server serves on after them")
        }
    }

    /// `/probe` reaches out over the network and nowhere else: a local path or `file://` URL is refused unread, the
    /// same sentence whether the file exists or not (no file-existence oracle on the metrics port), and with
    /// `--probe-allow` a host outside the list is refused too.
    @Test func aProbeTakesOnlyNetworkURLsAndOnlyTheAllowedHosts() async throws {
        let allowed = [ProbeAllowance(parsing: "127.0.0.1:1"), ProbeAllowance(parsing: "[::1]")].compactMap { $0 }
        #expect(allowed.count == 2)
        #expect(ProbeAllowance(parsing: "host:99999") == nil && ProbeAllowance(parsing: "a/b") == nil)
        try await Self.withMetricsServer(probeAllowance: allowed) { port in
            var bodies: [String] = []
            for target in ["/etc/passwd", "/etc/nonexistent", "file:///etc/passwd", "file://localhost/etc/shadow"] {
                let reply = try Self.get(port, "/probe?target=\(target)&seconds=1")
                #expect(reply.status == 400, "\(target): \(reply)")
                #expect(reply.body.contains("a probe takes a network URL"), "\(target): \(reply)")
                bodies.append(reply.body)
            }
            #expect(Set(bodies).count == 1, "one answer whatever exists: \(bodies)")
            let outside = try Self.get(port, "/probe?target=rtmp://127.0.0.2/live/a&seconds=1")
            #expect(outside.status == 400 && outside.body.contains("127.0.0.2:1935 is not in --probe-allow"), "\(outside)")
            let otherPort = try Self.get(port, "/probe?target=http://127.0.0.1:2/a.flv&seconds=1")
            #expect(otherPort.status == 400, "the allowance names port 1: \(otherPort)")
            // An allowed host is probed (nothing listens on port 1 there: it fails, and says it never connected).
            let refused = try Self.get(port, "/probe?target=http://127.0.0.1:1/a.flv&seconds=1")
            #expect(refused.status == 200 && Self.value(refused.body, "liveplay_probe_success") == 0, "\(refused)")
        }
    }

    /// A probe that fails says why, and leaves the stream `down`, not `connecting`: a server that answers and then
    /// sends no media within the probe's seconds is a timeout before the first picture.
    @Test func aFailedProbeIsDownAndSaysWhy() async throws {
        let header: [UInt8] = Array("HTTP/1.1 200 OK\r\nContent-Type: video/x-flv\r\n\r\n".utf8)
            + [0x46, 0x4C, 0x56, 0x01, 0x05, 0, 0, 0, 9, 0, 0, 0, 0]
        let answersThenNothing = try MisbehavingServer(.script { peer in
            _ = try peer.read(1)
            try peer.write(header)
            peer.holdOpen()
        })
        defer { answersThenNothing.stop() }
        let silent = try MisbehavingServer(.silent)
        defer { silent.stop() }
        let cases = [
            (answersThenNothing.port, "timeout_before_first_picture"), (silent.port, "timeout_before_connecting"),
        ]
        for (port, reason) in cases {
            let page = await Probe.run(
                "http://127.0.0.1:\(port)/live.flv", for: .milliseconds(1500),
                configuration: LivePlayConfiguration(decodes: false))
            #expect(Self.value(page, "liveplay_probe_success") == 0, "\(page)")
            #expect(Self.value(page, #"liveplay_probe_failure{reason="\#(reason)"}"#) == 1, "\(page)")
            #expect(Self.value(page, #"liveplay_stream_state{stream="probe",state="down"}"#) == 1, "\(page)")
            #expect(Self.value(page, #"liveplay_stream_state{stream="probe",state="connecting"}"#) == 0, "\(page)")
        }
    }

    @Test func theMetricsPageLintsCleanCountsUpAndReportsAStreamDown() async throws {
        let server = try LiveFLVServer(path: try Fixture.longH264AAC.path(), configuration: .init(port: 0, threads: 1), logger: Self.quiet)
        let port = try await server.start()
        let dead = try LoopbackPort.free()
        var configuration = LivePlayConfiguration(connectRetryCount: 1, connectRetryInterval: .milliseconds(300), decodes: false)
        configuration.transport.connectTimeout = .seconds(1)
        let monitor = Monitor(
            options: MonitorOptions(configuration: configuration, initialBackoff: .milliseconds(500), maximumBackoff: .seconds(1)))
        monitor.load([
            MonitoredStream(id: "lab", url: "http://127.0.0.1:\(port)/live.flv?token=s3cret"),
            MonitoredStream(id: "dead", url: "http://127.0.0.1:\(dead)/live.flv"),
        ])
        let bound = Locked<Int?>(nil)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await monitor.run() }
            group.addTask {
                try await MetricsServer(host: "127.0.0.1", port: 0, monitor: monitor).run { bound.set($0) }
            }
            defer { group.cancelAll() }
            _ = LoopbackPort.wait(timeout: .seconds(20)) { bound.get() != nil }
            let metricsPort = try #require(bound.get())
            // Until the lab plays with its codecs known (a page polled, not a fixed wait).
            var first = (status: 0, body: "")
            let labUp = try await eventually {
                first = try Self.get(metricsPort, "/metrics")
                return Self.value(first.body, #"liveplay_up{stream="lab"}"#) == 1
                    && first.body.contains(#"liveplay_stream_info{stream="lab""#)
            }
            #expect(labUp, "the lab plays")
            #expect(first.status == 200)
            #expect(Self.value(first.body, #"liveplay_up{stream="lab"}"#) == 1, "\(first.body)")
            #expect(Self.value(first.body, #"liveplay_stream_state{stream="dead",state="down"}"#) == 1
                || Self.value(first.body, #"liveplay_stream_state{stream="dead",state="connecting"}"#) == 1)
            #expect(first.body.contains(#"liveplay_stream_info{stream="lab",protocol="http-flv",video_codec="h264",audio_codec="aac",width="320",height="240"} 1"#), "\(first.body)")
            #expect(!first.body.contains("s3cret"), "no URL, no token in a label")
            // Prometheus's own parser and linter.
            let lint = try ExternalTool.run("promtool", ["check", "metrics"], input: Data(first.body.utf8))
            #expect(lint.status == 0 && lint.text.isEmpty && lint.standardError.isEmpty, "\(lint.text)\(lint.standardError)")
            // Until the lab has received more and the dead stream has been restarted at least once.
            var second = ""
            let counted = try await eventually {
                second = try Self.get(metricsPort, "/metrics").body
                let received = Self.value(second, #"liveplay_received_bytes_total{stream="lab"}"#) ?? 0
                let restarts = Self.value(second, #"liveplay_reconnects_total{stream="dead",reason="restart"}"#) ?? 0
                return received > (Self.value(first.body, #"liveplay_received_bytes_total{stream="lab"}"#) ?? 0)
                    && restarts >= 1
            }
            #expect(counted, "\(second)")
            let bytes = [first.body, second].map { Self.value($0, #"liveplay_received_bytes_total{stream="lab"}"#) ?? 0 }
            #expect(bytes[0] > 0 && bytes[1] > bytes[0], "received bytes grow: \(bytes)")
            // The dead stream is tried again and again: restarts counted, never dropped from the page.
            let restarts = Self.value(second, #"liveplay_reconnects_total{stream="dead",reason="restart"}"#) ?? 0
            #expect(restarts >= 1, "\(second)")
            #expect(Self.value(second, #"liveplay_monitor_streams"#) == 2)
            #expect(try Self.get(metricsPort, "/healthz") == (200, "ok\n"))
            #expect(try Self.get(metricsPort, "/nowhere").status == 404)
            // blackbox-style: a probe of the lab for 2 s, and of the dead port.
            let probe = try Self.get(metricsPort, "/probe?target=http://127.0.0.1:\(port)/live.flv&seconds=2")
            #expect(probe.status == 200 && Self.value(probe.body, "liveplay_probe_success") == 1, "\(probe.body)")
            let failed = try Self.get(metricsPort, "/probe?target=http://127.0.0.1:\(dead)/live.flv&seconds=1")
            #expect(Self.value(failed.body, "liveplay_probe_success") == 0, "\(failed.body)")
            #expect(try Self.get(metricsPort, "/probe?target=ftp://x&seconds=1").status == 400)
            // The lab stops: its stream goes down, and its counters stay.
            await server.stop()
            var third = ""
            let down = try await eventually {
                third = try Self.get(metricsPort, "/metrics").body
                return Self.value(third, #"liveplay_up{stream="lab"}"#) == 0
            }
            #expect(down, "the lab goes down")
            #expect(Self.value(third, #"liveplay_up{stream="lab"}"#) == 0, "\(third)")
            #expect((Self.value(third, #"liveplay_received_bytes_total{stream="lab"}"#) ?? 0) >= bytes[1])
            // The list loses a stream: its series leave the page.
            monitor.load([MonitoredStream(id: "lab", url: "http://127.0.0.1:\(port)/live.flv")])
            var fourth = ""
            let left = try await eventually {
                fourth = try Self.get(metricsPort, "/metrics").body
                return !fourth.contains(#"stream="dead""#)
            }
            #expect(left, "the dead stream's series leave the page")
            #expect(!fourth.contains(#"stream="dead""#), "\(fourth)")
        }
    }
}
