import ArgumentParser
import Foundation
import LivePlay
import Synchronization

/// `liveplay download URL…`: HTTP FLV files into the media cache, resumable, one JSON line per update.
struct DownloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Download HTTP FLV files into the media cache; run again to resume.",
        discussion: """
            Each URL is downloaded into the cache `liveplay URL --media-cache` plays from, at most \
            --max-concurrent at once. Ctrl-C (or SIGTERM) pauses: what arrived is kept, and the same command \
            resumes it with an HTTP Range request, checked with If-Range against the server's ETag or \
            Last-Modified so a file that changed starts over. stdout carries one JSON object per update \
            (docs/event-log.md); URLs are shown with their query values redacted.

            Exit codes: 0 every file downloaded (or paused by Ctrl-C or SIGTERM), or --list / --delete done; 64 \
            bad usage; 65 a response is not FLV (an HTML error page: nothing of it is kept); 69 a download failed \
            (unreachable, refused, lost after its retries); 74 the cache could \
            not be written (not enough free disk space, an I/O error).

            Files: the media cache directory (--media-cache-dir; $XDG_CACHE_HOME/liveplay, or \
            ~/.cache/liveplay), created if new.
            """
    )

    @Argument(help: "HTTP(S) URLs of FLV files (responses with a Content-Length).")
    var urls: [String] = []

    @OptionGroup(title: "Cache")
    var cache: MediaCacheOptions

    @Option(parsing: .unconditional, help: "Downloads at once.")
    var maxConcurrent = 1

    @Flag(help: "Remove these URLs' entries (complete or not) instead of downloading them.")
    var delete = false

    @Flag(help: "Print the cache's entries, most recently used first, and exit.")
    var list = false

    @Option(parsing: .unconditional, help: "Seconds without a byte before a connection counts as lost (retried).")
    var readTimeout: Double = 10

    func validate() throws {
        guard list || !urls.isEmpty else { throw ValidationError("give one or more URLs, or --list") }
        for url in urls where (try? StreamURL.kind(of: url)) != .httpFLV {
            throw ValidationError("\(Redaction.url(url)) is not an HTTP(S) URL: only files over HTTP are downloaded")
        }
        guard (1...16).contains(maxConcurrent) else { throw ValidationError("--max-concurrent must be 1…16") }
        try Seconds.check(readTimeout, "--read-timeout")
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        let mediaCache = try cache.open()
        if list {
            for entry in mediaCache.entries { print(Self.line(entry, in: mediaCache)) }
            return
        }
        if delete {
            for url in urls {
                var line = JSONLine()
                line.add("kind", "deleted")
                line.add("url", Redaction.url(url))
                do {
                    line.add("found", try mediaCache.delete(url))
                } catch {
                    Standard.error("liveplay: \(error.message)")
                    throw ExitCode(ExitStatus.ioError)
                }
                print(line.line)
            }
            return
        }
        let downloader = Downloader(
            cache: mediaCache,
            options: DownloadOptions(
                maximumConcurrent: maxConcurrent, transport: TransportOptions(noDataTimeout: .seconds(readTimeout))))
        for url in urls { downloader.add(url) }
        let failures = Failures()
        let stop = StopSignal()
        let watch = SignalWatch([SIGINT, SIGTERM]) { stop.fire(.interrupted) }
        defer { watch.cancel() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await downloader.run(untilIdle: true) { update in
                    if let error = update.error {
                        failures.append(error)
                        // Told on stderr too, as every error of the CLI is, whatever reads stdout.
                        Standard.error("liveplay: \(error.message)")
                    }
                    // Unbuffered, so a monitor reading the pipe sees each update as it happens.
                    FileHandle.standardOutput.write(Data((Self.line(update) + "\n").utf8))
                }
            }
            group.addTask { _ = await stop.reason() }
            // Done, or interrupted: cancelling the run pauses what is running, keeping what it holds.
            try await group.next()
            group.cancelAll()
        }
        guard let failure = failures.first else { return }
        let disk: Set<CacheError.Code> = [.notEnoughDiskSpace, .ioFailed]
        if failure.code == .notFLV { throw ExitCode(ExitStatus.dataError) }
        throw ExitCode(disk.contains(failure.code) ? ExitStatus.ioError : ExitStatus.unavailable)
    }

    static func line(_ update: DownloadUpdate) -> String {
        var line = JSONLine()
        line.add("kind", "download")
        line.add("event", update.kind.rawValue)
        line.add("id", update.id)
        line.add("url", update.url)
        line.add("bytes", update.bytes)
        if let length = update.length { line.add("length", length) }
        if let path = update.path { line.add("path", path) }
        if let error = update.error {
            line.add("cause", error.code.rawValue)
            line.add("message", error.message)
        }
        return line.line
    }

    static func line(_ entry: CacheEntry, in cache: MediaCache) -> String {
        var line = JSONLine()
        line.add("kind", "entry")
        line.add("url", entry.url)
        line.add("key", entry.key)
        line.add("bytes", cache.heldBytes(of: entry))
        if let length = entry.length { line.add("length", length) }
        line.add("complete", entry.isComplete)
        line.add("path", cache.dataPath(of: entry))
        return line.line
    }
}

/// The downloads' failures, from the updates' callback.
private final class Failures: Sendable {
    private let errors = Mutex<[CacheError]>([])

    func append(_ error: CacheError) { errors.withLock { $0.append(error) } }
    var first: CacheError? { errors.withLock { $0.first } }
}
