import LivePlayBuffering
import LivePlayCore
import LivePlayTesting
import Testing

/// The modes' documented meaning, checked on deterministic traces (virtual clock, seeded).
@Suite struct LatencyModeTests {
    static let duration = Duration.seconds(120)

    static func run(_ kind: NetworkTrace.Kind, _ parameters: LatencyParameters) -> PlaybackFigures {
        PlaybackSimulator.run(NetworkTrace.make(kind, duration: duration), parameters: parameters)
    }

    @Test func speedHoldsAboutOneSecondOnASteadyNetwork() {
        let figures = Self.run(.steady, .preset(.speed))
        #expect(figures.stutters == 0)
        #expect(figures.meanLatency > .milliseconds(900) && figures.meanLatency < .milliseconds(1300))
        #expect(figures.p95Latency < .milliseconds(1300))
        #expect(figures.droppedFrames == 0)
    }

    @Test func speedRecoversFromAThreeSecondOutageWithinTenSeconds() {
        let figures = Self.run(.outage3s, .preset(.speed))
        // The outage itself is the only stutter.
        #expect(figures.stutters <= 1)
        let afterOutage = figures.latencies.filter { $0.at >= .seconds(63 + 10) }
        #expect(!afterOutage.isEmpty)
        #expect(afterOutage.allSatisfy { $0.latency <= .milliseconds(1200) }, "back within 1.2 s by 10 s after")
        #expect(figures.maximumRate <= 1.2)
    }

    @Test func speedDoesNotDriftOnAFastSource() {
        let figures = Self.run(.fastSource, .preset(.speed))
        #expect(figures.stutters == 0)
        let early = figures.latencies.filter { $0.at > .seconds(20) && $0.at < .seconds(30) }.map(\.latency)
        let late = figures.latencies.filter { $0.at > .seconds(110) }.map(\.latency)
        #expect(late.max()! - early.max()! < .milliseconds(100), "latency must not accumulate")
        #expect(late.max()! < .milliseconds(1300))
    }

    /// Issue 15's long drift case: an encoder clock 0.5 % fast for five minutes (1.5 s of surplus media).
    @Test(arguments: LatencyMode.allCases) func aFastSourceForFiveMinutesDoesNotAccumulate(_ mode: LatencyMode) {
        let figures = PlaybackSimulator.run(NetworkTrace.make(.fastSource, duration: .seconds(300)), parameters: .preset(mode))
        #expect(figures.stutters == 0)
        let early = figures.latencies.filter { $0.at > .seconds(20) && $0.at < .seconds(30) }.map(\.latency)
        let late = figures.latencies.filter { $0.at > .seconds(290) }.map(\.latency)
        if mode == .smooth {
            // Played at 1.0× always: the surplus builds up to twice the cache, then whole GOPs are shed.
            #expect(late.max()! <= .seconds(10))
        } else {
            #expect(late.max()! - early.max()! < .milliseconds(100), "\(mode): latency must not accumulate")
        }
    }

    @Test func speedCatchesUpAfterAGOPCacheBurstWithoutStutter() {
        let figures = Self.run(.gopCacheBurst, .preset(.speed))
        #expect(figures.stutters == 0)
        #expect(figures.latencies.first!.latency > .milliseconds(1500), "the burst starts it behind")
        let settled = figures.latencies.filter { $0.at > .seconds(20) }
        #expect(settled.allSatisfy { $0.latency < .milliseconds(1200) })
    }

    @Test func smoothLoadsOncePerOutageAndResumesWithTheCacheFull() {
        // A cache shorter than the outage, so the buffer runs dry.
        var parameters = LatencyParameters.preset(.smooth)
        parameters.cacheTime = .seconds(2)
        let figures = Self.run(.outage3s, parameters)
        #expect(figures.loadingEvents == 1)
        #expect(figures.beginEvents == 2, "the start, and one resume")
        #expect(figures.bufferedAtResume.allSatisfy { $0 >= .seconds(2) })
        #expect(figures.maximumRate == 1.0 && figures.timeOffNormalRate == .zero)
    }

    @Test func smoothPlaysAtNormalRateAlways() {
        for kind in NetworkTrace.Kind.allCases {
            let figures = Self.run(kind, .preset(.smooth))
            #expect(figures.maximumRate == 1.0, "\(kind)")
        }
    }

    @Test func autoStuttersNoMoreThanSpeedAndLagsLessThanSmoothOnJitter() {
        let auto = Self.run(.jitter200ms, .preset(.auto))
        let speed = Self.run(.jitter200ms, .preset(.speed))
        let smooth = Self.run(.jitter200ms, .preset(.smooth))
        #expect(auto.stutters <= speed.stutters)
        #expect(auto.stutterTime <= speed.stutterTime)
        #expect(auto.meanLatency < smooth.meanLatency)
    }

    @Test func autoRaisesItsTargetAfterAStallAndDecaysBack() {
        var engine = PlaybackEngine(parameters: .preset(.auto))
        #expect(engine.target == .seconds(1))
        let trace = NetworkTrace.make(.outage3s, duration: .seconds(120))
        var next = 0
        var now = Duration.zero
        var peak = Duration.zero
        var targetAt90: Duration?
        while now < .seconds(120) {
            while next < trace.arrivals.count, trace.arrivals[next].arrivesAt <= now {
                _ = engine.receive(trace.arrivals[next].packet, at: now)
                next += 1
            }
            _ = engine.advance(to: now)
            peak = max(peak, engine.target)
            if now == .seconds(90) { targetAt90 = engine.target }
            now += .milliseconds(10)
        }
        #expect(peak >= .milliseconds(1500))
        #expect(targetAt90! < peak)
    }

    @Test func parametersCanChangeWhilePlaying() {
        var engine = PlaybackEngine(parameters: .preset(.smooth))
        let trace = NetworkTrace.make(.steady, duration: .seconds(40))
        var next = 0
        var now = Duration.zero
        var skipped = false
        while now < .seconds(40) {
            if now == .seconds(20) { engine.parameters = .preset(.speed) }
            while next < trace.arrivals.count, trace.arrivals[next].arrivesAt <= now {
                _ = engine.receive(trace.arrivals[next].packet, at: now)
                next += 1
            }
            for action in engine.advance(to: now) {
                if case .skipped = action { skipped = true }
                if case .catchUpStarted = action { skipped = true }
            }
            now += .milliseconds(10)
        }
        #expect(skipped, "switching to speed removes the 4 s of excess")
        #expect(engine.bufferLatency < .milliseconds(1300))
    }
}

@Suite struct JitterBufferTests {
    static func packet(_ kind: MediaKind, _ ms: Int64, key: Bool = false, size: Int = 100) -> EncodedPacket {
        EncodedPacket(
            kind: kind, dts: MediaTimestamp(milliseconds: ms), pts: MediaTimestamp(milliseconds: ms),
            isKeyframe: kind == .audio || key, payload: Array(repeating: 0, count: size))
    }

    @Test func limitsInDurationBytesAndPacketsShedWholeGOPs() {
        var buffer = JitterBuffer(limits: .init(duration: .seconds(3), bytes: 1 << 20, packets: 10_000))
        for frame in 0..<300 {  // 10 s at 30 fps, keyframe every 2 s
            buffer.append(Self.packet(.video, Int64(frame) * 1000 / 30, key: frame % 60 == 0))
        }
        #expect(buffer.duration <= .seconds(3))
        #expect(buffer.first?.isKeyframe == true, "shed from keyframe to keyframe")
        #expect(buffer.droppedVideoFrames == 300 - buffer.count)

        var bytes = JitterBuffer(limits: .init(duration: .seconds(60), bytes: 150_000, packets: 10_000))
        for frame in 0..<300 { bytes.append(Self.packet(.video, Int64(frame) * 33, key: frame % 60 == 0, size: 1000)) }
        #expect(bytes.byteCount <= 150_000)
        #expect(bytes.first?.isKeyframe == true)

        // A GOP larger than the byte limit is dropped whole, never entered mid-GOP.
        var tiny = JitterBuffer(limits: .init(duration: .seconds(60), bytes: 20_000, packets: 10_000))
        for frame in 0..<300 {
            tiny.append(Self.packet(.video, Int64(frame) * 33, key: frame % 60 == 0, size: 1000))
            #expect(tiny.first == nil || tiny.first?.isKeyframe == true)
            #expect(tiny.byteCount <= 20_000)
        }

        var count = JitterBuffer(limits: .init(duration: .seconds(60), bytes: 1 << 30, packets: 100))
        for index in 0..<1000 { count.append(Self.packet(.audio, Int64(index) * 23)) }
        #expect(count.count <= 100)
    }

    /// A packet taken out is its taker's alone: the buffer's slot (kept until it is compacted, up to 1,024 packets
    /// later) holds none of its bytes, so they are freed, or reused by the demuxer, once decoded.
    @Test func aPacketTakenOutKeepsNoBytesInTheBuffer() {
        var buffer = JitterBuffer()
        for frame in 0..<10 { buffer.append(Self.packet(.video, Int64(frame) * 33, key: frame == 0, size: 1000)) }
        // Bound straight to a `var`: a second binding would hold the bytes too.
        guard var payload = buffer.removeFirst()?.payload else { return #expect(Bool(false), "a packet is there") }
        let storage = payload.withUnsafeBytes { $0.baseAddress }
        payload[0] = 0xFF  // copies first if anyone else holds the bytes
        #expect(payload.withUnsafeBytes { $0.baseAddress } == storage, "no one else held them")
        #expect(buffer.count == 9 && buffer.byteCount == 9_000)
    }

    @Test func skipKeepsAtLeastTheRequestedMediaFromAKeyframe() {
        var buffer = JitterBuffer()
        for frame in 0..<240 {
            buffer.append(Self.packet(.video, Int64(frame) * 1000 / 30, key: frame % 60 == 0))
            buffer.append(Self.packet(.audio, Int64(frame) * 1000 / 30 + 5))
        }
        let removed = buffer.skip(keeping: .seconds(1))
        #expect(buffer.first?.kind == .video && buffer.first?.isKeyframe == true)
        #expect(buffer.duration >= .seconds(1))
        #expect(removed == .seconds(6))
        #expect(buffer.droppedVideoFrames == 180)
    }

    @Test func aFloodNeverGrowsPastTheLimits() {
        var buffer = JitterBuffer(limits: .init(duration: .seconds(5), bytes: 4 << 20, packets: 500))
        for index in 0..<100_000 {
            buffer.append(Self.packet(.video, Int64(index), key: index % 50 == 0, size: 5000))
            #expect(buffer.count <= 500 + 50)
        }
        #expect(buffer.byteCount <= (4 << 20) + 50 * 5000)
    }
}

@Suite struct PlaybackEngineStartTests {
    static func packet(_ kind: MediaKind, _ ms: Int64, key: Bool = false) -> EncodedPacket {
        EncodedPacket(
            kind: kind, dts: MediaTimestamp(milliseconds: ms), pts: MediaTimestamp(milliseconds: ms),
            isKeyframe: kind == .audio || key, payload: [0])
    }

    /// A rendition switched to goes on with what it holds (``PlaybackEngine/startLevel``): smooth's 5 s target is not
    /// filled first; the next stall resumes at the target as ever.
    @Test func aStartLevelBeginsWithWhatIsBufferedOnlyTheFirstTime() {
        func begins(startLevel: Duration?) -> Duration? {
            var engine = PlaybackEngine(parameters: .preset(.smooth))
            engine.startLevel = startLevel
            for frame in 0..<300 {
                let now = Duration.milliseconds(frame * 33)
                _ = engine.receive(Self.packet(.video, Int64(frame * 33), key: frame % 30 == 0), at: now)
                if engine.advance(to: now).contains(where: { if case .begin = $0 { true } else { false } }) { return now }
            }
            return nil
        }
        #expect(begins(startLevel: nil).map { $0 >= .seconds(5) } == true, "smooth fills 5 s first")
        #expect(begins(startLevel: .zero).map { $0 < .milliseconds(100) } == true, "a switch plays what it holds")
    }

    @Test func anAudioOnlyStreamStartsWithoutWaitingForVideo() {
        var engine = PlaybackEngine(parameters: .preset(.speed))
        var began = false
        for index in 0..<100 {
            let now = Duration.milliseconds(index * 23)
            _ = engine.receive(Self.packet(.audio, Int64(index * 23)), at: now)
            if engine.advance(to: now).contains(where: { if case .begin = $0 { true } else { false } }) { began = true }
        }
        #expect(began)
        #expect(engine.state == .playing)
    }

    @Test func videoThatStartsMidGOPWaitsForItsKeyframeAndNeverStartsOnAudio() {
        var engine = PlaybackEngine(parameters: .preset(.speed))
        var decoded: [EncodedPacket] = []
        // 2 s of audio and inter frames before the first keyframe arrives (no GOP cache).
        for index in 0..<60 {
            let now = Duration.milliseconds(index * 33)
            _ = engine.receive(Self.packet(.video, Int64(index * 33)), at: now)
            _ = engine.receive(Self.packet(.audio, Int64(index * 33 + 5)), at: now)
            for case .decode(let packet) in engine.advance(to: now) { decoded.append(packet) }
        }
        #expect(engine.state == .waitingForKeyframe)
        #expect(decoded.isEmpty)
        _ = engine.receive(Self.packet(.video, 1980, key: true), at: .milliseconds(1980))
        for case .decode(let packet) in engine.advance(to: .milliseconds(1990)) { decoded.append(packet) }
        #expect(decoded.first?.kind == .video && decoded.first?.isKeyframe == true)
    }

    /// An exact seek: the GOP from the keyframe before the target is decoded at once, and the position starts at the
    /// target, so the picture there is the first one due.
    @Test func startingAtATargetDecodesFromTheKeyframeAtOnceAndPlaysFromTheTarget() {
        var engine = PlaybackEngine(parameters: .onDemand)
        engine.startAt(MediaTimestamp(milliseconds: 700))
        var decoded: [Int64] = []
        for index in 0..<60 {
            _ = engine.receive(Self.packet(.video, Int64(index * 40), key: index % 25 == 0), at: .zero)
        }
        #expect(engine.position?.milliseconds == 700)
        for case .decode(let packet) in engine.advance(to: .zero) { decoded.append(packet.dts.milliseconds) }
        #expect(engine.state == .playing)
        #expect(decoded == Array(stride(from: 0, through: 840, by: 40)), "up to the target and its look-ahead, at once")
        for case .decode(let packet) in engine.advance(to: .milliseconds(100)) { decoded.append(packet.dts.milliseconds) }
        #expect(engine.position?.milliseconds == 800, "playing on from the target: \(String(describing: engine.position))")
        #expect(decoded.last == 920, "and the look-ahead past it")
    }
}

extension PlaybackEngineStartTests {
    /// The play loop's turns on virtual time with a decoder that takes `decodeCost` a picture: a 1080p60 live stream
    /// whose server's GOP cache sends 1 s at once, then a frame each 1/60 s. Returns the pictures shown and those
    /// dropped as late (superseded by a newer due one) in the first 3 s, as the presenter counts them.
    static func firstSeconds(decodeCost: Duration, clockStartsAfterDecoding: Bool) -> (shown: Int, dropped: Int) {
        var engine = PlaybackEngine(parameters: .preset(.auto))
        var queue = PresentationQueue<Int64>(capacity: 16)
        let pts = { (frame: Int) -> Int64 in Int64(frame) * 1000 / 60 }
        var now = Duration.zero
        var arrived = 0
        var shown = 0
        while now < .seconds(3) {
            // The GOP cache's second at once, then the live frames as they are made.
            while arrived < 60 || Duration.milliseconds(pts(arrived) - 1000) <= now {
                _ = engine.receive(Self.packet(.video, pts(arrived), key: arrived % 60 == 0), at: now)
                arrived += 1
            }
            var began = false
            for action in engine.advance(to: now) {
                switch action {
                case .begin: began = true
                case .decode(let packet):
                    now += decodeCost
                    queue.insert(packet.pts.milliseconds, pts: packet.pts)
                    if let position = engine.position, shown > 0 { queue.dropSuperseded(at: position) }
                default: break
                }
            }
            if began, clockStartsAfterDecoding { engine.clockStarts(at: now) }
            if let position = engine.position {
                // The first picture shows at once; the rest at their times.
                if shown == 0, engine.state == .playing, queue.removeFirst() != nil {
                    shown += 1
                } else if shown > 0, engine.state == .playing, queue.nextDue(at: position) != nil {
                    shown += 1
                }
            }
            now += .milliseconds(4)
        }
        return (shown, queue.droppedFrames)
    }

    /// The turn that begins playback decodes the look-ahead's worth of pictures at once (150 ms, 9 at 60 fps), which
    /// at 1080p takes about as long as they last: with the clock started at that turn's start, the next turn finds
    /// the first of them late and drops them; started once they are decoded, none is.
    @Test func theClockStartsOncePlaybacksFirstPicturesAreDecoded() {
        let cost = Duration.milliseconds(11)
        let started = Self.firstSeconds(decodeCost: cost, clockStartsAfterDecoding: true)
        #expect(started.dropped == 0, "\(started)")
        #expect(started.shown > 150, "the stream plays: \(started)")
        let before = Self.firstSeconds(decodeCost: cost, clockStartsAfterDecoding: false)
        #expect(before.dropped >= 3, "the model shows what was wrong before: \(before)")
    }
}

/// Arrival gaps and the master clock: the engine's other inputs.
@Suite struct PlaybackEngineClockTests {
    static func packet(_ kind: MediaKind, _ ms: Int64, key: Bool = false) -> EncodedPacket {
        JitterBufferTests.packet(kind, ms, key: key)
    }

    /// Feeds 30 fps video (keyframe every second) arriving in real time, with an optional hole in arrivals.
    static func play(
        _ engine: inout PlaybackEngine, until end: Duration, hole: Range<Duration>? = nil,
        master: ((Duration) -> MediaTimestamp?)? = nil
    ) -> [PlaybackAction] {
        var actions: [PlaybackAction] = []
        var now = Duration.zero
        var frame: Int64 = 0
        while now < end {
            while Duration.milliseconds(frame * 1000 / 30) <= now {
                let arrives = Duration.milliseconds(frame * 1000 / 30)
                if let hole, hole.contains(arrives) {
                    // Held back, delivered in a burst when the hole ends.
                    if now < hole.upperBound { break }
                }
                actions += engine.receive(Self.packet(.video, frame * 1000 / 30, key: frame % 30 == 0), at: now)
                frame += 1
            }
            actions += engine.advance(to: now, following: master?(now))
            now += .milliseconds(10)
        }
        return actions
    }

    @Test func anArrivalGapBeyondTheToleranceIsReportedOncePerGap() {
        var engine = PlaybackEngine(parameters: .preset(.speed))
        #expect(engine.toleratedArrivalGap == .milliseconds(500), "speed: half its 1 s cache")
        let actions = Self.play(&engine, until: .seconds(20), hole: .seconds(10)..<(.seconds(12)))
        let gaps = actions.compactMap { action -> (Duration, Duration)? in
            if case .arrivalGap(let gap, let tolerated) = action { (gap, tolerated) } else { nil }
        }
        #expect(gaps.count == 1, "one warning for one gap: \(gaps)")
        if let (gap, tolerated) = gaps.first {
            #expect(gap > tolerated && gap < tolerated + .milliseconds(50), "reported as soon as it is too long")
        }
        var steady = PlaybackEngine(parameters: .preset(.speed))
        let calm = Self.play(&steady, until: .seconds(20))
        #expect(!calm.contains { if case .arrivalGap = $0 { true } else { false } })
        #expect(PlaybackEngine(parameters: .preset(.smooth)).toleratedArrivalGap == .milliseconds(2500))
    }

    @Test func theSimulatorCountsOneArrivalWarningPerOutage() {
        let outage = PlaybackSimulator.run(NetworkTrace.make(.outage3s, duration: .seconds(120)), parameters: .preset(.speed))
        #expect(outage.arrivalGapWarnings == 1)
        let jitter = PlaybackSimulator.run(NetworkTrace.make(.jitter200ms, duration: .seconds(120)), parameters: .preset(.speed))
        #expect(jitter.arrivalGapWarnings == 0, "±200 ms of jitter is what a 1 s cache is for")
    }

    @Test func whilePlayingThePositionFollowsAMasterClock() throws {
        // A sound device running 2 % slow: the position must follow it, not the wall clock.
        var engine = PlaybackEngine(parameters: .preset(.smooth))
        var master: (since: Duration, from: MediaTimestamp)?
        var now = Duration.zero
        var frame: Int64 = 0
        var followed = 0
        while now < .seconds(30) {
            while Duration.milliseconds(frame * 1000 / 30) <= now {
                _ = engine.receive(Self.packet(.video, frame * 1000 / 30, key: frame % 30 == 0), at: now)
                frame += 1
            }
            var clock: MediaTimestamp?
            if let master {
                clock = master.from + ((now - master.since) * 0.98).milliseconds
                followed += 1
            }
            _ = engine.advance(to: now, following: clock)
            if let clock { #expect(engine.position == clock) }
            if master == nil, engine.state == .playing, let position = engine.position { master = (now, position) }
            now += .milliseconds(10)
        }
        #expect(followed > 2000)
        let start = try #require(master)
        // Behind the wall clock by 2 % of the time played.
        let wallClockPosition = start.from.milliseconds + (now - .milliseconds(10) - start.since).milliseconds
        #expect(wallClockPosition - engine.position!.milliseconds > 400)
    }
}

@Suite struct PlaybackEngineResumeTests {
    @Test func afterAnOutageSpeedResumesNearItsTargetInsteadOfSkippingJustAfterResuming() {
        var engine = PlaybackEngine(parameters: .preset(.speed))
        let trace = NetworkTrace.make(.outage3s, duration: .seconds(90))
        var next = 0
        var now = Duration.zero
        var resumes: [(at: Duration, latency: Duration)] = []
        var skips: [Duration] = []
        while now < .seconds(90) {
            while next < trace.arrivals.count, trace.arrivals[next].arrivesAt <= now {
                _ = engine.receive(trace.arrivals[next].packet, at: now)
                next += 1
            }
            for action in engine.advance(to: now) {
                if case .begin(_, let stalled) = action, stalled != nil { resumes.append((now, engine.bufferLatency))}
                if case .skipped = action { skips.append(now) }
            }
            now += .milliseconds(10)
        }
        #expect(resumes.count == 1)
        #expect(!skips.isEmpty)
        for skip in skips { #expect(skip <= resumes[0].at, "skipped while frozen, not just after resuming") }
        #expect(resumes.allSatisfy { $0.latency < .milliseconds(1200) }, "resumed near the 1 s target: \(resumes)")
    }
}

extension PlaybackEngineResumeTests {
    /// 30 fps video with a keyframe a second, stopped for 3 s at 10 s; afterwards what was held arrives at
    /// `catchUpSpeed` times real time. Returns when playback resumed, and the latency it resumed at.
    static func resume(afterOutageLandingAt catchUpSpeed: Double) -> (at: Duration, latency: Duration)? {
        var engine = PlaybackEngine(parameters: .preset(.speed))
        var now = Duration.zero
        var frame: Int64 = 0
        var resumed: (Duration, Duration)?
        while now < .seconds(20), resumed == nil {
            // Media made at t arrives at t before the outage, and at 13 s + (t − 10 s) / speed after it.
            func arrival(_ media: Duration) -> Duration {
                media < .seconds(10) ? media : max(media, .seconds(13) + (media - .seconds(10)) / catchUpSpeed)
            }
            while arrival(.milliseconds(frame * 1000 / 30)) <= now {
                _ = engine.receive(Self.packet(frame * 1000 / 30, key: frame % 30 == 0), at: now)
                frame += 1
            }
            for action in engine.advance(to: now) {
                if case .begin(_, let stalled) = action, stalled != nil { resumed = (now, engine.bufferLatency) }
            }
            now += .milliseconds(10)
        }
        return resumed
    }

    static func packet(_ milliseconds: Int64, key: Bool) -> EncodedPacket {
        let time = MediaTimestamp(milliseconds: milliseconds)
        return EncodedPacket(kind: .video, dts: time, pts: time, isKeyframe: key, payload: [])
    }

    @Test func aResumeWaitsForTheBacklogToLandAndThenStartsAtTheTarget() throws {
        // At 4× the 4 s held (3 s of outage and the 1 s played dry) lands in 1 s, by 14 s: resuming at 13.25 s,
        // when the target is buffered, would decide on a quarter of it.
        let resumed = try #require(Self.resume(afterOutageLandingAt: 4))
        #expect(resumed.at >= .milliseconds(13_900) && resumed.at <= .milliseconds(14_100), "\(resumed)")
        #expect(abs(resumed.latency.milliseconds - 1000) <= 50, "resumed at the target: \(resumed)")
    }

    @Test func aSlowRefillIsNotMistakenForABacklog() throws {
        // Arriving at 0.7× real time is a slow link, not a burst: playback resumes the moment the target is in.
        let resumed = try #require(Self.resume(afterOutageLandingAt: 0.7))
        #expect(abs(resumed.latency.milliseconds - 1000) <= 50, "\(resumed)")
        let loaded = Duration.seconds(13) + Duration.seconds(1) / 0.7  // when 1 s of media had arrived
        #expect(resumed.at - loaded <= .milliseconds(100), "no wait for a backlog: \(resumed)")
    }
}

extension PlaybackEngineResumeTests {
    /// `l` in the window: while playing 3 s behind (smooth), the buffer drops to its newest keyframe at once.
    @Test func goingToTheLiveEdgeDropsTheBufferToItsNewestKeyframe() throws {
        var engine = PlaybackEngine(parameters: .preset(.smooth))
        var now = Duration.zero
        var frame: Int64 = 0
        while now < .seconds(10) {
            while Duration.milliseconds(frame * 1000 / 30) <= now {
                _ = engine.receive(Self.packet(frame * 1000 / 30, key: frame % 30 == 0), at: now)
                frame += 1
            }
            _ = engine.advance(to: now)
            now += .milliseconds(10)
        }
        #expect(engine.state == .playing && engine.bufferLatency > .milliseconds(4500))
        let actions = engine.jumpToLiveEdge()
        guard case .skipped(let removed, let dropped)? = actions.first else {
            Issue.record("no skip: \(actions)")
            return
        }
        // 4 s of 30 fps, less the 150 ms look-ahead already released to the decoder.
        #expect(removed > .seconds(4) && dropped >= 110, "\(removed), \(dropped) frames")
        #expect(engine.bufferLatency < .seconds(1), "at the newest keyframe, at most a GOP behind the edge")
        #expect(engine.jumpToLiveEdge().isEmpty, "already there")
    }
}

@Suite struct PlaybackEngineVideoWaitTests {
    /// Audio from t = 0, the first video keyframe only at `keyframeAt` (a server without a GOP cache).
    static func run(expectsVideo: Bool, keyframeAt: Duration) -> (begin: Duration?, firstVideoReleased: Duration?) {
        var engine = PlaybackEngine(parameters: .preset(.auto))
        engine.expectsVideo = expectsVideo
        var now = Duration.zero
        var begin: Duration?
        var firstVideo: Duration?
        var audio: Int64 = 0
        var video: Int64 = keyframeAt.milliseconds
        while now < .seconds(8) {
            while Duration.milliseconds(audio) <= now {
                _ = engine.receive(JitterBufferTests.packet(.audio, audio), at: now)
                audio += 23
            }
            while now >= keyframeAt, Duration.milliseconds(video) <= now {
                _ = engine.receive(JitterBufferTests.packet(.video, video, key: (video - keyframeAt.milliseconds) % 2000 == 0), at: now)
                video += 40
            }
            for action in engine.advance(to: now) {
                if case .begin = action, begin == nil { begin = now }
                if case .decode(let packet) = action, packet.kind == .video, firstVideo == nil { firstVideo = now }
            }
            now += .milliseconds(10)
        }
        return (begin, firstVideo)
    }

    @Test func aStreamThatAnnouncedVideoWaitsForItsKeyframeAndShowsItAtOnce() {
        let waiting = Self.run(expectsVideo: true, keyframeAt: .milliseconds(1900))
        #expect(waiting.firstVideoReleased == .milliseconds(1900), "the keyframe goes to the decoder the moment it arrives")
        #expect(waiting.begin! >= .milliseconds(2900), "then the cache fills from the keyframe on")
        // Without the announcement it starts on audio at 1 s and the keyframe waits its turn behind the cache.
        let audioFirst = Self.run(expectsVideo: false, keyframeAt: .milliseconds(1900))
        #expect(audioFirst.begin! < .milliseconds(1100))
        #expect(audioFirst.firstVideoReleased! > .milliseconds(2700))
    }

    @Test func videoThatNeverComesStopsBeingWaitedForAtTheLimit() {
        let never = Self.run(expectsVideo: true, keyframeAt: .seconds(60))
        let begin = never.begin!
        #expect(begin >= .seconds(5) && begin < .milliseconds(5100), "audio plays after 5 s of waiting for video")
    }
}
