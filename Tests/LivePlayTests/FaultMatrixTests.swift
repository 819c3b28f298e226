import Foundation
import LivePlay
import LivePlayLab
import LivePlayTesting
import Synchronization
import Testing

/// The fault matrix (issue 7): every network and stream fault the player must survive, over each transport
/// it applies to, as one case each against real servers on loopback.
///
/// A case plays a real session, injects its fault at a known moment (after playback began, for faults
/// that strike mid-stream), and checks the documented event sequence (docs/event-log.md), a bounded
/// detection time (injection → first event reporting it), and this process's peak RSS. Its figures go
/// to one JSON line (``FaultReport``) whether it passed or not; `Tests/fault-table` prints the latest
/// line per case as a table. The checks are computed first, then the line is written, then each check
/// is expected, so a failing case still reports.
///
/// Servers: the lab's `LiveFLVServer` behind the `ImpairmentProxy` (HTTP-FLV), nginx-rtmp with ffmpeg
/// publishing, behind the same proxy (RTMP), `MisbehavingServer` for broken handshakes, and ``FeedServer``
/// for streams whose content is the fault (tags built from fixtures, served live over HTTP-FLV or RTMP).
@Suite(.serialized) struct FaultMatrixTests {
    /// The stated bound on this process's resident memory during any case.
    static let memoryBoundMiB = 512.0

    static let reportPath = FaultReport.path(
        packageRoot: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path)

    @Test(arguments: FaultMatrix.cases)
    func faultIsReportedAndSurvived(_ fault: FaultCase) async throws {
        let environment = ProcessInfo.processInfo.environment
        if let only = environment["LIVEPLAY_FAULTS"], !only.split(separator: ",").contains(Substring(fault.fault)) {
            return
        }
        let started = ContinuousClock.now
        let sampler = RSSSampler()
        var result: CaseResult
        var setupError: (any Error)?
        do {
            result = try await fault.run()
        } catch {
            setupError = error
            result = CaseResult()
            result.note = "set-up failed: \(error)"
        }
        let (peak, samples) = sampler.stop()
        let peakMiB = Double(peak) / Double(1 << 20)
        if result.skipped == nil {
            result.check(samples > 0 && peakMiB > 0, "RSS was sampled during the case")
            // Under a sanitizer the process's RSS is its shadow memory; the figure is still reported.
            if !LivePlayTesting.isSanitized {
                result.check(
                    peakMiB < Self.memoryBoundMiB, "peak RSS \(Int(peakMiB)) MiB < \(Int(Self.memoryBoundMiB)) MiB")
            }
        }
        let passed = setupError == nil && result.skipped == nil && result.checks.allSatisfy(\.holds)
        let line = FaultReport(
            fault: fault.fault, transport: fault.transport.rawValue, pass: passed, events: result.events,
            detectionMilliseconds: result.detection, peakRSSMiB: peakMiB,
            note: result.skipped.map { "not run: \($0)" } ?? result.note)
        try line.append(to: Self.reportPath)
        let seconds = started.duration(to: .now) / .seconds(1)
        print("fault matrix: \(fault) \(passed ? "passed" : "FAILED") in \(String(format: "%.1f", seconds)) s")
        if let setupError { throw setupError }
        if let reason = result.skipped {
            if environment["CI"] == "true" { Issue.record("\(fault) cannot run under CI: \(reason)") }
            return
        }
        if environment["LIVEPLAY_FAULT_TRACE"] != nil {
            for event in result.events {
                let code = event.code.rawValue
                print("\(fault) \(event.elapsedMilliseconds) \(code) \(event.message) \(event.parameters)")
            }
        }
        let events = FaultReport.summary(result.events)
        for check in result.checks {
            let holds = check.holds
            #expect(holds, "\(fault): \(check.label) — events \(events)")
        }
    }
}

// MARK: - The matrix

/// Which transport a case plays over.
enum FaultTransport: String, Sendable {
    case httpFLV = "http-flv"
    case rtmp
}

/// One row of the matrix: a fault over one transport, and how to run it.
struct FaultCase: Sendable, CustomTestStringConvertible, CustomStringConvertible {
    var fault: String
    var transport: FaultTransport
    var run: @Sendable () async throws -> CaseResult

    var testDescription: String { "\(fault) over \(transport.rawValue)" }
    var description: String { testDescription }
}

/// What a case found: the events, its checks (computed, not yet expected), and its figures.
struct CaseResult: Sendable {
    struct Check: Sendable {
        var label: String
        var holds: Bool
    }

    var events: [PlayEvent] = []
    var checks: [Check] = []
    /// Fault injected → first event reporting it, ms; `nil` for faults the player should ride out silently.
    var detection: Int64?
    var note: String?
    /// Why the case could not run here (a missing server or privilege); a failure under CI.
    var skipped: String?

    init(_ events: [PlayEvent] = []) {
        self.events = events
    }

    static func skipped(_ reason: String) -> CaseResult {
        var result = CaseResult()
        result.skipped = reason
        return result
    }

    mutating func check(_ holds: Bool, _ label: String) {
        checks.append(Check(label: label, holds: holds))
    }

    /// Playback came back on a new connection after `injected`, and the session did not give up.
    mutating func checkRecovered(_ recording: SessionRecording, after injected: Int64?) {
        check(recording.resumed(after: injected), "playback resumes on a new connection")
        check(!recording.events.after(injected ?? 0).map(\.code.rawValue).contains(-2301), "no -2301")
    }

    /// Sets ``detection`` to the first of `codes` at or after `injected` (ms since the session started) and
    /// checks it against `bound`; `nil` injection (the fault never struck) fails the check.
    mutating func detect(
        _ codes: Set<Int>, injectedAt injected: Int64?, within bound: ClosedRange<Int64>, _ label: String
    ) {
        guard let injected else {
            check(false, "the fault was injected")
            return
        }
        let report = events.first(codes, from: injected)
        // Not below 0: the fault clock starts a few ms before the session's clock.
        detection = report.map { max(0, $0.elapsedMilliseconds - injected) }
        let was = detection.map(String.init) ?? "never"
        check(detection.map(bound.contains) ?? false, "\(label): detected in \(bound) ms (was \(was))")
    }
}

enum FaultMatrix {
    static let cases: [FaultCase] = {
        let both: [FaultTransport] = [.httpFLV, .rtmp]
        let faults: [(String, [FaultTransport], @Sendable (FaultTransport) async throws -> CaseResult)] = [
            ("refused", both, ConnectFaults.refused),
            ("dns-failure", both, ConnectFaults.dnsFailure),
            ("syn-unanswered", both, ConnectFaults.synUnanswered),
            ("handshake-garbage", both, ConnectFaults.handshakeGarbage),
            ("handshake-trickle", both, ConnectFaults.handshakeTrickle),
            ("server-restart", both, NetworkFaults.serverRestart),
            ("stall", both, NetworkFaults.stall),
            ("stall-then-close", both, NetworkFaults.stallThenClose),
            ("truncated-tag", both, StreamFaults.truncatedTag),
            ("bandwidth-below-bitrate", both, NetworkFaults.bandwidthBelowBitrate),
            ("byte-trickle", both, NetworkFaults.byteTrickle),
            ("latency-jitter", both, NetworkFaults.latencyAndJitter),
            ("tiny-segments", both, NetworkFaults.tinySegments),
            ("resolution-change", both, StreamFaults.resolutionChange),
            ("codec-change", both, StreamFaults.codecChange),
            ("timestamp-jump-forward", both, StreamFaults.timestampJumpForward),
            ("timestamp-jump-backward", both, StreamFaults.timestampJumpBackward),
            ("timestamp-wrap", both, StreamFaults.timestampWrap),
            ("amf-bomb", both, StreamFaults.amfBomb),
            ("oversize-tag", both, StreamFaults.oversizeTag),
            ("zero-length-tags", both, StreamFaults.zeroLengthTags),
            ("truncated-configs", both, StreamFaults.truncatedConfigurations),
            ("publisher-frozen", [.rtmp], NetworkFaults.publisherFrozen),
        ]
        return faults.flatMap { name, transports, run in
            transports.map { transport in FaultCase(fault: name, transport: transport) { try await run(transport) } }
        }
    }()

    /// Short deadlines and quick retries, so a case takes seconds; bounds below are generous multiples.
    static func configuration(
        retries: Int = 3, noData: Duration = .seconds(1), handshake: Duration = .seconds(2)
    ) -> LivePlayConfiguration {
        LivePlayConfiguration(
            connectRetryCount: retries, connectRetryInterval: .milliseconds(200),
            transport: TransportOptions(
                resolveTimeout: .seconds(2), connectTimeout: .seconds(1), handshakeTimeout: handshake,
                noDataTimeout: noData))
    }

    static func url(_ transport: FaultTransport, port: Int, stream: String = "fault") -> String {
        switch transport {
        case .httpFLV: "http://127.0.0.1:\(port)/live.flv"
        case .rtmp: "rtmp://127.0.0.1:\(port)/live/\(stream)"
        }
    }
}

// MARK: - Faults before any media: connect and handshake

enum ConnectFaults {
    @Sendable static func refused(_ transport: FaultTransport) async throws -> CaseResult {
        let port = Int(try LoopbackPort.free())
        let recording = await SessionRecording.record(
            FaultMatrix.url(transport, port: port), configuration: FaultMatrix.configuration(retries: 1))
        var result = CaseResult(recording.events)
        result.check(recording.codes == [3002, 2103, 3002, -2301], "3002, a retry, 3002 again, then -2301")
        result.check(recording.outcome == .failed(.networkDisconnected), "the session ends in -2301")
        result.detect([3002], injectedAt: 0, within: 0...1000, "refused")
        return result
    }

    /// The player in a network namespace of its own with no interface up: the resolver cannot reach any
    /// server, so the lookup fails on this machine and no query is ever sent (as PlayCommandTests does).
    @Sendable static func dnsFailure(_ transport: FaultTransport) async throws -> CaseResult {
        guard getuid() == 0, let unshare = ExternalTool.find("unshare") else {
            return .skipped("needs root and unshare for a network namespace without interfaces")
        }
        let url =
            transport == .httpFLV ? "http://nonexistent.invalid/live.flv" : "rtmp://nonexistent.invalid/live/stream"
        let output = try ExternalTool.run(
            unshare, ["-n", PlayerBinary.path, url, "--json", "--retries", "1", "--retry-interval", "0.2"])
        let events = try PlayerBinary.events(output)
        var result = CaseResult(events)
        result.note = "the CLI in `unshare -n`: no DNS query can leave"
        let codes = events.map(\.code.rawValue).filter { $0 != 9006 }
        result.check(codes == [3001, 2103, 3001, -2301], "3001, a retry, 3001 again, then -2301")
        result.check(output.status == 69, "exit status 69 (unavailable), not a crash: \(output.status)")
        result.detect([3001], injectedAt: 0, within: 0...5000, "unresolvable host")
        return result
    }

    /// A listening socket whose accept queue is full, so SYNs go unanswered: the connect deadline (1 s).
    @Sendable static func synUnanswered(_ transport: FaultTransport) async throws -> CaseResult {
        let server = try MisbehavingServer(.unreachable)
        defer { server.stop() }
        let recording = await SessionRecording.record(
            FaultMatrix.url(transport, port: Int(server.port)), configuration: FaultMatrix.configuration(retries: 0))
        var result = CaseResult(recording.events)
        result.check(recording.codes == [3002, -2301], "3002 at the connect deadline, then -2301")
        result.detect([3002], injectedAt: 0, within: 800...3000, "unanswered SYN")
        return result
    }

    /// Bytes that are neither an RTMP handshake nor an HTTP response (over HTTP, sent once the request has
    /// come: garbage sent before it is sometimes taken for silence, a read timeout, instead).
    @Sendable static func handshakeGarbage(_ transport: FaultTransport) async throws -> CaseResult {
        let garbage = [UInt8](repeating: 0x5A, count: 4096)
        let server: MisbehavingServer
        switch transport {
        case .rtmp:
            server = try MisbehavingServer(.garbage(garbage))
        case .httpFLV:
            server = try MisbehavingServer(
                .script { peer in
                    try FeedServer.readRequestHead(peer)
                    try peer.write(garbage)
                    peer.holdOpen()
                })
        }
        defer { server.stop() }
        let recording = await SessionRecording.record(
            FaultMatrix.url(transport, port: Int(server.port)), configuration: FaultMatrix.configuration(retries: 1))
        var result = CaseResult(recording.events)
        switch transport {
        case .rtmp:
            // TCP connects (2001), then the handshake fails (3003), on each attempt.
            result.check(recording.codes == [2001, 3003, 2103, 2001, 3003, -2301], "2001 3003, retried, then -2301")
        case .httpFLV:
            // docs/event-log.md: the server broke the protocol before the stream began.
            result.check(recording.codes == [3003, 2103, 3003, -2301], "3003, retried, then -2301")
        }
        result.detect([3003], injectedAt: 0, within: 0...2500, "garbage")
        return result
    }

    /// A server that sends a byte at a time and never completes the handshake (RTMP) or the response head
    /// (HTTP): the handshake deadline (2 s) passes, though bytes keep coming (so not the 1 s read timeout).
    @Sendable static func handshakeTrickle(_ transport: FaultTransport) async throws -> CaseResult {
        let server: MisbehavingServer
        switch transport {
        case .rtmp:
            server = try MisbehavingServer(.trickle(interval: .milliseconds(300)))
        case .httpFLV:
            let head = Array("HTTP/1.1 200 OK\r\nContent-Type: video/x-flv\r\nServer: trickle\r\n\r\n".utf8)
            server = try MisbehavingServer(
                .script { peer in
                    try FeedServer.readRequestHead(peer)
                    try peer.trickle(every: .milliseconds(300)) { index in index < head.count ? [head[index]] : nil }
                })
        }
        defer { server.stop() }
        let recording = await SessionRecording.record(
            FaultMatrix.url(transport, port: Int(server.port)), configuration: FaultMatrix.configuration(retries: 0))
        var result = CaseResult(recording.events)
        let expected = transport == .rtmp ? [2001, 3003, -2301] : [3003, -2301]
        result.check(recording.codes == expected, "the handshake deadline passes: \(expected)")
        result.detect([3003], injectedAt: 0, within: 1800...4000, "trickled handshake")
        return result
    }
}

// MARK: - Faults of the network and the servers, mid-stream

enum NetworkFaults {
    /// HTTP: the lab's server is stopped and started again on the same port. RTMP: nginx is killed (with
    /// the proxy in front, so its address goes away too) and a new nginx, publisher and proxy come up on
    /// the same address.
    @Sendable static func serverRestart(_ transport: FaultTransport) async throws -> CaseResult {
        let clock = FaultClock()
        let failures = Locked<[String]>([])
        let recording: SessionRecording
        var cleanup: [@Sendable () async -> Void] = []
        switch transport {
        case .httpFLV:
            let (first, port) = try await LabSessionTests.server()
            let replacement = Locked<LiveFLVServer?>(nil)
            clock.startSession()
            recording = await SessionRecording.record(
                FaultMatrix.url(.httpFLV, port: port), configuration: FaultMatrix.configuration(retries: 5),
                limit: .seconds(15),
                script: { probe in
                    await probe.wait(for: .playBegin)
                    clock.mark()
                    await first.stop()
                    await probe.wait(for: .reconnect)
                    do {
                        replacement.set(try await LabSessionTests.server(port: port).0)
                    } catch {
                        failures.set(failures.get() + ["restart: \(error)"])
                    }
                    await probe.waitUntilPlayingAgain(clock)
                    probe.stop()
                })
            cleanup.append { await first.stop() }
            if let server = replacement.get() { cleanup.append { await server.stop() } }
        case .rtmp:
            guard let stream = try await PublishedStream.start() else { return .skipped(PublishedStream.missing) }
            let (proxy, port) = try await Proxy.start(upstream: stream.port)
            let replacement = Locked<(PublishedStream, ImpairmentProxy)?>(nil)
            clock.startSession()
            recording = await SessionRecording.record(
                stream.url(port: port), configuration: FaultMatrix.configuration(retries: 10), limit: .seconds(20),
                script: { probe in
                    await probe.wait(for: .playBegin, timeout: .seconds(10))
                    clock.mark()
                    stream.server.kill()
                    await proxy.stop()
                    await probe.wait(for: .reconnect)
                    do {
                        guard let next = try await PublishedStream.start(name: stream.name) else { return }
                        let (nextProxy, _) = try await Proxy.start(upstream: next.port, listen: port)
                        replacement.set((next, nextProxy))
                    } catch {
                        failures.set(failures.get() + ["restart: \(error)"])
                    }
                    await probe.waitUntilPlayingAgain(clock)
                    probe.stop()
                })
            cleanup.append {
                await proxy.stop()
                stream.stop()
            }
            if let (next, nextProxy) = replacement.get() {
                cleanup.append {
                    await nextProxy.stop()
                    next.stop()
                }
            }
        }
        for step in cleanup { await step() }
        var result = CaseResult(recording.events)
        result.check(failures.get().isEmpty, "the server came back: \(failures.get())")
        let injected = clock.mark(0)
        result.check(recording.playedBefore(injected), "playing before the server went away")
        let after = recording.events.codes(from: injected ?? 0)
        result.detect([3004, 3005], injectedAt: injected, within: 0...2000, "server gone")
        result.check(after.contains(2103), "a reconnect (2103)")
        result.check(recording.resumed(after: injected), "media again on a new connection and playing after it")
        result.check(!after.contains(-2301) && !after.contains(2006), "neither -2301 nor an end (2006)")
        return result
    }

    /// The proxy passes nothing while the TCP connection stays open, longer than the read timeout (1 s).
    @Sendable static func stall(_ transport: FaultTransport) async throws -> CaseResult {
        guard
            let (recording, clock) = try await ProxiedStream.play(
                transport, configuration: FaultMatrix.configuration(retries: 5),
                fault: { stream, probe, clock in
                    stream.proxy.set(.stall(.seconds(30)))
                    await probe.wait(for: .reconnect)
                    stream.proxy.clear(.stall)
                    await probe.waitUntilPlayingAgain(clock)
                    probe.stop()
                })
        else { return .skipped(PublishedStream.missing) }
        var result = CaseResult(recording.events)
        let injected = clock.mark(0)
        result.check(recording.playedBefore(injected), "playing before the stall")
        let after = recording.events.after(injected ?? 0)
        result.detect([2104], injectedAt: injected, within: 0...2500, "stall")
        result.check(
            after.first { $0.code == .receiveDataLag }?.reason == "arrival_gap", "first the arrival gap (2104)")
        result.check(
            after.contains { $0.code == .receiveDataLag && $0.reason == "no_data" },
            "then the read timeout (2104 no_data)")
        result.check(after.first { $0.code == .reconnect }?.reason == "no_data", "a reconnect for no_data (2103)")
        result.check(after.map(\.code.rawValue).contains(2007), "the buffer ran dry (2007)")
        result.check(
            recording.stutterBeforeResuming(after: injected), "2105 just before the 2004 that resumes playback")
        result.checkRecovered(recording, after: injected)
        return result
    }

    /// A stall shorter than the read timeout (3 s here), ended by the connection being reset.
    @Sendable static func stallThenClose(_ transport: FaultTransport) async throws -> CaseResult {
        guard
            let (recording, clock) = try await ProxiedStream.play(
                transport, configuration: FaultMatrix.configuration(retries: 5, noData: .seconds(3)),
                fault: { stream, probe, clock in
                    stream.proxy.set(.stall(.seconds(30)))
                    await probe.wait(timeout: .seconds(5)) {
                        $0.after(clock.mark(0) ?? 0).contains { $0.code == .receiveDataLag }
                    }
                    clock.mark()
                    stream.proxy.reset()
                    stream.proxy.clear(.stall)
                    await probe.waitUntilPlayingAgain(clock)
                    probe.stop()
                })
        else { return .skipped(PublishedStream.missing) }
        var result = CaseResult(recording.events)
        let (injected, closed) = (clock.mark(0), clock.mark(1))
        result.check(recording.playedBefore(injected), "playing before the stall")
        result.detect([2104], injectedAt: injected, within: 0...2500, "stall")
        let afterClose = recording.events.after(closed ?? 0)
        let lost = afterClose.first { [3004, 3005].contains($0.code.rawValue) }
        let closeDetection = lost.map { max(0, $0.elapsedMilliseconds - (closed ?? 0)) }
        result.note = "close detected in \(closeDetection.map(String.init) ?? "-") ms"
        result.check(
            closeDetection.map { (0...1000).contains($0) } ?? false, "the reset is reported (3004/3005) within 1 s")
        result.check(!recording.events.contains { $0.reason == "no_data" }, "the close, not the read timeout, ended it")
        result.checkRecovered(recording, after: closed)
        return result
    }

    /// A link at a third of the stream's bitrate: lag warnings, and no disconnect.
    @Sendable static func bandwidthBelowBitrate(_ transport: FaultTransport) async throws -> CaseResult {
        var configuration = FaultMatrix.configuration(retries: 3, noData: .seconds(3))
        configuration.lagWindow = .seconds(1)
        guard
            let (recording, clock) = try await ProxiedStream.play(
                transport, configuration: configuration,
                fault: { stream, probe, clock in
                    // The fixture is about 48 KB/s of media.
                    stream.proxy.set(.bandwidth(bytesPerSecond: 16_000))
                    await probe.wait(timeout: .seconds(6)) { $0.after(clock.mark(0) ?? 0).contains { $0.isGoodputLag } }
                    // Half a second more on the slow link: the case checks that no disconnect follows the warning.
                    try? await Task.sleep(for: .milliseconds(500))
                    probe.stop()
                })
        else { return .skipped(PublishedStream.missing) }
        var result = CaseResult(recording.events)
        let injected = clock.mark(0)
        result.check(recording.playedBefore(injected), "playing before the link slowed")
        let after = recording.events.after(injected ?? 0)
        result.detect([2104], injectedAt: injected, within: 0...4000, "slow link")
        let lag = after.first { $0.isGoodputLag }
        result.check(lag != nil, "2104 with the goodput below 0.8 of real time")
        if case .double(let goodput)? = lag?.parameters["goodput"] {
            result.note = "goodput \(String(format: "%.2f", goodput)) of real time"
            result.check(goodput < 0.8, "reported goodput \(goodput) < 0.8")
        }
        result.check(!after.map(\.code.rawValue).contains(-2301), "no -2301")
        return result
    }

    /// One byte every 20 ms (50 B/s) mid-stream: bytes keep coming, so not a read timeout, but far below
    /// real time: too slow, a reconnect, and playback again once the link is whole.
    @Sendable static func byteTrickle(_ transport: FaultTransport) async throws -> CaseResult {
        var configuration = FaultMatrix.configuration(retries: 5, noData: .seconds(3))
        configuration.lagWindow = .seconds(1)
        configuration.transport.minimumGoodput = 0.3
        configuration.transport.goodputWindow = .seconds(1)
        guard
            let (recording, clock) = try await ProxiedStream.play(
                transport, configuration: configuration,
                fault: { stream, probe, clock in
                    stream.proxy.set(.slicer(averageSize: 1, delay: .milliseconds(20)))
                    await probe.wait(for: .reconnect)
                    stream.proxy.clear(.slicer)
                    await probe.waitUntilPlayingAgain(clock)
                    probe.stop()
                })
        else { return .skipped(PublishedStream.missing) }
        var result = CaseResult(recording.events)
        let injected = clock.mark(0)
        result.check(recording.playedBefore(injected), "playing before the trickle")
        let after = recording.events.after(injected ?? 0)
        result.detect([2104], injectedAt: injected, within: 0...4000, "trickle")
        result.check(after.first { $0.code == .reconnect }?.reason == "too_slow", "a reconnect for too_slow (2103)")
        result.check(!after.contains { $0.reason == "no_data" }, "bytes kept coming: never a read timeout")
        result.checkRecovered(recording, after: injected)
        return result
    }

    /// 200 ms ± 100 ms of added latency: the player keeps playing, nothing is lost.
    @Sendable static func latencyAndJitter(_ transport: FaultTransport) async throws -> CaseResult {
        guard
            let (recording, clock) = try await ProxiedStream.play(
                transport, configuration: FaultMatrix.configuration(retries: 3, noData: .seconds(2)),
                fault: { stream, probe, clock in
                    stream.proxy.set(.latency(.milliseconds(200), jitter: .milliseconds(100)))
                    await probe.wait(timeout: .seconds(6)) {
                        $0.after(clock.mark(0) ?? 0).filter { $0.code == .playProgress }.count >= 3
                    }
                    probe.stop()
                })
        else { return .skipped(PublishedStream.missing) }
        var result = CaseResult(recording.events)
        let injected = clock.mark(0)
        result.check(recording.playedBefore(injected), "playing before the latency was added")
        let after = recording.events.after(injected ?? 0)
        result.check(after.filter { $0.code == .playProgress }.count >= 3, "still playing: 3 progress events after")
        let lost = after.map(\.code.rawValue).filter { [2103, 3004, 3005, -2301, 2007].contains($0) }
        result.check(lost.isEmpty, "no loss, reconnect or loading: \(lost)")
        return result
    }

    /// Every byte in segments of 1 to 7 bytes: the decoded pictures are those of an unsliced run, bit for
    /// bit (and those ffmpeg decodes from the fixture). HTTP plays the finished file, so both runs show the
    /// same pictures; RTMP plays nginx live, both runs at once, so their pictures are compared as sets.
    @Sendable static func tinySegments(_ transport: FaultTransport) async throws -> CaseResult {
        let reference = Set(try Oracle.frameHashes(try Fixture.h264AAC.path(), video: true).map(\.md5))
        let direct: ProxiedStream
        switch transport {
        case .httpFLV: direct = try await ProxiedStream.startLab(path: "/file.flv")
        case .rtmp:
            guard let stream = try await ProxiedStream.start(.rtmp) else { return .skipped(PublishedStream.missing) }
            direct = stream
        }
        // 1–7 bytes a segment; under a sanitizer, whose instrumentation makes per-segment work slower than
        // real time, 32–96 (still every tag header split, still far below a TCP segment's usual size).
        let slicer: Toxic =
            LivePlayTesting.isSanitized
            ? .slicer(averageSize: 64, sizeVariation: 32) : .slicer(averageSize: 4, sizeVariation: 3)
        let (sliced, slicedPort) = try await Proxy.start(upstream: direct.upstreamPort, toxics: [slicer])
        let slicedURL = direct.url.replacingOccurrences(of: ":\(direct.port)/", with: ":\(slicedPort)/")
        let configuration = FaultMatrix.configuration(retries: 0, noData: .seconds(3))
        // The finished file ends by itself; the live stream is stopped 4 s after its first picture, however long
        // the start took on a loaded machine (a stop at 4 s from the start left 2 s of pictures, or fewer).
        let stopWhen: @Sendable () -> @Sendable (PlayEvent) -> Bool = {
            let played = PlayedFor(milliseconds: 4000)
            return { transport == .rtmp && played.reached($0) }
        }
        let (plainSink, slicedSink) = (RecordingSink(hashesPictures: true), RecordingSink(hashesPictures: true))
        async let plainRun = SessionRecording.record(
            direct.url, configuration: configuration, limit: .seconds(12), sink: plainSink, stopWhen: stopWhen())
        async let slicedRun = SessionRecording.record(
            slicedURL, configuration: configuration, limit: .seconds(12), sink: slicedSink, stopWhen: stopWhen())
        let (plain, slicedRecording) = await (plainRun, slicedRun)
        await sliced.stop()
        await direct.stop()
        var result = CaseResult(slicedRecording.events)
        let hashes = { (sink: RecordingSink) -> [(Int64, String)] in
            sink.pictures.compactMap { picture in picture.md5.map { (picture.timing.pts.milliseconds, $0) } }
        }
        let (plainHashes, slicedHashes) = (hashes(plainSink), hashes(slicedSink))
        result.note = "\(slicedHashes.count) pictures sliced, \(plainHashes.count) unsliced"
        result.check(slicedHashes.count >= 50 && plainHashes.count >= 50, "at least 2 s of pictures in each run")
        result.check(
            slicedHashes.allSatisfy { reference.contains($0.1) }, "every sliced picture is one ffmpeg decodes")
        result.check(
            plainHashes.allSatisfy { reference.contains($0.1) }, "every unsliced picture is one ffmpeg decodes")
        switch transport {
        case .httpFLV:
            let byTime = Dictionary(plainHashes, uniquingKeysWith: { first, _ in first })
            let common = slicedHashes.filter { byTime[$0.0] != nil }
            result.check(common.allSatisfy { byTime[$0.0] == $0.1 }, "the same picture at each timestamp in both runs")
            result.check(common.count * 10 >= slicedHashes.count * 9, "90 % of the pictures in common")
            result.check(slicedRecording.outcome == .ended && plain.outcome == .ended, "both played to the end (2006)")
        case .rtmp:
            let common = Set(slicedHashes.map(\.1)).intersection(plainHashes.map(\.1))
            result.check(common.count * 2 >= min(slicedHashes.count, plainHashes.count), "half the pictures in common")
        }
        let bad = slicedRecording.codes.filter { [2101, 2103, 3004, 3005, -2301, -9001].contains($0) }
        result.check(bad.isEmpty, "no decode failure, loss or error: \(bad)")
        return result
    }

    /// RTMP: the publisher is stopped (SIGSTOP) while nginx keeps the connection open, then continued.
    @Sendable static func publisherFrozen(_ transport: FaultTransport) async throws -> CaseResult {
        guard let stream = try await PublishedStream.start() else { return .skipped(PublishedStream.missing) }
        let clock = FaultClock()
        clock.startSession()
        let recording = await SessionRecording.record(
            stream.url(port: stream.port), configuration: FaultMatrix.configuration(retries: 3, noData: .seconds(3)),
            limit: .seconds(15),
            script: { probe in
                await probe.wait(for: .playBegin, timeout: .seconds(10))
                clock.mark()
                stream.publisher.suspend()
                await probe.wait(timeout: .seconds(5)) {
                    $0.after(clock.mark(0) ?? 0).contains { $0.code == .playLoading }
                }
                // Frozen on past the stutter threshold (500 ms), well within the read timeout (3 s).
                try? await Task.sleep(for: .milliseconds(800))
                clock.mark()
                stream.publisher.resume()
                await probe.wait(for: .playBegin, count: 2, timeout: .seconds(5))
                await probe.wait(timeout: .seconds(3)) {
                    $0.after(clock.mark(1) ?? 0).contains { $0.code == .playProgress }
                }
                probe.stop()
            })
        stream.stop()
        var result = CaseResult(recording.events)
        let injected = clock.mark(0)
        result.check(recording.playedBefore(injected), "playing before the publisher froze")
        let after = recording.events.after(injected ?? 0)
        result.detect([2104], injectedAt: injected, within: 0...2500, "frozen publisher")
        result.check(after.first { $0.code == .receiveDataLag }?.reason == "arrival_gap", "the arrival gap (2104)")
        result.check(after.map(\.code.rawValue).contains(2007), "the buffer ran dry (2007)")
        result.check(
            recording.stutterBeforeResuming(after: injected), "2105 just before the 2004 that resumes playback")
        let lost = after.map(\.code.rawValue).filter { [2103, 3004, 3005, -2301].contains($0) }
        result.check(lost.isEmpty, "the connection survives the freeze: \(lost)")
        result.check(after.contains { $0.code == .playProgress && $0.elapsedMilliseconds > (clock.mark(1) ?? .max) },
            "playing after the publisher continued")
        return result
    }
}

// MARK: - Faults in the stream itself, served live

enum StreamFaults {
    /// Where content faults strike: 2 s into the feed, which is 1 s after connecting (the first second is
    /// sent at once, like a GOP cache), when playback has begun.
    static let faultAt: Int64 = 2000

    /// The server closes the connection in the middle of a tag; the next connection is whole.
    @Sendable static func truncatedTag(_ transport: FaultTransport) async throws -> CaseResult {
        let clip = try Clip.h264AAC()
        let run = try await FeedRun.play(transport) { connection in
            var tags = clip.feed(until: 10_000)
            guard connection == 1, let index = tags.firstIndex(where: { $0.due >= faultAt && $0.type == 9 }) else {
                return tags
            }
            tags[index].isFault = true
            tags[index].cutAfter = tags[index].body.count / 2
            return tags
        } until: { events, clock in
            events.resumed(after: clock.mark(0))
        }
        var result = CaseResult(run.recording.events)
        let injected = run.clock.mark(0)
        result.check(run.recording.playedBefore(injected), "playing before the cut")
        result.detect([3004], injectedAt: injected, within: 0...1000, "a tag cut short by a close")
        let after = run.recording.events.after(injected ?? 0)
        result.check(after.first { $0.code == .reconnect }?.reason == "server_closed", "a reconnect for server_closed")
        result.checkRecovered(run.recording, after: injected)
        return result
    }

    /// 320x240 H.264, then at a keyframe a new sequence header and 480x270 pictures.
    @Sendable static func resolutionChange(_ transport: FaultTransport) async throws -> CaseResult {
        let (small, large) = (try Clip.h264AAC(), try Clip.large())
        return try await change(transport, to: (480, 270), codec: "h264") { connection in
            guard connection == 1 else { return small.feed(until: 10_000) }
            var switched = large.feed(from: faultAt, until: 10_000)
            switched[0].isFault = true
            return small.feed(until: faultAt) + switched
        }
    }

    /// H.264 video, then at a keyframe HEVC (codec id 12, as Chinese CDNs send it); the sound goes on.
    @Sendable static func codecChange(_ transport: FaultTransport) async throws -> CaseResult {
        let (h264, hevc) = (try Clip.h264AAC(), try Clip.hevc())
        return try await change(transport, to: (318, 238), codec: "hevc") { connection in
            guard connection == 1 else { return h264.feed(until: 10_000) }
            var video = hevc.feed(from: faultAt, until: 10_000, kinds: [9])
            video[0].isFault = true
            let sound = h264.feed(until: 10_000).filter { $0.type == 8 && $0.due >= faultAt }
            return h264.feed(until: faultAt) + Clip.merge(video, sound)
        }
    }

    /// A new video configuration mid-stream: reported (2008, then 2009 when its first picture shows), and
    /// applied in stream order: the second of old pictures buffered when it arrived still shows, and the
    /// pictures never stop.
    static func change(
        _ transport: FaultTransport, to size: (width: Int, height: Int), codec: String,
        feed: @escaping @Sendable (Int) -> [FeedTag]
    ) async throws -> CaseResult {
        let sink = RecordingSink()
        let run = try await FeedRun.play(transport, sink: sink, feed: feed) { events, clock in
            let after = events.after(clock.mark(0) ?? .max)
            guard let change = after.first(where: { $0.code == .changeResolution }) else { return false }
            return after.filter { $0.code == .playProgress && $0.elapsedMilliseconds > change.elapsedMilliseconds }
                .count >= 2
        }
        var result = CaseResult(run.recording.events)
        let injected = run.clock.mark(0)
        result.check(run.recording.playedBefore(injected), "playing before the change")
        let after = run.recording.events.after(injected ?? 0)
        result.check(
            after.first { $0.code == .startVideoDecoder }?.parameters["codec"] == .string(codec),
            "2008 for the new configuration (\(codec))")
        let change = after.first { $0.code == .changeResolution }
        result.check(
            change?.parameters["EVT_PARAM1"] == .int(Int64(size.width))
                && change?.parameters["EVT_PARAM2"] == .int(Int64(size.height)),
            "2009 with the new size \(size.width)x\(size.height)")
        result.detect([2009], injectedAt: injected, within: 0...3000, "new pictures shown")
        let bad = after.map(\.code.rawValue).filter { [2101, 2103, -2304, -2301].contains($0) }
        result.check(bad.isEmpty, "no decode failure or reconnect: \(bad)")
        let pictures = sink.pictures.filter { run.clock.milliseconds($0.at) >= (injected ?? .max) }
        let old = pictures.filter { $0.width != size.width }.count
        result.check(old >= 15, "the old pictures buffered at the change still show: \(old) of about 25")
        result.check(pictures.contains { $0.width == size.width }, "new pictures show")
        let gap = sink.longestGap(after: injected, clock: run.clock)
        result.check(gap <= 500, "the pictures never stop: longest gap \(gap) ms")
        result.note = "\(old) old pictures after the change, longest gap \(gap) ms"
        return result
    }

    /// Timestamps leap 5 s ahead mid-stream (a server's clock hiccup) and stay there.
    @Sendable static func timestampJumpForward(_ transport: FaultTransport) async throws -> CaseResult {
        try await timestampJump(transport, by: 5000)
    }

    /// Timestamps fall 1.5 s back mid-stream and go on from there.
    @Sendable static func timestampJumpBackward(_ transport: FaultTransport) async throws -> CaseResult {
        try await timestampJump(transport, by: -1500)
    }

    /// Nothing documents a jump within one connection; the player must keep showing pictures through it,
    /// without a stall, a reconnect or an error.
    static func timestampJump(_ transport: FaultTransport, by jump: Int64) async throws -> CaseResult {
        let clip = try Clip.h264AAC()
        let sink = RecordingSink()
        let run = try await FeedRun.play(transport, sink: sink) { connection in
            var tags = clip.feed(until: 10_000)
            guard connection == 1 else { return tags }
            for index in tags.indices where tags[index].due >= faultAt {
                tags[index].timestamp = UInt32(truncatingIfNeeded: Int64(tags[index].timestamp) + jump)
            }
            tags[tags.firstIndex { $0.due >= faultAt }!].isFault = true
            return tags
        } until: { events, clock in
            events.after(clock.mark(0) ?? .max).filter { $0.code == .playProgress }.count >= 3
        }
        var result = CaseResult(run.recording.events)
        let injected = run.clock.mark(0)
        result.check(run.recording.playedBefore(injected), "playing before the jump")
        let after = run.recording.events.after(injected ?? 0)
        let bad = after.map(\.code.rawValue).filter { [2007, 2105, 2103, 3004, 3005, -2301, -9001].contains($0) }
        result.check(bad.isEmpty, "no stall, reconnect or error: \(bad)")
        result.check(after.filter { $0.code == .playProgress }.count >= 3, "still playing: 3 progress events after")
        let gap = sink.longestGap(after: injected, clock: run.clock)
        result.check(gap <= 500, "the pictures never stop: longest gap \(gap) ms")
        let reported = after.filter { $0.code != .playProgress }
        let warning = after.first { $0.code.isWarning || $0.code.isError }
        result.detection = warning.map { max(0, $0.elapsedMilliseconds - (injected ?? 0)) }
        result.note = "longest gap \(gap) ms; reported: "
            + (reported.isEmpty ? "nothing" : reported.map { "\($0.code.rawValue)" }.joined(separator: " "))
        return result
    }

    /// Timestamps start 2 s below 2^32 and wrap to 0 mid-stream (FLV's 32-bit milliseconds; RTMP's
    /// extended timestamps until the wrap): nothing to report, playback goes on in order.
    @Sendable static func timestampWrap(_ transport: FaultTransport) async throws -> CaseResult {
        let clip = try Clip.h264AAC()
        let sink = RecordingSink()
        let base = UInt32.max - UInt32(faultAt) + 1
        let run = try await FeedRun.play(transport, sink: sink) { connection in
            var tags = clip.feed(until: 10_000)
            for index in tags.indices { tags[index].timestamp = tags[index].timestamp &+ base }
            if connection == 1 { tags[tags.firstIndex { $0.due >= faultAt }!].isFault = true }
            return tags
        } until: { events, clock in
            // Until a picture from past the wrap is shown (a cache's time after it arrived), not only two progress
            // events: on a loaded machine those came before it and the case ended too soon.
            events.after(clock.mark(0) ?? .max).filter { $0.code == .playProgress }.count >= 2
                && sink.pictures.contains { $0.timing.pts.milliseconds >= Int64(UInt32.max) }
        }
        var result = CaseResult(run.recording.events)
        let injected = run.clock.mark(0)
        result.check(run.recording.playedBefore(injected), "playing before the wrap")
        let after = run.recording.events.after(injected ?? 0)
        let bad = after.map(\.code.rawValue).filter { [2007, 2103, 2107, 3004, 3005, -2301].contains($0) }
        result.check(bad.isEmpty, "the wrap is seamless: no loading, discontinuity or reconnect: \(bad)")
        result.check(after.filter { $0.code == .playProgress }.count >= 2, "still playing: 2 progress events after")
        let times = sink.pictures.map(\.timing.pts.milliseconds)
        result.check(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "pictures in order across the wrap")
        result.check(
            times.contains { $0 >= Int64(UInt32.max) }, "pictures past 2^32 ms (unwrapped): last \(times.last ?? -1)")
        return result
    }

    /// A script tag of 100,000 nested objects mid-stream.
    @Sendable static func amfBomb(_ transport: FaultTransport) async throws -> CaseResult {
        let depth = 100_000
        var body: [UInt8] = [0x02, 0x00, 0x06] + Array("onBomb".utf8)
        body.reserveCapacity(body.count + depth * 7)
        for _ in 0..<depth { body += [0x03, 0x00, 0x01, 0x61] }
        body.append(0x05)
        for _ in 0..<depth { body += [0x00, 0x00, 0x09] }
        return try await malformed(transport, [FeedTag(type: 18, timestamp: 0, body: body)], refusedByRTMP: true)
    }

    /// A video tag announcing 0xFFFFFF bytes (16 MiB) and carrying 200.
    @Sendable static func oversizeTag(_ transport: FaultTransport) async throws -> CaseResult {
        try await malformed(
            transport,
            [FeedTag(type: 9, timestamp: 0, body: [0x27, 0x01, 0, 0, 0] + Array(repeating: 0xAB, count: 195),
                declaredSize: 0xFF_FFFF)],
            refusedByRTMP: true)
    }

    /// A video and an audio tag with empty bodies.
    @Sendable static func zeroLengthTags(_ transport: FaultTransport) async throws -> CaseResult {
        try await malformed(
            transport, [FeedTag(type: 9, timestamp: 0, body: []), FeedTag(type: 8, timestamp: 0, body: [])])
    }

    /// An AVC sequence header cut inside its SPS and an AAC one cut inside its AudioSpecificConfig.
    @Sendable static func truncatedConfigurations(_ transport: FaultTransport) async throws -> CaseResult {
        let clip = try Clip.h264AAC()
        let video = clip.videoConfiguration ?? []
        let audio = clip.audioConfiguration ?? []
        return try await malformed(
            transport,
            [FeedTag(type: 9, timestamp: 0, body: Array(video.prefix(5 + 8))),
                FeedTag(type: 8, timestamp: 0, body: Array(audio.prefix(3)))])
    }

    /// Plays a clean feed with `inserted` tags slipped in at ``faultAt``; the player must survive. Over
    /// HTTP-FLV they end in the demuxer, which skips what it cannot use, so the connection goes on; over RTMP
    /// a message breaking a safety limit (`refusedByRTMP`) is a protocol violation after the stream began
    /// (3005), and the player reconnects.
    static func malformed(
        _ transport: FaultTransport, _ inserted: [FeedTag], refusedByRTMP: Bool = false
    ) async throws -> CaseResult {
        let clip = try Clip.h264AAC()
        let sink = RecordingSink()
        let run = try await FeedRun.play(transport, sink: sink) { connection in
            let tags = clip.feed(until: 10_000)
            guard connection == 1 else { return tags }
            let index = tags.firstIndex { $0.due >= faultAt }!
            var fault = inserted
            for item in fault.indices {
                fault[item].due = tags[index].due
                fault[item].timestamp = tags[index].timestamp
            }
            fault[0].isFault = true
            return Array(tags[..<index]) + fault + Array(tags[index...])
        } until: { events, clock in
            let after = events.after(clock.mark(0) ?? .max)
            return after.contains { $0.code == .reconnect } ? events.resumed(after: clock.mark(0))
                : after.filter { $0.code == .playProgress }.count >= 2
        }
        var result = CaseResult(run.recording.events)
        let injected = run.clock.mark(0)
        result.check(run.recording.playedBefore(injected), "playing before the malformed tag")
        let after = run.recording.events.after(injected ?? 0)
        result.check(!after.map(\.code.rawValue).contains(-2301), "no -2301")
        result.check(!after.map(\.code.rawValue).contains(-9001), "not declared unplayable (-9001)")
        result.check(after.filter { $0.code == .playProgress }.count >= 2, "still playing: 2 progress events after")
        let gap = sink.longestGap(after: injected, clock: run.clock)
        result.check(gap <= 1000, "the pictures go on: longest gap \(gap) ms")
        let reports = after.filter { $0.code.isWarning || $0.code.isError }
        if transport == .rtmp && refusedByRTMP {
            result.detect([3005], injectedAt: injected, within: 0...1000, "hostile message")
            let reconnect = after.first { $0.code == .reconnect }
            result.check(reconnect?.reason == "protocol_violation", "a reconnect for protocol_violation (2103)")
            result.check(run.recording.resumed(after: injected), "playback goes on over a new connection")
        } else {
            let lost = reports.map(\.code.rawValue).filter { [2103, 3004, 3005].contains($0) }
            result.check(lost.isEmpty, "the connection survives it: \(lost)")
            if let first = reports.first, let injected {
                result.detection = max(0, first.elapsedMilliseconds - injected)
            }
        }
        result.note = "longest gap \(gap) ms; reported: "
            + (reports.isEmpty ? "nothing" : reports.map { "\($0.code.rawValue)" }.joined(separator: " "))
        return result
    }
}

// MARK: - Servers and streams

/// The moments faults were injected, against the session's start.
final class FaultClock: @unchecked Sendable {
    private let lock = NSLock()
    private var origin = ContinuousClock.now
    private var marks: [ContinuousClock.Instant] = []

    /// Call right before the session starts: event times count from about here.
    func startSession() {
        lock.withLock { origin = .now }
    }

    /// A fault strikes now.
    func mark() {
        lock.withLock { marks.append(.now) }
    }

    /// The `index`th mark, in ms since the session started.
    func mark(_ index: Int) -> Int64? {
        lock.withLock { marks.indices.contains(index) ? Self.milliseconds(origin, marks[index]) : nil }
    }

    func milliseconds(_ instant: ContinuousClock.Instant) -> Int64 {
        lock.withLock { Self.milliseconds(origin, instant) }
    }

    private static func milliseconds(_ from: ContinuousClock.Instant, _ to: ContinuousClock.Instant) -> Int64 {
        Int64((from.duration(to: to) / .milliseconds(1)).rounded())
    }
}

/// An impairment proxy on loopback.
enum Proxy {
    static func start(upstream: Int, listen: Int = 0, toxics: [Toxic] = []) async throws -> (ImpairmentProxy, Int) {
        let proxy = ImpairmentProxy(
            configuration: .init(
                listenPort: listen, upstreamPort: upstream, downstream: ToxicSet(toxics), threads: 1),
            logger: LabSessionTests.quiet())
        return (proxy, try await proxy.start())
    }
}

/// nginx-rtmp with ffmpeg publishing the fixture to it, once ffmpeg is publishing.
struct PublishedStream: Sendable {
    static var missing: String { NginxRTMPServer.unavailableReason ?? "nginx-rtmp did not start" }

    var server: NginxRTMPServer
    var publisher: FFmpegPublisher
    var name: String

    var port: Int { Int(server.port) }

    func url(port: Int) -> String { "rtmp://127.0.0.1:\(port)/live/\(name)" }

    func stop() {
        publisher.stop()
        server.stop()
    }

    /// `nil` when nginx-rtmp is not installed (the case is then skipped, or fails under CI).
    static func start(name: String = "fault-\(UUID().uuidString.prefix(8))") async throws -> PublishedStream? {
        guard NginxRTMPServer.unavailableReason == nil else { return nil }
        let server = try NginxRTMPServer()
        let publisher = try FFmpegPublisher(file: try Fixture.h264AAC.path(), url: server.url(stream: name))
        let stream = PublishedStream(server: server, publisher: publisher, name: name)
        let publishing = await until(timeout: .seconds(10)) { server.errorLog.contains("publish: name='\(name)'") }
        guard publishing else {
            stream.stop()
            throw LoopbackError("ffmpeg did not start publishing: \(publisher.log.suffix(500))")
        }
        return stream
    }
}

/// A live stream behind the impairment proxy: the lab's server (HTTP-FLV) or nginx-rtmp (RTMP).
struct ProxiedStream: Sendable {
    var proxy: ImpairmentProxy
    /// The proxy's port.
    var port: Int
    var upstreamPort: Int
    /// The stream's URL through the proxy.
    var url: String
    private var stopServer: @Sendable () async -> Void

    func stop() async {
        await proxy.stop()
        await stopServer()
    }

    /// Plays the stream through the proxy until `fault` (started once playback began, with the fault clock
    /// marked) stops the probe; `nil` when nginx-rtmp is missing.
    static func play(
        _ transport: FaultTransport, configuration: LivePlayConfiguration,
        fault: @escaping @Sendable (ProxiedStream, EventProbe, FaultClock) async -> Void
    ) async throws -> (SessionRecording, FaultClock)? {
        guard let stream = try await start(transport) else { return nil }
        let clock = FaultClock()
        clock.startSession()
        let recording = await SessionRecording.record(
            stream.url, configuration: configuration, limit: .seconds(15),
            script: { probe in
                await probe.wait(for: .playBegin, timeout: .seconds(10))
                clock.mark()
                await fault(stream, probe, clock)
            })
        await stream.stop()
        return (recording, clock)
    }

    /// `nil` when nginx-rtmp is missing.
    static func start(_ transport: FaultTransport) async throws -> ProxiedStream? {
        switch transport {
        case .httpFLV:
            return try await startLab(path: "/live.flv")
        case .rtmp:
            guard let stream = try await PublishedStream.start() else { return nil }
            let (proxy, port) = try await Proxy.start(upstream: stream.port)
            return ProxiedStream(
                proxy: proxy, port: port, upstreamPort: stream.port, url: stream.url(port: port),
                stopServer: { stream.stop() })
        }
    }

    static func startLab(path: String) async throws -> ProxiedStream {
        let (server, serverPort) = try await LabSessionTests.server()
        let (proxy, port) = try await Proxy.start(upstream: serverPort)
        return ProxiedStream(
            proxy: proxy, port: port, upstreamPort: serverPort, url: "http://127.0.0.1:\(port)\(path)",
            stopServer: { await server.stop() })
    }
}

/// One tag of a live feed.
struct FeedTag: Sendable {
    var type: UInt8
    var timestamp: UInt32
    var body: [UInt8]
    /// When it is sent: ms after the feed started.
    var due: Int64 = 0
    /// A size to announce instead of the body's (FLV DataSize, RTMP message length): a lying header.
    var declaredSize: Int?
    /// The first tag of the fault: the moment it is sent is the moment of injection.
    var isFault = false
    /// Send only this many bytes of the tag, then close the connection.
    var cutAfter: Int?

    /// The tag as FLV: header, body, PreviousTagSize.
    var flv: [UInt8] {
        var writer = FLVWriter()
        writer.writeTag(type: type, timestamp: timestamp, body: body, declaredSize: declaredSize)
        return Array(writer.bytes.dropFirst(13))
    }

    /// The tag as one RTMP message on stream 1, in a single chunk (the feed sets a 64 KiB chunk size), with
    /// an extended timestamp at or above 0xFFFFFF (RTMP specification 1.0, §5.3.1.3).
    var rtmp: [UInt8] {
        let chunkStream: UInt8 = type == 8 ? 4 : type == 9 ? 6 : 5
        let length = declaredSize ?? body.count
        guard timestamp >= 0xFF_FFFF || declaredSize != nil || body.count > FeedServer.chunkSize else {
            return RTMPChunkWriter.message(
                type: type, body: body, timestamp: timestamp, messageStreamID: 1, chunkStreamID: chunkStream,
                chunkSize: FeedServer.chunkSize)
        }
        let extended = timestamp >= 0xFF_FFFF
        var bytes = RTMPChunkWriter.header(
            type: type, length: length, timestamp: extended ? 0xFF_FFFF : timestamp, messageStreamID: 1,
            chunkStreamID: chunkStream)
        if extended { bytes += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: timestamp >> UInt32($0)) } }
        var offset = 0
        while offset < body.count {
            if offset > 0 { bytes.append(0xC0 | chunkStream) }
            let end = min(body.count, offset + FeedServer.chunkSize)
            bytes += body[offset..<end]
            offset = end
        }
        return bytes
    }
}

/// A fixture's tags, for building feeds: configuration tags once, media looped with rising timestamps.
struct Clip: Sendable {
    struct Tag: Sendable {
        var type: UInt8
        /// From the clip's first media tag.
        var time: Int64
        var body: [UInt8]
    }

    var metadata: [UInt8]?
    var videoConfiguration: [UInt8]?
    var audioConfiguration: [UInt8]?
    var media: [Tag] = []
    /// How far time advances per loop: the last tag's time plus one frame.
    var period: Int64 = 0

    init(path: String) throws {
        let bytes = try Fixtures.bytes(path)
        var offset = 13
        var raw: [(type: UInt8, timestamp: Int64, body: [UInt8])] = []
        while offset + 11 <= bytes.count {
            let size = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard offset + 11 + size <= bytes.count else { break }
            let timestamp = Int64(bytes[offset + 7]) << 24 | Int64(bytes[offset + 4]) << 16
                | Int64(bytes[offset + 5]) << 8 | Int64(bytes[offset + 6])
            raw.append((bytes[offset] & 0x1F, timestamp, Array(bytes[offset + 11..<offset + 11 + size])))
            offset += 11 + size + 4
        }
        for (type, timestamp, body) in raw {
            let isVideoHeader = type == 9 && body.count > 1 && [7, 12].contains(body[0] & 0x0F)
            switch type {
            case 18: metadata = metadata ?? body
            case 9 where isVideoHeader && body[1] == 0: videoConfiguration = videoConfiguration ?? body
            case 9 where isVideoHeader && body[1] == 2: continue
            case 8 where body.count > 1 && body[0] >> 4 == 10 && body[1] == 0:
                audioConfiguration = audioConfiguration ?? body
            case 8, 9: media.append(Tag(type: type, time: timestamp, body: body))
            default: continue
            }
        }
        guard let first = media.map(\.time).min() else { throw LoopbackError("no media in \(path)") }
        for index in media.indices { media[index].time -= first }
        let video = media.filter { $0.type == 9 }.map(\.time)
        let deltas = zip(video, video.dropFirst()).map { $1 - $0 }.filter { $0 > 0 }.sorted()
        period = (media.map(\.time).max() ?? 0) + (deltas.isEmpty ? 40 : deltas[deltas.count / 2])
    }

    static func h264AAC() throws -> Clip { try Clip(path: try Fixture.h264AAC.path()) }

    /// 480x270, otherwise like ``Fixture/h264AAC``.
    static func large() throws -> Clip {
        let path = try Fixtures.make(
            name: "h264-aac-480x270", extension: "flv",
            ["-f", "lavfi", "-i", "testsrc2=size=480x270:rate=25", "-f", "lavfi", "-i",
                "sine=frequency=440:sample_rate=44100", "-t", "3", "-c:v", "libx264", "-preset", "veryfast",
                "-pix_fmt", "yuv420p", "-bf", "0", "-g", "25", "-c:a", "aac", "-b:a", "64k", "-f", "flv"])
        return try Clip(path: path)
    }

    /// HEVC with codec id 12, 318x238, video only (``HEVCFixture``).
    static func hevc() throws -> Clip {
        let fixture = try HEVCFixture.make(.legacyCodecID12)
        defer { try? FileManager.default.removeItem(atPath: fixture.path) }
        return try Clip(path: fixture.path)
    }

    /// The configuration tags at `start`, then the media of `kinds` looped from `start` until `end`;
    /// timestamps equal the due times.
    func feed(from start: Int64 = 0, until end: Int64, kinds: Set<UInt8> = [8, 9]) -> [FeedTag] {
        var tags: [FeedTag] = []
        let header: [(UInt8, [UInt8]?)] = [(18, metadata), (9, videoConfiguration), (8, audioConfiguration)]
        for (type, body) in header where type == 18 || kinds.contains(type) {
            if let body, start == 0 || type != 18 {
                tags.append(FeedTag(type: type, timestamp: UInt32(start), body: body, due: start))
            }
        }
        var loop: Int64 = 0
        while start + loop * period < end {
            for tag in media where kinds.contains(tag.type) {
                let due = start + loop * period + tag.time
                guard due < end else { break }
                tags.append(FeedTag(type: tag.type, timestamp: UInt32(due), body: tag.body, due: due))
            }
            loop += 1
        }
        return tags
    }

    /// Two feeds in due order (stable: at equal times, `first`'s tags first).
    static func merge(_ first: [FeedTag], _ second: [FeedTag]) -> [FeedTag] {
        (first.enumerated().map { (0, $0.offset, $0.element) } + second.enumerated().map { (1, $0.offset, $0.element) })
            .sorted { ($0.2.due, $0.0, $0.1) < ($1.2.due, $1.0, $1.1) }.map(\.2)
    }
}

/// A loopback server that plays feeds live over HTTP-FLV or RTMP: each tag goes out at its due time (the
/// first second at once, like a GOP cache), and each connection gets the feed `feed(connection)` returns
/// (1 for the first). A tag marked ``FeedTag/isFault`` marks the clock when it is sent.
final class FeedServer: @unchecked Sendable {
    static let chunkSize = 65_536
    static let headStart: Int64 = 1000

    let port: Int
    private let server: MisbehavingServer

    init(
        _ transport: FaultTransport, clock: FaultClock, feed: @escaping @Sendable (_ connection: Int) -> [FeedTag]
    ) throws {
        let connections = RequestCounter()
        server = try MisbehavingServer(
            .script { peer in try Self.serve(feed(connections.next()), over: transport, to: peer, clock: clock) },
            lifetime: .seconds(60))
        port = Int(server.port)
    }

    func stop() {
        server.stop()
    }

    private static func serve(
        _ tags: [FeedTag], over transport: FaultTransport, to peer: MisbehavingServer.Peer, clock: FaultClock
    ) throws {
        switch transport {
        case .httpFLV:
            try readRequestHead(peer)
            let head = "HTTP/1.1 200 OK\r\nContent-Type: video/x-flv\r\nConnection: close\r\n\r\n"
            try peer.write(Array(head.utf8) + FLVWriter().bytes)
        case .rtmp:
            try peer.acceptRTMPHandshake()
            try peer.write(
                RTMPChunkWriter.setChunkSize(UInt32(chunkSize)) + RTMPChunkWriter.onStatus("NetStream.Play.Start"))
        }
        let start = ContinuousClock.now
        for tag in tags {
            let wait = ContinuousClock.now.duration(to: start + .milliseconds(max(0, tag.due - headStart)))
            if wait > .zero, !peer.sleep(wait) { return }
            if tag.isFault { clock.mark() }
            let bytes = transport == .httpFLV ? tag.flv : tag.rtmp
            if let cut = tag.cutAfter {
                try peer.write(Array(bytes.prefix(cut)))
                break
            }
            try peer.write(bytes)
        }
        // The end of the feed (or the cut): close, as a server does.
        peer.shutDown()
    }

    /// Reads an HTTP request up to its blank line.
    static func readRequestHead(_ peer: MisbehavingServer.Peer) throws {
        var head: [UInt8] = []
        while !head.ends(with: [13, 10, 13, 10]) {
            head += try peer.read(1)
            guard head.count < 65_536 else { throw LoopbackError("request head too long") }
        }
    }
}

/// A session against a ``FeedServer``.
struct FeedRun: Sendable {
    var recording: SessionRecording
    var clock: FaultClock

    /// Plays the feeds until `until` holds for the events (checked once the fault struck) or 12 s pass.
    static func play(
        _ transport: FaultTransport, sink: RecordingSink? = nil, feed: @escaping @Sendable (Int) -> [FeedTag],
        until done: @escaping @Sendable ([PlayEvent], FaultClock) -> Bool = { events, clock in
            events.after(clock.mark(0) ?? .max).filter { $0.code == .playProgress }.count >= 2
        }
    ) async throws -> FeedRun {
        let clock = FaultClock()
        let server = try FeedServer(transport, clock: clock, feed: feed)
        defer { server.stop() }
        clock.startSession()
        let recording = await SessionRecording.record(
            FaultMatrix.url(transport, port: server.port), configuration: FaultMatrix.configuration(retries: 3),
            limit: .seconds(12), sink: sink,
            script: { probe in
                await probe.wait(timeout: .seconds(11)) { done($0, clock) }
                probe.stop()
            })
        return FeedRun(recording: recording, clock: clock)
    }
}

/// The `liveplay` binary next to the test bundle, for cases that need a process of their own.
enum PlayerBinary {
    static let path = ExternalTool.builtProduct("liveplay")

    /// The event lines of a JSON log, as events.
    static func events(_ output: ExternalTool.Output) throws -> [PlayEvent] {
        try output.text.split(separator: "\n").compactMap { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard object?["kind"] as? String == "event", let code = object?["code"] as? Int,
                let time = object?["time_ms"] as? Int
            else { return nil }
            return PlayEvent(
                PlayEventCode(rawValue: code), object?["message"] as? String ?? "", elapsedMilliseconds: Int64(time))
        }
    }
}

/// Waits until `condition` holds or `timeout` passes.
func until(timeout: Duration, _ condition: () -> Bool) async -> Bool {
    await eventually(within: timeout, condition)
}

// MARK: - Reading the events

extension PlayEvent {
    var reason: String? {
        if case .string(let reason)? = parameters["reason"] { reason } else { nil }
    }

    /// 2104 for media arriving below real time (the goodput warning, not a gap or a lost connection).
    var isGoodputLag: Bool { code == .receiveDataLag && parameters["goodput"] != nil }
}

extension [PlayEvent] {
    /// Events at or after `milliseconds` (since the session started), allowing for the few ms between the
    /// fault clock's origin and the session's.
    func after(_ milliseconds: Int64) -> [PlayEvent] {
        filter { $0.elapsedMilliseconds >= milliseconds - 20 }
    }

    func codes(from milliseconds: Int64) -> [Int] { after(milliseconds).map(\.code.rawValue) }

    func first(_ codes: Set<Int>, from milliseconds: Int64) -> PlayEvent? {
        after(milliseconds).first { codes.contains($0.code.rawValue) }
    }

    /// After the fault: a new connection brought a keyframe, and at least 1.5 s later the player was still
    /// playing (a progress event), by which time the media buffered before the fault is gone.
    func resumed(after injected: Int64?) -> Bool {
        guard let injected, let keyframe = after(injected).first(where: { $0.code == .receivedFirstKeyframe }) else {
            return false
        }
        return contains { $0.code == .playProgress && $0.elapsedMilliseconds >= keyframe.elapsedMilliseconds + 1500 }
    }
}

/// A stop condition for one run: true at the first progress event `milliseconds` after its first 2004.
final class PlayedFor: Sendable {
    let milliseconds: Int64
    private let begun = Mutex<Int64?>(nil)

    init(milliseconds: Int64) { self.milliseconds = milliseconds }

    func reached(_ event: PlayEvent) -> Bool {
        begun.withLock { begun in
            if begun == nil, event.code == .playBegin { begun = event.elapsedMilliseconds }
            guard let start = begun else { return false }
            return event.code == .playProgress && event.elapsedMilliseconds >= start + milliseconds
        }
    }
}

extension SessionRecording {
    /// Playback had begun before the fault struck.
    func playedBefore(_ injected: Int64?) -> Bool {
        guard let injected, let begin = first(.playBegin) else { return false }
        return begin.elapsedMilliseconds <= injected
    }

    func resumed(after injected: Int64?) -> Bool { events.resumed(after: injected) }

    /// A 2105 (stutter) right before the 2004 that ended the loading after the fault (docs/event-log.md).
    func stutterBeforeResuming(after injected: Int64?) -> Bool {
        let after = events.after(injected ?? .max)
        guard let loading = after.firstIndex(where: { $0.code == .playLoading }),
            let begin = after[loading...].firstIndex(where: { $0.code == .playBegin }), begin > after.startIndex
        else { return false }
        return after[begin - 1].code == .videoPlayLag
    }
}

extension RecordingSink {
    /// The longest time without a new picture from `injected` (ms since the session started) to the last
    /// picture; `Int64.max` when none came after it.
    func longestGap(after injected: Int64?, clock: FaultClock) -> Int64 {
        guard let injected else { return .max }
        let times = pictures.map { clock.milliseconds($0.at) }
        guard let before = times.last(where: { $0 <= injected }) else { return .max }
        let later = times.filter { $0 > injected }
        guard !later.isEmpty else { return .max }
        return zip([before] + later, later).map { $1 - $0 }.max() ?? .max
    }
}

extension EventProbe {
    /// Waits until `condition` holds for the events so far (or `timeout` passes); returns whether it did.
    @discardableResult
    func wait(timeout: Duration = .seconds(10), until condition: @Sendable ([PlayEvent]) -> Bool) async -> Bool {
        await eventually(within: timeout) { condition(events) }
    }

    /// Waits until ``Swift/Array/resumed(after:)`` holds for the first fault.
    func waitUntilPlayingAgain(_ clock: FaultClock, timeout: Duration = .seconds(8)) async {
        await wait(timeout: timeout) { $0.resumed(after: clock.mark(0)) }
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
