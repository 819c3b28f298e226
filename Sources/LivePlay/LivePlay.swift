/// # LivePlay
///
/// The library front ends use: ``LivePlayer`` is the TXLivePlayer-shaped player (start, stop, pause, resume,
/// the latency modes) reporting to a ``LivePlayListener`` off the play loop: every ``PlayEvent`` and a
/// ``NetStatus`` a second. Underneath, ``LiveSession`` is the play loop: transport, demuxer, jitter buffer,
/// decoders, and the ``Presenter`` that hands frames to ``VideoSink`` / ``AudioSink`` at their time (ready
/// ones: ``Y4MSink``, ``PCMSink``, ``SnapshotSink``). ``MediaReader`` demuxes and decodes a local FLV file;
/// ``StreamDescription`` summarises a stream. The lower modules are re-exported, so `import LivePlay` is all
/// a front end needs.
@_exported public import LivePlayCore
@_exported public import LivePlayFLV
@_exported public import LivePlayDecode
@_exported public import LivePlayTransport
@_exported public import LivePlayBuffering
