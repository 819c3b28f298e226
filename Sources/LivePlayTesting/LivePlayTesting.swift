import Foundation

/// # LivePlayTesting
///
/// Support shared by tests, samples and benches, so none of it is copied around: ``Fixture`` media made
/// by the ffmpeg CLI at test time, ``Oracle`` answers from ffprobe and ffmpeg's `framemd5`,
/// ``FLVWriter`` for well-formed and deliberately broken streams, ``HEVCFixture`` for HEVC in both FLV
/// dialects, and ``ExternalTool`` to run command-line programs.
public enum LivePlayTesting {}

extension LivePlayTesting {
    /// Whether this process runs under AddressSanitizer or ThreadSanitizer, whose shadow memory and
    /// quarantine make RSS say nothing about the code under test (LeakSanitizer speaks for leaks).
    public static let isSanitized = ["__asan_init", "__tsan_init"].contains { (name: String) in
        dlsym(nil, name) != nil
    }
}
