import LivePlayFuzzing

/// libFuzzer's entry point (libFuzzer provides `main`): a problem aborts, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let problem = FuzzTargets.m3uPlaylist(input) { fatalError(problem) }
    return 0
}
