// # LivePlayWire
//
// What a server sends, checked before anything trusts it, in pure Swift (no C, no Foundation) so it can
// be fuzzed: RTMP chunk headers and messages (``RTMPChunkHeader``, ``RTMPMessageGuard``) before librtmp
// allocates for them or handles them, RTMP media turned into FLV tags (``FLVTagWriter``), and the HTTP-FLV
// response a stream arrives in (``HTTPFLVResponse``). The transports do the I/O and map ``WireError`` to
// their own errors.
