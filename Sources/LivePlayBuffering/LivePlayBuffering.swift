// # LivePlayBuffering
//
// The player's decisions, as value types that take `now` and return actions (STYLE.md rules 2–3): the
// ``JitterBuffer`` and the ``PlaybackEngine`` with the latency modes, the ``PresentationQueue`` of decoded
// frames, ``PlaybackStatistics`` for the net status and the timeline stitcher. No
// clock, no I/O, no concurrency.
