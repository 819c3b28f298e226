/// # LivePlay
///
/// The library front ends use: ``LiveSession`` plays a live HTTP(S)-FLV or RTMP URL and reports every
/// stage as a TXLivePlayer ``PlayEvent``; ``MediaReader`` demuxes and decodes a local FLV file end to end;
/// ``StreamDescription`` summarises a stream. The lower modules are re-exported, so `import LivePlay`
/// is all a front end needs.
@_exported public import LivePlayCore
@_exported public import LivePlayFLV
@_exported public import LivePlayDecode
@_exported public import LivePlayTransport
@_exported public import LivePlayBuffering
