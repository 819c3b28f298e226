import Foundation
import LivePlay
import LivePlayDecode
import LivePlayTesting
import Testing

/// The output sinks, with ffmpeg and ffprobe reading what they wrote.
@Suite struct SinkTests {
    /// `Y4MSink`: YUV4MPEG2 that decodes back to exactly the frames presented.
    @Suite struct Y4M {
        @Test func fileDecodesBackToTheSourceFrames() throws {
            let media = try SinkMedia(Fixture.h264AAC.path())
            let path = try SinkFiles.directory() + "/out.y4m"
            let sink = try Y4MSink(path: path, queueLimits: SinkFiles.unbounded)
            for frame in media.video { sink.present(frame, timing: SinkMedia.timing(frame)) }
            try sink.finish()
            #expect(sink.writtenFrames == 75)
            #expect(sink.droppedFrames == 0 && sink.skippedFrames == 0)
            let header = try SinkFiles.headerLine(path)
            #expect(header == "YUV4MPEG2 W320 H240 F25:1 Ip A1:1 C420mpeg2 XYSCSS=420MPEG2 XCOLORRANGE=LIMITED")
            let stream = try SinkProbe.video(path)
            #expect(stream.width == 320 && stream.height == 240)
            #expect(stream.r_frame_rate == "25/1")
            #expect(stream.nb_read_frames == "75")
            let hashes = try Oracle.frameHashes(path, video: true)
            #expect(hashes == media.video.map { FrameHash(size: $0.packedSize, md5: $0.md5()) })
        }

        /// Every layout the H.264 decoder produces gets its Y4M tag and survives the round trip bit-exactly.
        @Test(arguments: [
            ("yuvj420p", "C420mpeg2 XYSCSS=420MPEG2 XCOLORRANGE=FULL"),
            ("yuv422p", "C422 XYSCSS=422 XCOLORRANGE=LIMITED"),
            ("yuv444p", "C444 XYSCSS=444 XCOLORRANGE=LIMITED"),
            ("yuv420p10le", "C420p10 XYSCSS=420P10 XCOLORRANGE=LIMITED"),
        ])
        func everyDecodedLayoutRoundTrips(_ layout: (pixelFormat: String, colorFields: String)) throws {
            let media = try SinkMedia(SinkFiles.redFixture(pixelFormat: layout.pixelFormat))
            #expect(media.video.first?.pixelFormat == layout.pixelFormat)
            let path = try SinkFiles.directory() + "/out.y4m"
            let sink = try Y4MSink(path: path, queueLimits: SinkFiles.unbounded)
            for frame in media.video { sink.present(frame, timing: SinkMedia.timing(frame)) }
            try sink.finish()
            #expect(try SinkFiles.headerLine(path).hasSuffix(layout.colorFields))
            let hashes = try Oracle.frameHashes(path, video: true)
            #expect(hashes.count == 25)
            #expect(hashes == media.video.map { FrameHash(size: $0.packedSize, md5: $0.md5()) })
        }

        /// `liveplay URL --video-out - | ffmpeg -i -`: a real reader on a pipe.
        @Test func ffmpegReadsItFromAPipe() throws {
            let media = try SinkMedia(Fixture.videoOnly.path())
            let ffmpeg = try SinkProcess(
                "ffmpeg",
                [
                    "-hide_banner", "-loglevel", "error", "-nostdin", "-f", "yuv4mpegpipe", "-i", "-",
                    "-f", "framemd5", "-",
                ])
            let sink = try Y4MSink(output: .descriptor(ffmpeg.input), queueLimits: SinkFiles.unbounded)
            for frame in media.video { sink.present(frame, timing: SinkMedia.timing(frame)) }
            try sink.finish()
            let output = try ffmpeg.finish()
            let hashes = output.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
                String($0.split(separator: ",").last!.trimmingCharacters(in: .whitespaces))
            }
            #expect(media.video.count == 60)
            #expect(hashes == media.video.map { $0.md5() })
            // 30 fps, inferred from the 33/34 ms gaps of the first two pictures.
            #expect(output.contains("#tb 0: 1/30"))
        }

        @Test func aGivenFrameRateIsUsed() throws {
            let frames = try SinkFiles.testPatternFrames(count: 2)
            let path = try SinkFiles.directory() + "/out.y4m"
            let rate = try #require(Y4MSink.FrameRate(framesPerSecond: 29.97))
            #expect(rate == Y4MSink.FrameRate(numerator: 30000, denominator: 1001))
            let sink = try Y4MSink(path: path, frameRate: rate)
            for frame in frames { sink.present(frame, timing: SinkMedia.timing(frame)) }
            try sink.finish()
            #expect(try SinkFiles.headerLine(path).contains(" F30000:1001 "))
            #expect(try SinkProbe.video(path).r_frame_rate == "30000/1001")
        }

        @Test func oneFrameGetsTheFallbackRate() throws {
            let path = try SinkFiles.directory() + "/out.y4m"
            let sink = try Y4MSink(path: path)
            sink.present(try SinkFiles.testPatternFrames(count: 1)[0], timing: SinkMedia.timing(pts: 0))
            try sink.finish()
            #expect(sink.writtenFrames == 1)
            #expect(try SinkFiles.headerLine(path).contains(" F25:1 "))
            #expect(try SinkProbe.video(path).nb_read_frames == "1")
        }

        /// Y4M has one size: pictures of another are skipped and counted, and the file stays valid.
        @Test func picturesOfAnotherSizeAreSkipped() throws {
            let large = try SinkFiles.testPatternFrames(count: 4)
            let small = try SinkFiles.testPatternFrames(count: 2, width: 32, height: 24)
            let path = try SinkFiles.directory() + "/out.y4m"
            let sink = try Y4MSink(path: path)
            for frame in [large[0], large[1], small[0], small[1], large[2], large[3]] {
                sink.present(frame, timing: SinkMedia.timing(frame))
            }
            try sink.finish()
            #expect(sink.writtenFrames == 4)
            #expect(sink.skippedFrames == 2)
            let stream = try SinkProbe.video(path)
            #expect(stream.width == 64 && stream.height == 48 && stream.nb_read_frames == "4")
        }

        /// Semi-planar pictures are split into planes, so the file hashes as the planar original.
        @Test func nv12PicturesAreWrittenAsPlanar() throws {
            let planar = try SinkFiles.rawTestPattern(pixelFormat: "yuv420p")
            let semiPlanar = try SinkFiles.rawTestPattern(pixelFormat: "nv12")
            let frame = try VideoFrame(packedBytes: semiPlanar, width: 64, height: 48, pixelFormat: "nv12")
            let path = try SinkFiles.directory() + "/out.y4m"
            let sink = try Y4MSink(path: path)
            sink.present(frame, timing: SinkMedia.timing(pts: 0))
            try sink.finish()
            #expect(try SinkFiles.headerLine(path).contains(" C420jpeg "))
            let expected = try VideoFrame(packedBytes: planar, width: 64, height: 48, pixelFormat: "yuv420p").md5()
            #expect(try Oracle.frameHashes(path, video: true).map(\.md5) == [expected])
        }

        @Test func aFormatY4MCannotHoldStopsTheSink() throws {
            let rgb = try VideoFrame(
                packedBytes: [UInt8](repeating: 200, count: 8 * 8 * 3), width: 8, height: 8, pixelFormat: "rgb24")
            let sink = try Y4MSink(path: try SinkFiles.directory() + "/out.y4m")
            sink.present(rgb, timing: SinkMedia.timing(pts: 0))
            let error = #expect(throws: LivePlayError.self) { try sink.finish() }
            #expect(error?.code == .unsupportedOutputFormat)
            #expect(sink.error?.code == .unsupportedOutputFormat)
        }

        @Test func aPathThatCannotBeOpenedFailsAtOnce() {
            let error = #expect(throws: LivePlayError.self) {
                try Y4MSink(path: "/nonexistent-directory-\(UUID())/out.y4m")
            }
            #expect(error?.code == .outputFailed)
        }
    }

    /// `PCMSink`: WAV and raw PCM that ffmpeg reads back as exactly the samples played.
    @Suite struct PCM {
        @Test(arguments: [PCMSink.SampleFormat.f32le, .s16le])
        func wavFileReadsBackAsTheSamples(_ format: PCMSink.SampleFormat) throws {
            let media = try SinkMedia(Fixture.h264AAC.path())
            let path = try SinkFiles.directory() + "/out.wav"
            let sink = try PCMSink(path: path, container: .wav, sampleFormat: format, queueLimits: SinkFiles.unbounded)
            #expect(sink.unplayedDuration == nil)
            for block in media.audioBlocks { sink.play(block) }
            try sink.finish()
            #expect(sink.writtenBlocks == media.audio.count)
            #expect(sink.droppedBlocks == 0 && sink.skippedBlocks == 0)

            let stream = try SinkProbe.audio(path)
            #expect(stream.codec_name == "pcm_\(format.rawValue)")
            #expect(stream.sample_rate == "44100")
            #expect(stream.channels == 1)
            let frames = media.audio.reduce(0) { $0 + $1.sampleCount }
            let duration = try #require(stream.duration.flatMap(Double.init))
            #expect(abs(duration - Double(frames) / 44100) < 0.001)

            let expected = media.expectedPCM(format)
            #expect(try SinkFiles.decodePCM(path, as: format) == expected)
            // The patched sizes: RIFF = file - 8, data = the samples.
            let file = try Fixtures.bytes(path)
            let headerLength = format == .f32le ? 58 : 44
            #expect(file.count == headerLength + expected.count)
            #expect(SinkFiles.little32(file, at: 4) == UInt32(file.count - 8))
            #expect(SinkFiles.little32(file, at: headerLength - 4) == UInt32(expected.count))
        }

        /// On a pipe the sizes cannot be patched: the streaming 0xFFFFFFFF, which ffmpeg reads to the end.
        @Test func wavOnAPipeUsesStreamingSizes() throws {
            let media = try SinkMedia(Fixture.audioOnly.path())
            let pipe = Pipe()
            let drain = PipeReader(pipe.fileHandleForReading)
            let sink = try PCMSink(
                output: .descriptor(pipe.fileHandleForWriting.fileDescriptor), container: .wav, sampleFormat: .s16le,
                queueLimits: SinkFiles.unbounded)
            for block in media.audioBlocks { sink.play(block) }
            try sink.finish()
            try pipe.fileHandleForWriting.close()
            let bytes = try #require(drain.wait().map { [UInt8]($0) })
            #expect(SinkFiles.little32(bytes, at: 4) == 0xFFFF_FFFF)
            #expect(SinkFiles.little32(bytes, at: 40) == 0xFFFF_FFFF)
            let expected = media.expectedPCM(.s16le)
            #expect(bytes.count == 44 + expected.count)
            let path = try SinkFiles.directory() + "/streamed.wav"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(try SinkFiles.decodePCM(path, as: .s16le) == expected)
            #expect(try SinkProbe.audio(path).sample_rate == "48000")
        }

        @Test(arguments: [PCMSink.SampleFormat.f32le, .s16le])
        func rawPCMIsExactlyTheSamples(_ format: PCMSink.SampleFormat) throws {
            let media = try SinkMedia(Fixture.h264MP3.path())
            let path = try SinkFiles.directory() + "/out.pcm"
            let sink = try PCMSink(path: path, container: .raw, sampleFormat: format, queueLimits: SinkFiles.unbounded)
            for block in media.audioBlocks { sink.play(block) }
            try sink.finish()
            let expected = media.expectedPCM(format)
            let samples = media.audio.reduce(0) { $0 + $1.sampleCount * $1.channels }
            #expect(expected.count == samples * format.bytesPerSample)
            #expect(try Fixtures.bytes(path) == expected)
        }

        /// Neither format can change rate or channels: other blocks are skipped and counted.
        @Test func blocksOfAnotherFormatAreSkipped() throws {
            func block(_ rate: Int, _ channels: Int, _ value: Float) -> AudioSamples {
                AudioSamples(
                    pts: .zero, sampleRate: rate, channels: channels,
                    samples: [Float](repeating: value, count: 100 * channels), rate: 1)
            }
            let path = try SinkFiles.directory() + "/out.pcm"
            let sink = try PCMSink(path: path, container: .raw, sampleFormat: .s16le)
            for samples in [block(44100, 1, 0.5), block(48000, 1, 0.25), block(44100, 2, 0.25), block(44100, 1, -0.5)] {
                sink.play(samples)
            }
            try sink.finish()
            #expect(sink.writtenBlocks == 2)
            #expect(sink.skippedBlocks == 2)
            let bytes = try Fixtures.bytes(path)
            #expect(bytes.count == 200 * 2)
            // 0.5 → 16384 (0x4000), −0.5 → −16384 (0xC000), little-endian.
            #expect(Array(bytes.prefix(2)) == [0x00, 0x40] && Array(bytes.suffix(2)) == [0x00, 0xC0])
        }

        @Test func noSoundLeavesAnEmptyFile() throws {
            let path = try SinkFiles.directory() + "/out.wav"
            let sink = try PCMSink(path: path)
            try sink.finish()
            #expect(try Fixtures.bytes(path).isEmpty)
        }
    }

    /// `SnapshotSink`: PNGs rendered like a view would show the picture.
    @Suite struct Snapshots {
        struct RenderCase: Sendable, CustomTestStringConvertible {
            var mode: RenderMode
            var rotation: RenderRotation
            var size: PictureSize?
            var expected: PictureSize
            /// Points expected black (letterbox bars); every other probed point is red.
            var black: [(x: Int, y: Int)]
            var red: [(x: Int, y: Int)]
            var testDescription: String { "\(mode) \(rotation) into \(size.map(\.description) ?? "own size")" }
        }

        static let renderCases: [RenderCase] = [
            RenderCase(
                mode: .fillEdge, rotation: .rotation0, size: nil, expected: PictureSize(width: 320, height: 240),
                black: [], red: [(0, 0), (160, 120), (319, 239)]),
            RenderCase(
                mode: .fillEdge, rotation: .rotation90, size: nil, expected: PictureSize(width: 240, height: 320),
                black: [], red: [(0, 0), (239, 319)]),
            // 320x240 fitted into 200x200: 200x150, with 25-pixel bars above and below.
            RenderCase(
                mode: .fillEdge, rotation: .rotation0, size: PictureSize(width: 200, height: 200),
                expected: PictureSize(width: 200, height: 200),
                black: [(100, 0), (100, 23), (100, 176), (100, 199)],
                red: [(100, 27), (0, 100), (199, 100), (100, 172)]),
            // Covering: no bars, the sides cropped.
            RenderCase(
                mode: .fillScreen, rotation: .rotation0, size: PictureSize(width: 200, height: 200),
                expected: PictureSize(width: 200, height: 200), black: [], red: [(0, 0), (199, 199), (100, 100)]),
            // Turned to 240x320, fitted into 200x100: 75x100 in the middle, bars left and right.
            RenderCase(
                mode: .fillEdge, rotation: .rotation90, size: PictureSize(width: 200, height: 100),
                expected: PictureSize(width: 200, height: 100),
                black: [(0, 50), (60, 50), (140, 50), (199, 50)], red: [(65, 50), (100, 0), (135, 99)]),
            RenderCase(
                mode: .fillScreen, rotation: .rotation270, size: PictureSize(width: 100, height: 200),
                expected: PictureSize(width: 100, height: 200), black: [], red: [(0, 0), (99, 199)]),
        ]

        @Test(arguments: renderCases)
        func snapshotsAreRenderedIntoTheTargetSize(_ render: RenderCase) throws {
            let media = try SinkMedia(SinkFiles.redFixture(pixelFormat: "yuv420p"))
            let sink = try SnapshotSink(
                rendering: SnapshotSink.Rendering(mode: render.mode, rotation: render.rotation, size: render.size))
            let frame = try #require(media.video.first)
            sink.present(frame, timing: SinkMedia.timing(frame))
            let path = try SinkFiles.directory() + "/snapshot.png"
            try sink.snapshot(to: path)
            try sink.finish()
            let stream = try SinkProbe.video(path)
            #expect(stream.codec_name == "png")
            #expect(PictureSize(width: stream.width, height: stream.height) == render.expected)
            let picture = RGBPicture(
                width: render.expected.width, height: render.expected.height,
                pixels: try SinkFiles.rgb24(decoding: path))
            for point in render.black {
                let pixel = picture.pixel(x: point.x, y: point.y)
                #expect([pixel.red, pixel.green, pixel.blue] == [0, 0, 0], "at \(point)")
            }
            // Decoded red converts to within a few steps of (255, 0, 0).
            for point in render.red {
                let pixel = picture.pixel(x: point.x, y: point.y)
                #expect(pixel.red >= 250 && pixel.green <= 4 && pixel.blue <= 4, "at \(point): \(pixel)")
            }
        }

        /// Rotation is clockwise: the top of the picture ends up on the right after 90°.
        @Test(arguments: [(RenderRotation.rotation90, true), (.rotation270, false)])
        func rotationIsClockwise(_ rotation: (value: RenderRotation, topGoesRight: Bool)) throws {
            // 64x32 rgb24: top half red, bottom half blue.
            let red: [UInt8] = [255, 0, 0]
            let blue: [UInt8] = [0, 0, 255]
            let pixels = (0..<32).flatMap { row in (0..<64).flatMap { _ in row < 16 ? red : blue } }
            let frame = try VideoFrame(packedBytes: pixels, width: 64, height: 32, pixelFormat: "rgb24")
            let sink = try SnapshotSink(rendering: SnapshotSink.Rendering(rotation: rotation.value))
            sink.present(frame, timing: SinkMedia.timing(pts: 0))
            let picture = try sink.renderLatest()
            #expect(picture.size == PictureSize(width: 32, height: 64))
            let left = picture.pixel(x: 4, y: 32)
            let right = picture.pixel(x: 28, y: 32)
            #expect([right.red, right.green, right.blue] == (rotation.topGoesRight ? red : blue))
            #expect([left.red, left.green, left.blue] == (rotation.topGoesRight ? blue : red))
            try sink.finish()
        }

        @Test func settingsChangeWhilePlaying() throws {
            let frame = try SinkFiles.testPatternFrames(count: 1)[0]
            let sink = try SnapshotSink()
            sink.present(frame, timing: SinkMedia.timing(pts: 0))
            #expect(try sink.renderLatest().size == PictureSize(width: 64, height: 48))
            sink.targetSize = PictureSize(width: 30, height: 30)
            sink.renderRotation = .rotation180
            sink.renderMode = .fillScreen
            #expect(
                sink.rendering
                    == SnapshotSink.Rendering(
                        mode: .fillScreen, rotation: .rotation180, size: PictureSize(width: 30, height: 30)))
            #expect(try sink.renderLatest().size == PictureSize(width: 30, height: 30))
            try sink.finish()
        }

        /// Every second of stream time, named by index and pts; nothing half-written left behind.
        @Test func periodicSnapshotsFollowStreamTime() throws {
            let media = try SinkMedia(Fixture.h264AAC.path())
            let directory = try SinkFiles.directory()
            let sink = try SnapshotSink(every: .seconds(1), pathPattern: directory + "/shot-{index}-{pts}.png")
            for frame in media.video { sink.present(frame, timing: SinkMedia.timing(frame)) }
            try sink.finish()
            #expect(sink.snapshotsWritten == 3)
            #expect(sink.droppedFrames == 0)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
            // The stream starts where the muxer put it (after the AAC priming), one second apart from there.
            let start = try #require(media.video.first).pts.milliseconds
            #expect(
                names == [
                    "shot-000001-\(start).png", "shot-000002-\(start + 1000).png", "shot-000003-\(start + 2000).png",
                ])
            for name in names {
                let stream = try SinkProbe.video(directory + "/" + name)
                #expect(stream.width == 320 && stream.height == 240)
            }
            // The second one is the 26th picture (1 s at 25 fps), as ffmpeg converts it.
            let reference = try SinkFiles.rgb24(decoding: Fixture.h264AAC.path(), frameIndex: 25)
            let written = try SinkFiles.rgb24(decoding: directory + "/shot-000002-\(start + 1000).png")
            #expect(SinkFiles.meanDifference(written, reference) < 2.5)
        }

        /// A full queue drops snapshots instead of holding the play loop; every due one is accounted for.
        @Test func aFullQueueDropsSnapshots() throws {
            let media = try SinkMedia(Fixture.h264AAC.path())
            let directory = try SinkFiles.directory()
            let sink = try SnapshotSink(
                every: .milliseconds(1), pathPattern: directory + "/{pts}.png",
                queueLimits: WriteQueueLimits(items: 1, bytes: 1))
            for frame in media.video { sink.present(frame, timing: SinkMedia.timing(frame)) }
            try sink.finish()
            #expect(sink.snapshotsWritten >= 1)
            #expect(sink.snapshotsWritten + sink.droppedFrames == media.video.count)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == sink.snapshotsWritten)
        }

        @Test func aSnapshotBeforeAnyPictureIsAnError() throws {
            let sink = try SnapshotSink()
            let error = #expect(throws: LivePlayError.self) {
                try sink.snapshot(to: try SinkFiles.directory() + "/never.png")
            }
            #expect(error?.code == .noPicture)
        }

        @Test func aPatternWithoutAPlaceholderIsRejected() {
            let error = #expect(throws: LivePlayError.self) {
                try SnapshotSink(every: .seconds(1), pathPattern: "same.png")
            }
            #expect(error?.code == .invalidOutput)
        }

        @Test func aPeriodicWriteFailureIsReported() throws {
            let sink = try SnapshotSink(every: .seconds(1), pathPattern: "/nonexistent-\(UUID())/{index}.png")
            sink.present(try SinkFiles.testPatternFrames(count: 1)[0], timing: SinkMedia.timing(pts: 0))
            let error = #expect(throws: LivePlayError.self) { try sink.finish() }
            #expect(error?.code == .outputFailed)
            #expect(sink.error?.code == .outputFailed)
            #expect(sink.snapshotsWritten == 0)
        }
    }

    /// The writer queue: the play loop never waits on I/O, and a vanished reader is an error, not a crash.
    @Suite struct WriterQueue {
        /// Frame size in Y4M: `FRAME\n` and 64x48 yuv420p.
        static let y4mFrameBytes = 6 + 64 * 48 * 3 / 2

        /// Nobody reads the pipe (64 KiB fit in it): pictures beyond the queue are dropped at once, and
        /// once a reader drains it, every picture is either in the stream or counted as dropped.
        @Test func aFullQueueDropsInsteadOfBlocking() throws {
            let frames = try SinkFiles.testPatternFrames(count: 100)
            let pipe = Pipe()
            let sink = try Y4MSink(
                output: .descriptor(pipe.fileHandleForWriting.fileDescriptor),
                queueLimits: WriteQueueLimits(items: 4, bytes: 1 << 20))
            let presenting = Completion {
                for frame in frames { sink.present(frame, timing: SinkMedia.timing(frame)) }
            }
            // Microseconds when it drops; a sink that blocked would wait for the reader below for ever.
            #expect(presenting.wait(for: .seconds(5)) != nil, "present() blocked on a full pipe")
            // At most 4 queued, one being written and 64 KiB (14 pictures) in the pipe: most are dropped.
            #expect(sink.droppedFrames >= 50)
            let drain = PipeReader(pipe.fileHandleForReading)
            _ = presenting.wait(for: .seconds(30))
            try sink.finish()
            try pipe.fileHandleForWriting.close()
            let bytes = try #require(drain.wait().map { [UInt8]($0) })
            let headerLength = try #require(bytes.firstIndex(of: 0x0A)) + 1
            #expect(sink.writtenFrames + sink.droppedFrames == 100)
            #expect(bytes.count == headerLength + sink.writtenFrames * Self.y4mFrameBytes)
        }

        /// A reader that never reads: `finish` gives up after its timeout instead of hanging.
        @Test func finishGivesUpOnAStalledReader() throws {
            let frames = try SinkFiles.testPatternFrames(count: 40)
            let pipe = Pipe()
            let sink = try Y4MSink(
                output: .descriptor(pipe.fileHandleForWriting.fileDescriptor),
                queueLimits: WriteQueueLimits(items: 8, bytes: 1 << 20))
            let presenting = Completion {
                for frame in frames { sink.present(frame, timing: SinkMedia.timing(frame)) }
            }
            guard presenting.wait(for: .seconds(5)) != nil else {
                try pipe.fileHandleForReading.close()
                Issue.record("present() blocked on a full pipe")
                return
            }
            let finishing = Completion {
                Result { () throws(LivePlayError) in try sink.finish(timeout: .milliseconds(300)) }
            }
            guard let result = finishing.wait(for: .seconds(5)) else {
                // It hung: let the writer fail on EPIPE so the test ends.
                try pipe.fileHandleForReading.close()
                Issue.record("finish() did not give up on the stalled reader")
                return
            }
            let error = #expect(throws: LivePlayError.self) { try result.get() }
            #expect(error?.code == .outputStalled)
            #expect(sink.writtenFrames + sink.droppedFrames == 40)
            #expect(sink.droppedFrames > 0)
        }

        /// `| head -c 100`: the reader goes away. The write fails with EPIPE (SIGPIPE is blocked on the
        /// writer thread, so the test process survives) and the sink reports it.
        @Test func aClosedPipeIsAnErrorNotACrash() throws {
            let frames = try SinkFiles.testPatternFrames(count: 5)
            let pipe = Pipe()
            try pipe.fileHandleForReading.close()
            let sink = try Y4MSink(output: .descriptor(pipe.fileHandleForWriting.fileDescriptor))
            for frame in frames { sink.present(frame, timing: SinkMedia.timing(frame)) }
            let error = #expect(throws: LivePlayError.self) { try sink.finish() }
            #expect(error?.code == .outputClosed)
            #expect(sink.error?.code == .outputClosed)
            #expect(sink.writtenFrames == 0)
            // Pictures after the failure are ignored, not queued.
            sink.present(frames[0], timing: SinkMedia.timing(pts: 1000))
            #expect(sink.droppedFrames == 0)
        }

        @Test func aClosedPipeStopsTheSoundSinkToo() throws {
            let pipe = Pipe()
            try pipe.fileHandleForReading.close()
            let sink = try PCMSink(output: .descriptor(pipe.fileHandleForWriting.fileDescriptor), container: .raw)
            sink.play(AudioSamples(pts: .zero, sampleRate: 8000, channels: 1, samples: [0, 0.5], rate: 1))
            let error = #expect(throws: LivePlayError.self) { try sink.finish() }
            #expect(error?.code == .outputClosed)
            #expect(sink.writtenBlocks == 0)
        }
    }
}

// MARK: - Helpers

/// A fixture's decoded pictures and sound.
private struct SinkMedia {
    var video: [VideoFrame] = []
    var audio: [AudioFrame] = []

    init(_ path: String) throws {
        let reader = try MediaReader(path: path, options: MediaReader.Options(decodes: true))
        while let event = try reader.next() {
            switch event {
            case .videoFrame(let frame): video.append(frame)
            case .audioFrame(let frame): audio.append(frame)
            case .decodeError(let kind, let error): Issue.record("\(kind) decode error: \(error)")
            case .hardware(let notice, _): Issue.record("no device was asked for: \(notice)")
            case .element: break
            }
        }
    }

    /// The sound as the player hands it over: interleaved float, at rate 1.
    var audioBlocks: [AudioSamples] {
        audio.map {
            AudioSamples(
                pts: $0.pts, sampleRate: $0.sampleRate, channels: $0.channels, samples: $0.interleavedFloat32(),
                rate: 1)
        }
    }

    /// The bytes a sink should write for the sound, from the decoder's own conversions.
    func expectedPCM(_ format: PCMSink.SampleFormat) -> [UInt8] {
        switch format {
        case .f32le: audio.flatMap { $0.interleavedFloat32().withUnsafeBytes { Array($0) } }
        case .s16le: audio.flatMap { $0.interleavedInt16().withUnsafeBytes { Array($0) } }
        }
    }

    static func timing(_ frame: VideoFrame) -> FrameTiming {
        timing(pts: frame.pts.milliseconds)
    }

    static func timing(pts: Int64) -> FrameTiming {
        let pts = MediaTimestamp(milliseconds: pts)
        return FrameTiming(pts: pts, position: pts, rate: 1, droppedBefore: 0)
    }
}

/// Files, fixtures and the ffmpeg CLI for sink tests.
private enum SinkFiles {
    /// A queue that never fills in these tests, so oracle comparisons see every frame.
    static let unbounded = WriteQueueLimits(items: 100_000, bytes: 1 << 34)

    /// A new empty directory.
    static func directory() throws -> String {
        let path = NSTemporaryDirectory() + "liveplay-sinks-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Red 320x240 at 25 fps for 1 s, H.264 in FLV, in `pixelFormat` (libx264 picks the matching profile).
    static func redFixture(pixelFormat: String) throws -> String {
        try Fixtures.make(
            name: "red-\(pixelFormat)", extension: "flv",
            [
                "-f", "lavfi", "-i", "color=c=red:s=320x240:r=25", "-t", "1", "-c:v", "libx264", "-preset", "veryfast",
                "-pix_fmt", pixelFormat, "-g", "25", "-f", "flv",
            ])
    }

    /// One 64x48 `testsrc2` picture as raw bytes in `pixelFormat`, repacked from yuv420p by ffmpeg.
    static func rawTestPattern(pixelFormat: String, width: Int = 64, height: Int = 48) throws -> [UInt8] {
        let planar = try Fixtures.make(
            name: "testsrc2-\(width)x\(height)-yuv420p", extension: "yuv",
            [
                "-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height)", "-frames:v", "1", "-pix_fmt", "yuv420p",
                "-f", "rawvideo",
            ])
        guard pixelFormat != "yuv420p" else { return try Fixtures.bytes(planar) }
        let output = try ExternalTool.check(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                "-s", "\(width)x\(height)", "-i", planar, "-pix_fmt", pixelFormat, "-f", "rawvideo", "-",
            ])
        return [UInt8](output.standardOutput)
    }

    /// `count` yuv420p pictures 40 ms apart.
    static func testPatternFrames(count: Int, width: Int = 64, height: Int = 48) throws -> [VideoFrame] {
        let bytes = try rawTestPattern(pixelFormat: "yuv420p", width: width, height: height)
        return try (0..<count).map { index in
            try VideoFrame(
                packedBytes: bytes, width: width, height: height, pixelFormat: "yuv420p",
                pts: MediaTimestamp(milliseconds: Int64(index) * 40))
        }
    }

    /// The first line of a Y4M file, without its newline.
    static func headerLine(_ path: String) throws -> String {
        let bytes = try Fixtures.bytes(path)
        let end = try #require(bytes.firstIndex(of: 0x0A))
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// The file's sound as ffmpeg decodes it, in `format`.
    static func decodePCM(_ path: String, as format: PCMSink.SampleFormat) throws -> [UInt8] {
        let output = try ExternalTool.check(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", path, "-f", format.rawValue, "-"])
        return [UInt8](output.standardOutput)
    }

    /// Pictures as ffmpeg converts them to `rgb24`: all of them, or only the one at `frameIndex`.
    static func rgb24(decoding path: String, frameIndex: Int? = nil) throws -> [UInt8] {
        let select = frameIndex.map { ["-vf", "select=eq(n\\,\($0))", "-frames:v", "1"] } ?? []
        let output = try ExternalTool.check(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", path] + select
                + ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        return [UInt8](output.standardOutput)
    }

    static func little32(_ bytes: some Collection<UInt8>, at offset: Int) -> UInt32 {
        let field = Array(bytes.dropFirst(offset).prefix(4))
        guard field.count == 4 else { return 0 }
        return field.reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        return Double(zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.count)
    }
}

/// ffprobe's view of a file's first stream of one kind.
private enum SinkProbe {
    struct Stream: Decodable {
        var codec_name: String
        var width: Int
        var height: Int
        var r_frame_rate: String?
        var nb_read_frames: String?
    }

    struct Sound: Decodable {
        var codec_name: String
        var sample_rate: String?
        var channels: Int?
        var duration: String?
    }

    static func video(_ path: String) throws -> Stream {
        struct Document: Decodable { var streams: [Stream] }
        let output = try ExternalTool.check(
            "ffprobe",
            [
                "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                "stream=codec_name,width,height,r_frame_rate,nb_read_frames", "-of", "json", path,
            ])
        return try #require(try JSONDecoder().decode(Document.self, from: output.standardOutput).streams.first)
    }

    static func audio(_ path: String) throws -> Sound {
        struct Document: Decodable { var streams: [Sound] }
        let output = try ExternalTool.check(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "a:0", "-show_entries",
                "stream=codec_name,sample_rate,channels,duration",
                "-of", "json", path,
            ])
        return try #require(try JSONDecoder().decode(Document.self, from: output.standardOutput).streams.first)
    }
}

/// Runs work on its own thread, so a test can bound how long it waits for it.
private final class Completion<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value?
    private let done = DispatchSemaphore(value: 0)

    init(_ work: @escaping @Sendable () -> Value) {
        Thread.detachNewThread { [self] in
            let result = work()
            lock.withLock { value = result }
            done.signal()
        }
    }

    /// The result, or `nil` when the work did not finish within `limit`.
    func wait(for limit: Duration) -> Value? {
        guard done.wait(timeout: .now() + limit.seconds) == .success else { return nil }
        done.signal()  // later waits return at once
        return lock.withLock { value }
    }
}

/// A tool reading the test's bytes on its standard input (the sink writes there) and printing text.
private final class SinkProcess {
    private let process = Process()
    private let inputPipe = Pipe()
    private let outputPipe = Pipe()
    private let drain: PipeReader

    /// The descriptor to write the tool's input to.
    var input: Int32 { inputPipe.fileHandleForWriting.fileDescriptor }

    init(_ tool: String, _ arguments: [String]) throws {
        let executable = try #require(ExternalTool.find(tool))
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = inputPipe
        process.standardOutput = outputPipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        drain = PipeReader(outputPipe.fileHandleForReading)
    }

    /// Closes the tool's input and returns what it printed; its exit status must be 0.
    func finish() throws -> String {
        try inputPipe.fileHandleForWriting.close()
        let output = try #require(drain.wait().map { [UInt8]($0) })
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: output, as: UTF8.self)
    }
}
