// # LivePlay
//
// The library front ends use. ``LivePlayer`` is the TXLivePlayer-shaped player (start, stop, pause, resume,
// the latency modes) reporting to a ``LivePlayListener`` off the play loop: every ``PlayEvent`` and a
// ``NetStatus`` a second. ``MediaReader`` demuxes and decodes a local FLV file; ``PacketPlayback`` plays
// packets a caller made itself (the latency simulator runs on it); ``StreamDescription`` summarises a stream.
// `Vocabulary.swift` names the lower modules' types a front end uses, so `import LivePlay` is all it needs.
//
// ## The rooms
//
// The target is in folders by job: `Player/` (``LivePlayer``, ``PlaybackControl`` and the other surfaces front ends
// call), `Session/` (``LiveSession``, the play loop), `Stages/` (the stages below), `Switching/` (preloading and
// switching), `Reporting/`, `Recording/`, `Sinks/` (the ready outputs) and `Threads/` (threads, clocks, hand-offs).
// Only the vocabulary a front end meets first is at the top. docs/architecture.md walks one video tag from the socket
// to the screen and one command from the API to the stage that acts, naming the files and hops.
//
// ## The stages
//
// ``LiveSession`` is the play loop and the connection's state (`LiveSession.swift`; what the transport delivers is
// carried out in `SessionTransport.swift`, seeking in `SessionSeeking.swift`); ``SessionSource`` makes its source
// (with the media cache for HTTP when configured). Each turn it takes its control's commands, then moves values from
// one stage to the next:
//
// | stage | job | file |
// |---|---|---|
// | ``ConnectionSupervisor`` (LivePlayTransport) | connections, reconnects, FLV framing, goodput; one ordered sequence of events (with a ``MediaCache``, over a ``CachingSource``, whose file reads and appends run on the playback's thread as a local file's do) | `ConnectionSupervisor.swift` |
// | ``MediaIntake`` | one timeline across connections, which packets are played (resumes, seeks), codec configurations, wall-clock stamps | `MediaIntake.swift` |
// | ``PlayOut`` | jitter buffer and latency controller (``PlaybackEngine``), ``DecodeStage``, the pictures' captions (``CaptionStage``), ``Presenter`` to the sinks with what goes with each picture (``PictureAttachments``); playing out the end; on standby (preloading: the newest GOP kept, its keyframe the poster) ``StandbyPlayOut`` | `PlayOut.swift`, `PlayOutInput.swift`, `PlayOutOutput.swift`, `PlayOutControl.swift` (the commands routed to it), `CaptionStage.swift`, `PictureAttachments.swift`, `StandbyPlayOut.swift`, `EndDrain.swift` (playing out the end) |
// | ``PosterDecoder`` | a keyframe decoded on its own, at once: a session's first picture, a preloaded stream's poster | `PosterDecoder.swift` |
// | ``PacketTaps`` | the taps the loop calls with every packet taken and every read: recordings (``Recorder``, to a writer thread; where files begin and end), the arrival trace | `PacketTaps.swift`, `Recorder.swift`, `RecordingOutput.swift` |
// | ``SessionReporter`` | events, startup milestones, statistics, the net status, the summary; the words are ``Reports``' | `SessionReporter.swift`, `SessionReports.swift`, `PlaybackReports.swift`, `StreamContentReports.swift` |
//
// ## One concurrency model
//
// Four mechanisms, and no other in the product modules (everything but LivePlayTesting and LivePlayLab):
//
// 1. **Threads liveplay owns**, each named (`nameCurrentThread`, LivePlayTransport) and each sleeping only on a
//    `NSCondition` of its own: ``PlaybackThread``, a `TaskExecutor` with its own timer heap, runs play loops and
//    listener deliveries; dedicated threads run what blocks in C or on a file (librtmp's reads and watchdog, a
//    resolver's `getaddrinfo`, each file sink's and recording's writer, the SDL window).
// 2. **`Synchronization.Mutex`** for every piece of state two threads share; no other lock.
// 3. **Swift structured concurrency** between them: a playback's play loop, its supervisor and their waits are
//    child tasks of its `run`, on its ``PlaybackThread`` by executor preference; a thread hands a value to a task
//    only by resuming a continuation under the `Mutex` of the type that owns the hand-off (``TransportHandoff``,
//    `HTTPBodyReceiver`, `ByteHandoff`, `Latch` and the `StopRequest` made of it), or through an `AsyncStream`
//    (``LivePlayer/updates()``, the jobs of a player's run). The waits a playback makes on every turn and read
//    (``TransportHandoff``, `HTTPBodyReceiver`, `ByteHandoff`, ``PlaybackThread``'s sleep) use unsafe
//    continuations, which allocate nothing; each is resumed by whoever takes it from under that `Mutex`, once.
// 4. **SwiftNIO's event loops** for sockets: HTTP(S)-FLV and downloads (AsyncHTTPClient), the monitor's metrics
//    server.
//
// Why these: a playback is a stream of short C calls and a turn each time a picture falls due or a read arrives. On a
// thread of its own (or a group's) it stays off the cooperative pool the host application owns, its waits arm no
// libdispatch timer, and the process keeps the same threads from a session's first second to its last (the table
// below, which `ThreadCountTests` checks on a playing `liveplay`). Blocking C calls get threads of their own for the
// same reason (STYLE.md rule 8), and NIO is what AsyncHTTPClient runs on. The CLI's signals come the same way: a
// handler writes to a pipe that its `liveplay-signal` thread reads (`SignalWatch`); no libdispatch source or queue
// is used.
//
// Commands go in and updates come out (STYLE.md rule 19): a caller changes a playing session only by sending a
// ``PlayerCommand`` (``LivePlayer/send(_:)``, whose TXLivePlayer-named calls are conveniences for it, or a session's
// ``PlaybackControl/send(_:)``) into a mailbox the loop empties at the start of each turn; the loop tells the world
// what happened through its events and net status, what the playback is as a typed ``PlaybackState`` when that changes
// (front ends render it and keep no copies), and publishes the few facts its owner needs (the live edge, what a
// preloading session holds, the last picture) in one value only it writes.
//
// ## Threads
//
// What one playback runs on (counted in `/proc/PID/task` on a playing `liveplay` by `ThreadCountTests`: 9 threads on
// HTTP-FLV and on RTMP on a 2-core machine, the main thread, the CLI's signal thread, the cooperative pool's two and
// one more the Swift runtime starts included; 12 with two streams preloaded; 9 for a monitor of 4 or of 24 streams):
//
// | thread or executor | started by | what runs on it | how it ends |
// |---|---|---|---|
// | `liveplay-play` (``PlaybackThread``, a `TaskExecutor`) | ``LiveSession/run(onEvent:onStatus:)``, taken from ``PlaybackThreads`` (the threads of sessions that ended) or new | the play loop, the supervisor's task, demuxing, decoding, the sinks, the session's timers; with time-shift, the recorder's task (the live source into the ring, a child of the session like the supervisor's) and the ring's small file reads and writes | given back when the session's `run` returns; ends when 16 already wait |
// | another `liveplay-play`, the listener's | ``LivePlayer``, for each playback | the listener's callbacks, one at a time, off the play loop | given back when the playback's updates are all delivered |
// | or the threads of a ``PlaybackThreadGroup`` (``LivePlayConfiguration/threads``; `liveplay monitor`: one per core) | the group, when it is made | the same, for every session and listener given the group, in turn | when the group is released and its sessions have ended |
// | the same, for each stream a ``PreloadPool`` keeps ready, and one for the pool's ``PreloadPool/onChange`` | ``PreloadPool/preload(_:)``, the pool | that stream's session while it preloads, then as a player's once switched to; the pool's notices | as above, when the pool lets it go or its player stops; the pool's when the pool is released |
// | SwiftNIO's singleton event loops, `NIO-SGLTN-*` (one per core) | the first HTTP-FLV connection in the process | HTTP-FLV sockets and TLS (AsyncHTTPClient); a response's body parts go into its `HTTPBodyReceiver`, which the supervisor's task takes from | shared by the process; never |
// | `liveplay-rtmp` | each RTMP connection | librtmp's blocking connect and reads | the connection closes |
// | `liveplay-watch` | each RTMP connection | its handshake deadline and goodput watchdog, which shut the socket down | the connection closes |
// | `liveplay-resolve` | a connection to a host name, not an address | one `getaddrinfo`, which cannot be interrupted | the lookup returns (abandoned after its timeout) |
// | a writer per file sink (`liveplay-y4m`, `liveplay-pcm`, `liveplay-vtt`, …) | ``Y4MSink``, ``PCMSink``, ``SnapshotSink``, ``ArrivalTraceFile``, ``WebVTTFile`` | writing to the file or pipe | the sink finishes |
// | `liveplay-thumbs`, one per ``ThumbnailReader`` | a front end, for a seek bar's hover preview of a file, local or over HTTP, or of the time-shift window (the window: on the first hover) | the file's keyframe index (the ring's: asked under its `Mutex`), reading a keyframe (over HTTP: waiting for AsyncHTTPClient's future of a byte range, its I/O on SwiftNIO's loops) and decoding it on a decoder of its own | the reader is stopped |
// | `liveplay-record`, one per recording | ``PlayerCommand/startRecording(_:)`` (``Recorder``) | libavformat's muxer, the file's writes and free-space checks | the recording stops and its file is closed |
// | `liveplay-signal` (the CLI) | the first `SignalWatch` | SIGINT / SIGTERM (stop), SIGHUP (the monitor's reload), SIGWINCH (the status line) | the process's |
// | `liveplay-window` (LivePlayWindow) | ``PlayerWindow`` | SDL: the window, its events, drawing | the window closes |
// | `liveplay-mpris` (LivePlayMPRIS) | `MPRISService`, when a window opens | sd-bus: the session bus's calls answered from the state the front end set (a `Mutex`), changes told, in `poll(2)` on the bus and a wake pipe between | `close()`, then the name is given back |
// | Swift's cooperative pool (`…default-qos`, one per core) | the Swift runtime | tasks with no executor preference: a front end's own, the runs of players and pools (``OwnedTasks``), `stopPlay`'s wait, a `switchStream`'s | the process's |
//
// Between them: `HTTPBodyReceiver` (event loop → supervisor, bounded: past 512 KiB the event loop stops reading the
// socket), ``TransportHandoff`` (supervisor → play loop, bounded, so the transport keeps its backpressure; the one
// thing going back, a multitrack stream's track choice, waits under the same `Mutex` for the supervisor's next read),
// `ByteHandoff` (the librtmp thread → the supervisor), a `Latch` (while a backup plays, the supervisor's child task
// that probes the first source → the supervisor's read loop, which looks at it between reads), ``TimeShiftRing`` (its
// recorder → the supervisor reading it: an index under one `Mutex`, the bytes in its files, a reader at the newest tag
// woken by the next append), a writer queue per sink and recording, ``UpdateDelivery`` (play loop → listener, bounded,
// dropping net status first), a `PayloadPool` (play loop → supervisor: the payloads of packets decoded, for the
// demuxer's next packets, under its `Mutex`; never waited on) and the control's mailbox (any thread → play loop). Every
// `@unchecked Sendable` type says why on the line above it; there are at most 15 in the product modules:
// `grep -rn "@unchecked Sendable" Sources --include=*.swift | grep -v "LivePlayTesting\|LivePlayLab"`.
//
// The TXLivePlayer-shaped calls (`startPlay`, `switch`, `switchStream`, ``PreloadPool/preload(_:)``) return at once:
// each hands its work to the player's or the pool's run (``OwnedTasks``), one task started when the player or pool
// is made, whose children the playbacks, a `switchStream`'s wait and the preloaded streams are; a call stops one
// through its ``OwnedTask`` and awaits how it ended. That run is the one task the library starts outside a task, and
// the reason: a call that returns at once has no task of its caller's to be a child of.
//
// ## Time
//
// A session runs on the clock it is given (``LiveSession``'s `C`, a ``SessionClock``), and so does everything above it:
// ``LivePlayer``, ``PreloadPool`` and the monitor take `any SessionClock`, the downloader `any Clock<Duration>` (the
// real one by default), and a session's clock is opened where the session is made (`runSession(on:…)`). The clock
// says how it is waited on, by its instants (``SessionClock/realInstant(_:)``): the real clock's ticks and the
// transport's deadlines are timed by the session's ``PlaybackThread``; a test's `VirtualClock` (LivePlayTesting) is
// slept on, and time moves when the loop sleeps, so a file plays through a player in milliseconds and a monitor's
// backoff of minutes passes at once. A socket delivers in real time, so a session on the network stays on the real
// clock; its tests wait for what they need
// (`eventually(within:)`, LivePlayTesting), never for a fixed time.
