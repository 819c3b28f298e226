// # LivePlayDemo
//
// One job: serve an FLV file as a live HTTP-FLV stream on loopback, over TCP as a real origin does. The `liveplay`
// CLI's built-in demo plays it (``DemoStream``), so the product binary links this module and not the stream lab;
// the lab (LivePlayLab) builds its tests, benches and `liveplay-lab serve` on the same server.
//
// - ``LiveFLVServer``: an HTTP-FLV origin that loops a file (``LiveFLVProgram``) in real time with rising
//   timestamps (``LiveFLVSchedule``), fans each tick's bytes (``LiveChunk``) out to every client, and starts
//   new clients at the last keyframe (``GOPCache``). Once a second it also sends a ``WallClockStamp``
//   (`onLivePlayClock`, paced by ``WallClockSchedule``) for end-to-end latency.
// - ``FLVTagSplitter``: tag-level FLV access without copying.
// - ``Loopback``: the network rule: the server binds on loopback only.
// - ``DemoStream``: the CLI's seam: a server in this process on a free port, and the one URL to play.
//
// Built on SwiftNIO: one timer on one event loop paces the stream for every client. Errors are ``DemoError``.
