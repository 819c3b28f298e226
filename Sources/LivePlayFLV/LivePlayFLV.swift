// # LivePlayFLV
//
// FLV in pure Swift (no C, no Foundation): ``ByteReader`` / ``BitReader``, the wire constants of the
// Adobe FLV spec v10.1 and Enhanced RTMP v1, ``AMF0Decoder`` / ``AMF0Encoder``, the AVC / HEVC / AAC /
// MPEG-audio configuration parsers, and the incremental ``FLVDemuxer`` that turns bytes into
// ``FLVElement``s. Everything is a value type and can be fuzzed.
