// # LivePlayMonitor
//
// Many streams watched in one process, in the shape a Prometheus stack expects (docs/monitoring.md): a front end
// over `LivePlay`, like the window.
//
// | type | job |
// |---|---|
// | ``StreamList`` | the operator's list (`ID URL [options]`; refused where `play` would), IDs from URLs (no token) |
// | ``Shard`` | which streams this replica keeps: rendezvous hashing on the stream ID, no coordinator |
// | ``MonitorPlan`` | what a new list changes: streams to start, stop and restart (pure) |
// | ``StreamMetrics`` | one stream's Prometheus series, fed by its player's events and net status |
// | ``Monitor`` | plays every stream of the shard, reconnecting forever with a backoff; reloads a list |
// | ``MetricsServer`` | HTTP: `/metrics`, `/healthz`, `/probe?target=URL&seconds=S` (multi-target exporter pattern) |
// | `ProbeRequest` | a `/probe` query checked: a 400 with the reason, or the target and how long |
// | ``MonitorError`` | the monitor's own failures: the metrics address, a bad probe |
//
// The metrics address is bound (``MetricsServer/listen()``) before any stream starts, so an address in use is told
// first, with its own exit code in the CLI.
//
// Metrics go to swift-prometheus's `PrometheusCollectorRegistry` directly, with HELP text for every family
// (`promtool check metrics` lints a family without it; the swift-metrics facade has no place for it).
