// # LivePlayDecode
//
// H.264 / HEVC / AAC / MP3 decoding with libavcodec. ``VideoDecoder`` and ``AudioDecoder`` own their
// `AVCodecContext`; frames come out as ``VideoFrame`` / ``AudioFrame`` values that share
// libavcodec's buffers until someone asks for bytes; ``AudioTimeStretcher`` changes speed without pitch;
// pictures convert to ``RGBPicture`` and encode with ``PNGEncoder``. libavcodec is imported here and
// nowhere else.
