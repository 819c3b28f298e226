// # LivePlayLab
//
// The stream lab: what tests, benches and people use to put a player in front of a live stream that
// behaves like a real one, on loopback only (``Loopback``).
//
// - ``LiveFLVServer``: the live HTTP-FLV origin of LivePlayDemo (a file looped in real time, a GOP cache,
//   wall-clock stamps), named here with its ``LiveFLVProgram``, ``LiveFLVSchedule`` and ``FLVTagSplitter``
//   (LiveServer.swift) so that `import LivePlayLab` is all a lab user needs. It lives in its own module so the
//   `liveplay` binary's built-in demo links the server and not the lab.
// - ``ImpairmentProxy``: a TCP proxy with toxiproxy-style ``Toxic``s per direction, a timeline
//   (``ImpairmentTimeline``) and a runtime API; each direction is a ``ToxicPipe`` state machine.
// - ``LoadGenerator``: many concurrent HTTP-FLV readers that measure throughput and real-time keep-up.
// - ``StreamRecorder``: a raw client that records bytes with arrival times, for tests.
//
// Errors are ``LabError``; the server's and the loopback rule's are ``DemoError``. The `liveplay-lab` executable
// exposes `serve`, `proxy` and `load`.
