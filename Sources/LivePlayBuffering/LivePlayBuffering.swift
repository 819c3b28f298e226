/// # LivePlayBuffering
///
/// The player's decisions, as value types that take `now` and return actions (STYLE.md rules 2–3):
/// the reconnect policy, and (next) the jitter buffer and the latency controller. No clock, no I/O,
/// no concurrency.
public enum LivePlayBuffering {}
