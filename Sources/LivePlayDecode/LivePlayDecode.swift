/// # LivePlayDecode
///
/// H.264 / HEVC / AAC / MP3 decoding with libavcodec. ``VideoDecoder`` and ``AudioDecoder`` own their
/// `AVCodecContext`; frames come out as ``VideoFrame`` / ``AudioFrame`` values that share
/// libavcodec's buffers until someone asks for bytes. libavcodec is imported here and nowhere else.
public enum LivePlayDecode {}
