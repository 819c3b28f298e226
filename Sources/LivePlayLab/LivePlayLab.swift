// # LivePlayLab
//
// The stream lab: what tests, benches and people use to put a player in front of a live stream that
// behaves like a real one, on loopback only (``Loopback``).
//
// - ``LiveFLVServer``: an HTTP-FLV origin that loops a file (``LiveFLVProgram``) in real time with rising
//   timestamps (``LiveFLVSchedule``), fans each tick's bytes (``LiveChunk``) out to every client, and starts
//   new clients at the last keyframe (``GOPCache``). Once a second it also sends a ``WallClockStamp``
//   (`onLivePlayClock`, paced by ``WallClockSchedule``) for end-to-end latency.
// - ``ImpairmentProxy``: a TCP proxy with toxiproxy-style ``Toxic``s per direction, a timeline
//   (``ImpairmentTimeline``) and a runtime API; each direction is a ``ToxicPipe`` state machine.
// - ``LoadGenerator``: many concurrent HTTP-FLV readers that measure throughput and real-time keep-up.
// - ``StreamRecorder``: a raw client that records bytes with arrival times, for tests.
// - ``FLVTagSplitter``: tag-level FLV access without copying.
// - ``DemoStream``: the one seam the `liveplay` CLI's built-in demo uses (a server in-process on a free port).
//
// Errors are ``LabError``. The `liveplay-lab` executable exposes `serve`, `proxy` and `load`.
