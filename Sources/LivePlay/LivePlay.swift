/// # LivePlay
///
/// The library front ends use: ``LivePlayer`` is the TXLivePlayer-shaped player (start, stop, pause, resume,
/// the latency modes) reporting to a ``LivePlayListener`` off the play loop: every ``PlayEvent`` and a
/// ``NetStatus`` a second. Underneath, ``LiveSession`` is the play loop: transport, demuxer, jitter buffer,
/// decoders, and the ``Presenter`` that hands frames to ``VideoSink`` / ``AudioSink`` at their time (ready
/// ones: ``Y4MSink``, ``PCMSink``, ``SnapshotSink``). ``MediaReader`` demuxes and decodes a local FLV file;
/// ``StreamDescription`` summarises a stream. The lower modules are re-exported, so `import LivePlay` is all
/// a front end needs.
///
/// ## Threads
///
/// What one playback runs on (counted with `ls /proc/PID/task` on a playing `liveplay`: 6 threads on
/// HTTP-FLV, 6 on RTMP, the main thread included):
///
/// | thread or executor | started by | what runs on it | how it ends |
/// |---|---|---|---|
/// | `liveplay-play` (``PlaybackThread``, a `TaskExecutor`) | ``LiveSession/run(onEvent:onStatus:)`` | the play loop, the supervisor's task, demuxing, decoding, the sinks, the session's timers | the session's `run` returns |
/// | SwiftNIO's singleton event loops, `NIO-SGLTN-*` (one per core) | the first HTTP-FLV connection in the process | HTTP-FLV sockets and TLS (AsyncHTTPClient) | shared by the process; never |
/// | `liveplay-rtmp` | each RTMP connection | librtmp's blocking connect and reads | the connection closes |
/// | `liveplay-watch` | each RTMP connection | its deadlines and goodput watchdog, which shut the socket down | the connection closes |
/// | libdispatch workers (`…qos.overcommit`) | ``LivePlayer``'s serial delivery queue | listener callbacks, one at a time | idle for 5 s |
@_exported public import LivePlayCore
@_exported public import LivePlayFLV
@_exported public import LivePlayDecode
@_exported public import LivePlayTransport
@_exported public import LivePlayBuffering
