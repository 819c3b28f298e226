import Logging
import LivePlayCore
import LivePlayTransport

/// Where a download's bytes come from: a file from its first byte, or the rest of it from an offset if it has not
/// changed (``HTTPFLVSource``; a test's scripted server).
protocol DownloadSource: Sendable {
    func makeConnection() -> any ByteConnection
    func makeConnection(continuingAt offset: Int64, ifRange validator: String?) -> any ByteConnection
}

extension HTTPFLVSource: DownloadSource {}

/// One download from start to end: fetches what the entry does not hold yet, with `Range` and `If-Range`,
/// retrying a lost connection as the ``ReconnectPolicy`` says, until the file is whole, it fails, or it is
/// told to stop.
struct Transfer: Sendable {
    let id: Int
    let url: String
    let cache: MediaCache
    let options: DownloadOptions
    let source: any DownloadSource
    /// What a retry waits by.
    let clock: any Clock<Duration>
    let logger: Logger
    let signal: StopRequest<StopReason>
    let report: @Sendable (DownloadUpdate) -> Void

    /// What the fetching child ended with: whether the file is whole (`nil`: cut short by cancellation), and
    /// what the entry holds.
    private struct Fetched: Sendable {
        var completed: Bool?
        var heldBytes: Int64
        var length: Int64?
    }

    /// Whether the file is complete in the cache.
    func run() async -> Bool {
        // Races the work against a stop, so a pause or cancel does not wait for a read to time out.
        let fetched = await withTaskGroup(of: Fetched?.self) { group in
            group.addTask { await fetch() }
            group.addTask {
                await signal.wait()
                return nil
            }
            var fetched: Fetched?
            for await result in group {
                group.cancelAll()
                if let result { fetched = result }
            }
            return fetched
        }
        let held = fetched?.heldBytes ?? 0, length = fetched?.length
        switch (signal.reason, fetched?.completed) {
        case (.cancelled?, _), (.deleted?, _):
            _ = try? cache.delete(url)
            report(update(.cancelled, bytes: 0, length: length))
            return false
        case (_, let completed?):
            // It ended on its own, and said so, before a pause took effect: a file completed stays completed, and
            // a transfer's updates end once.
            return completed
        case (_, nil):
            // Cut short by a pause, or by the run's cancellation: a pause that keeps what is held.
            report(update(.paused, bytes: held, length: length))
            return false
        }
    }

    private func fetch() async -> Fetched {
        let writer: CacheWriter
        do {
            guard let taken = try cache.writer(for: url) else {
                let busy = CacheError(.busy, "\(Redaction.url(url)) is being written by another download or playback")
                return Fetched(completed: failed(busy, bytes: 0), heldBytes: 0)
            }
            writer = taken
        } catch {
            return Fetched(completed: failed(error, bytes: 0), heldBytes: 0)
        }
        let completed = await fetch(into: writer)
        writer.close()
        return Fetched(completed: completed, heldBytes: writer.heldBytes, length: writer.entry.length)
    }

    private func fetch(into writer: CacheWriter) async -> Bool? {
        var policy = ReconnectPolicy(retryCount: options.retryCount, retryInterval: options.retryInterval)
        report(update(.started, bytes: writer.heldBytes, length: writer.entry.length))
        while true {
            if Task.isCancelled { return nil }
            if writer.isComplete {
                // Held whole already: marked complete here if a pause or a crash came after its last byte.
                do {
                    try writer.finish()
                } catch {
                    return failed(error, bytes: writer.heldBytes)
                }
                return completed(writer)
            }
            let continuation = writer.continuation
            let connection: any ByteConnection
            do {
                try cache.checkFreeSpace()
                if let continuation {
                    connection = source.makeConnection(continuingAt: continuation.offset, ifRange: continuation.validator)
                } else {
                    try writer.truncate()
                    connection = source.makeConnection()
                }
            } catch {
                return failed(error, bytes: writer.heldBytes)
            }
            var file: RemoteFile?
            /// A body from the start, taken on once its first bytes are FLV's.
            var pending: RemoteFile?
            var reported = writer.heldBytes
            do {
                while let event = try await connection.next() {
                    switch event {
                    case .remoteFile(let remote):
                        if let continuation, remote.bodyStart == 0 {
                            logger.info("the file changed on the server", metadata: ["held": "\(continuation.offset)"])
                            report(update(.restarted, bytes: 0, length: remote.length))
                        }
                        file = remote
                        guard remote.bodyStart != 0 else {
                            pending = remote
                            break
                        }
                        guard try writer.begin(remote) else {
                            throw TransportError(.protocolViolation, "the server sent bytes from \(remote.bodyStart), not \(writer.heldBytes)")
                        }
                        reported = writer.heldBytes
                        policy.mediaReceived()
                    case .bytes(let bytes):
                        guard file != nil else {
                            await connection.close()
                            let live = "\(Redaction.url(url)) is a live stream (its response has no Content-Length), "
                                + "not a file to download: record it with liveplay URL --record FILE"
                            return failed(CacheError(.notAFile, live), bytes: 0)
                        }
                        if let remote = pending {
                            pending = nil
                            // An HTML error page answered with 200 is no file: nothing of it is kept.
                            if let problem = Self.notFLV(bytes) {
                                await connection.close()
                                let notFLV = CacheError(.notFLV, "\(Redaction.url(url)) is not an FLV file: \(problem)")
                                return failed(notFLV, bytes: 0)
                            }
                            _ = try writer.begin(remote)
                            reported = 0
                            policy.mediaReceived()
                        }
                        try writer.append(bytes)
                        if writer.heldBytes - reported >= options.progressEvery {
                            reported = writer.heldBytes
                            report(update(.progress, bytes: writer.heldBytes, length: file?.length))
                        }
                    default:
                        break
                    }
                }
                await connection.close()
                try writer.finish()
                if writer.isComplete { return completed(writer) }
                throw TransportError(.serverClosed, "the body ended at \(writer.heldBytes) of \(file?.length ?? 0) bytes")
            } catch let error as CacheError {
                await connection.close()
                return failed(error, bytes: writer.heldBytes)
            } catch {
                await connection.close()
                if Task.isCancelled { return nil }
                let lost = error as? TransportError ?? TransportError(.readFailed, "\(error)")
                guard case .retry(_, let delay) = policy.connectionLost() else {
                    return failed(CacheError(.transportFailed, lost.message), bytes: writer.heldBytes)
                }
                report(update(.retrying, bytes: writer.heldBytes, length: writer.entry.length))
                do {
                    try await clock.sleep(for: delay)
                } catch {
                    return nil
                }
            }
        }
    }

    /// What the first bytes of a body say it is instead of a media file, or nil: an HTML or XML page (an error page
    /// answered with 200), told by its first bytes being text that opens with `<`. Anything else is kept as sent:
    /// the cache holds files, and only a page is known not to be one.
    static func notFLV(_ bytes: [UInt8]) -> String? {
        let head = bytes.prefix(64).drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 >= 0xEF }
        guard head.first == UInt8(ascii: "<"),
            head.allSatisfy({ $0 >= 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D })
        else { return nil }
        return "it is an HTML or XML page (an error page?)"
    }

    private func completed(_ writer: CacheWriter) -> Bool {
        var done = update(.completed, bytes: writer.heldBytes, length: writer.entry.length)
        done.path = writer.path
        report(done)
        return true
    }

    private func failed(_ error: CacheError, bytes: Int64) -> Bool {
        var failure = update(.failed, bytes: bytes, length: nil)
        failure.error = error
        report(failure)
        return false
    }

    private func update(_ kind: DownloadUpdate.Kind, bytes: Int64, length: Int64?) -> DownloadUpdate {
        DownloadUpdate(id: id, url: Redaction.url(url), kind: kind, bytes: bytes, length: length)
    }
}
