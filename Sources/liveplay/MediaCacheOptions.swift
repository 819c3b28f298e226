import ArgumentParser
import LivePlay

/// Where media on demand is kept (docs/cache.md): shared by `liveplay download` and `liveplay URL --media-cache`.
struct MediaCacheOptions: ParsableArguments {
    @Option(help: "The cache directory (default: $XDG_CACHE_HOME/liveplay or ~/.cache/liveplay).")
    var mediaCacheDir: String?

    @Option(parsing: .unconditional, help: "Most files the cache keeps; past it the least recently used goes.")
    var mediaCacheEntries = 50

    @Option(parsing: .unconditional, help: "Stop writing to the cache when the disk has less than this many MiB free.")
    var minFree = 1024

    @Option(
        name: .customLong("volatile-param"),
        help: "A query parameter left out of the cache key (a signed URL's token); repeat for each.")
    var volatileParameters: [String] = []

    func validate() throws {
        if mediaCacheEntries < 1 { throw ValidationError("--media-cache-entries must be 1 or more") }
        if minFree < 0 { throw ValidationError("--min-free must be 0 or more MiB") }
    }

    /// The cache these options describe, opened (created if new).
    func open() throws -> MediaCache {
        do {
            return try MediaCache(
                options: .init(
                    directory: mediaCacheDir ?? MediaCache.Options.defaultDirectory, maximumEntries: mediaCacheEntries,
                    minimumFreeSpace: Int64(minFree) << 20, keys: CacheKeys(volatileParameters: Set(volatileParameters))))
        } catch {
            Standard.error("liveplay: \(error.message)")
            throw ExitCode(ExitStatus.ioError)
        }
    }
}
