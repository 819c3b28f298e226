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

    /// The cache these options describe, opened (created if new). With `tellsFullDisk`, a disk already below
    /// --min-free is said once here: such a cache keeps nothing new, and playing goes on from the network (a
    /// download says it as its own failure).
    func open(tellsFullDisk: Bool = false) throws -> MediaCache {
        do {
            let cache = try MediaCache(
                options: .init(
                    directory: mediaCacheDir ?? MediaCache.Options.defaultDirectory, maximumEntries: mediaCacheEntries,
                    minimumFreeSpace: Int64(minFree) << 20, keys: CacheKeys(volatileParameters: Set(volatileParameters))))
            do {
                if tellsFullDisk { try cache.checkFreeSpace() }
            } catch {
                Standard.error(
                    "liveplay: the media cache keeps nothing new: \(error.message) (--min-free MIB lowers the limit)")
            }
            return cache
        } catch {
            Standard.error("liveplay: \(error.message)")
            throw ExitCode(ExitStatus.ioError)
        }
    }
}
