// # LivePlayTransport
//
// Byte sources that end in an FLV byte stream, behind one pull-based ``ByteSource`` / ``ByteConnection``
// abstraction: ``HTTPFLVSource`` on AsyncHTTPClient, ``RTMPSource`` through librtmp on a dedicated thread
// with every wait bounded and every message checked in Swift, and ``FileSource`` for local files.
// ``StreamURL`` says which of them a URL names, and ``StreamURL/check(_:)`` what is wrong with one before it connects.
//
// Only this module speaks HTTP: another module's requests (the cache's downloads) are ``HTTPFLVSource``s over an
// ``HTTPConnectionPool``, the one HTTP client handle it hands out; no AsyncHTTPClient or SwiftNIO type is in
// its API.
//
// The ``ConnectionSupervisor`` is what a player uses: it makes the source a URL names (and owns the HTTP
// client's lifetime), connects, reconnects as the ``ReconnectPolicy`` says, and hands over one ordered
// sequence of ``SupervisorEvent``s.
