// # LivePlayCore
//
// The vocabulary every liveplay module shares: ``MediaTimestamp`` (with 32-bit unwrapping),
// ``MediaKind``, the codec identifiers and configurations, and ``EncodedPacket``.
// Standard library only: no clock, no I/O, no Foundation.
