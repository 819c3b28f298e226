// # LivePlay
//
// The library front ends use. ``LivePlayer`` is the TXLivePlayer-shaped player (start, stop, pause, resume,
// the latency modes) reporting to a ``LivePlayListener`` off the play loop: every ``PlayEvent`` and a
// ``NetStatus`` a second. ``MediaReader`` demuxes and decodes a local FLV file; ``PacketPlayback`` plays
// packets a caller made itself (the latency simulator runs on it); ``StreamDescription`` summarises a stream.
// `Vocabulary.swift` names the lower modules' types a front end uses, so `import LivePlay` is all it needs.
//
// ## The stages
//
// ``LiveSession`` is the play loop. Each turn it moves values from one stage to the next:
//
// | stage | job | file |
// |---|---|---|
// | ``ConnectionSupervisor`` (LivePlayTransport) | connections, reconnects, FLV framing, goodput; one ordered sequence of events (with a ``MediaCache``, over a ``CachingSource``, whose file reads and appends run on the playback's thread as a local file's do) | `ConnectionSupervisor.swift` |
// | ``MediaIntake`` | one timeline across connections, which packets are played (resumes, seeks), codec configurations, wall-clock stamps | `MediaIntake.swift` |
// | ``PlayOut`` | jitter buffer and latency controller (``PlaybackEngine``), ``DecodeStage``, ``Presenter`` to the sinks; playing out the end | `PlayOut.swift` |
// | ``Recorder`` (a tap) | the packets taken, as they arrived, to a recording's writer thread; where files begin and end | `Recorder.swift`, `RecordingOutput.swift` |
// | ``SessionReporter`` | events, startup milestones, statistics, the net status, the summary; the words are ``Reports``' | `SessionReporter.swift`, `SessionReports.swift` |
//
// ## Threads
//
// What one playback runs on (counted with `ls /proc/PID/task` on a playing `liveplay`: 6 threads on
// HTTP-FLV, 6 on RTMP, the main thread included):
//
// | thread or executor | started by | what runs on it | how it ends |
// |---|---|---|---|
// | `liveplay-play` (``PlaybackThread``, a `TaskExecutor`) | ``LiveSession/run(onEvent:onStatus:)``, taken from ``PlaybackThreads`` (the threads of sessions that ended) or new | the play loop, the supervisor's task, demuxing, decoding, the sinks, the session's timers | given back when the session's `run` returns; ends when 16 already wait |
// | or the threads of a ``PlaybackThreadGroup`` (``LivePlayConfiguration/threads``; `liveplay monitor`: one per core) | the group, when it is made | the same, for every session given the group, in turn | when the group is released and its sessions have ended |
// | the same, for each stream a ``PreloadPool`` keeps ready | ``PreloadPool/preload(_:)`` | that stream's session while it preloads, then as a player's once switched to | as above, when the pool lets it go or its player stops |
// | SwiftNIO's singleton event loops, `NIO-SGLTN-*` (one per core) | the first HTTP-FLV connection in the process | HTTP-FLV sockets and TLS (AsyncHTTPClient); a response's body parts go into its `HTTPBodyReceiver`, which the supervisor's task takes from | shared by the process; never |
// | `liveplay-rtmp` | each RTMP connection | librtmp's blocking connect and reads | the connection closes |
// | `liveplay-watch` | each RTMP connection | its handshake deadline and goodput watchdog, which shut the socket down | the connection closes |
// | a resolver helper (unnamed) | a connection to a host name, not an address | one `getaddrinfo`, which cannot be interrupted | the lookup returns (abandoned after its timeout) |
// | a writer per file sink (`liveplay-y4m`, `liveplay-pcm`, …) | ``Y4MSink``, ``PCMSink``, ``SnapshotSink`` | writing to the file or pipe | the sink finishes |
// | `liveplay-record`, one per recording | ``PlaybackControl/startRecording(_:)`` (``Recorder``) | libavformat's muxer, the file's writes and free-space checks | the recording stops and its file is closed |
// | libdispatch workers (`…qos.overcommit`) | ``LivePlayer``'s serial delivery queue | listener callbacks, one at a time | idle for 5 s |
//
// Between them: `HTTPBodyReceiver` (event loop → supervisor, bounded: past 512 KiB the event loop stops reading the
// socket), `TransportHandoff` (supervisor → play loop, bounded, so the transport keeps its backpressure), `ByteHandoff` (the librtmp thread → the supervisor), a writer queue per sink and recording, and the
// listener queue. Locks guard state shared with other threads (``PlaybackControl``, the RTMP connection's
// control); every `@unchecked Sendable` type says why on the line above it.
