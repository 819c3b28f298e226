/// # LivePlayTesting
///
/// Support shared by tests, samples and benches, so none of it is copied around: ``Fixture`` media made
/// by the ffmpeg CLI at test time, ``Oracle`` answers from ffprobe and ffmpeg's `framemd5`,
/// ``FLVWriter`` for well-formed and deliberately broken streams, ``HEVCFixture`` for HEVC in both FLV
/// dialects, and ``ExternalTool`` to run command-line programs.
public enum LivePlayTesting {}
