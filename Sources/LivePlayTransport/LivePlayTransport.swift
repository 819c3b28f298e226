/// # LivePlayTransport
///
/// Byte sources that end in an FLV byte stream, behind one pull-based ``ByteSource`` / ``ByteConnection``
/// abstraction: ``HTTPFLVSource`` on AsyncHTTPClient, ``RTMPSource`` through librtmp on a dedicated thread
/// with every wait bounded and every message checked in Swift, and ``FileSource`` for local files.
public enum LivePlayTransport {}
