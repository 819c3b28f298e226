import Foundation
import LivePlayTesting
import Testing

/// What the dynamic loader maps when `liveplay` starts: SDL2 and libavformat (with the 53 shared objects they pull
/// in) are loaded by CLazyLibraries when a window, the sound device or a recording first needs them
/// (WindowCommandTests and RecordCommandTests show those still work).
@Suite struct StartupLibraryTests {
    @Test func neitherSDL2NorLibavformatIsLoadedAtStart() throws {
        // glibc's loader lists what it maps and exits before `main` (what `ldd` does).
        let output = try ExternalTool.check("env", ["LD_TRACE_LOADED_OBJECTS=1", Binary.path])
        let libraries = output.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(libraries.contains { $0.hasPrefix("libavcodec.so") }, "the listing is the loader's: \(libraries)")
        #expect(!libraries.contains { $0.hasPrefix("libSDL2") }, "\(libraries)")
        #expect(!libraries.contains { $0.hasPrefix("libavformat.so") }, "\(libraries)")
    }
}
