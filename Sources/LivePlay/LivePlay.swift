/// # LivePlay
///
/// The library front ends use. For now: ``MediaReader``, which demuxes and decodes a local FLV file
/// end to end, and ``StreamDescription``. Live playback (``LivePlayer``) builds on the same chain.
@_exported public import LivePlayCore
@_exported public import LivePlayFLV
@_exported public import LivePlayDecode
