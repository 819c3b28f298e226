/// # LivePlayTransport
///
/// Byte sources that end in an FLV byte stream. For now ``FileSource``; HTTP-FLV and RTMP (through
/// librtmp, on its own thread) follow.
public enum LivePlayTransport {}
