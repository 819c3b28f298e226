import Foundation
import LivePlayTesting
import LivePlayTransport
import Logging
import Synchronization
import Testing

@testable import LivePlayCache

/// Pauses and resumes at each moment of a paused transfer's stop, many times over: a scripted server calls the
/// script from its reads and closes, and the downloader from its updates, so the order of events is set by the
/// script, not by sleeping. Every case ends with the whole file, fetched one transfer at a time.
@Suite struct PauseResumeTimingTests {
    @Test func pausesAndResumesAtAnyMomentOfAStopEndWithTheWholeFile() async throws {
        for seed in UInt64(1)...200 {
            let plan = Plan(seed: seed)
            let outcome = try await Self.download(plan)
            let problems = outcome.problems(plan)
            #expect(problems.isEmpty, "seed \(seed), \(plan): \(problems); updates \(outcome.summary)")
            if !problems.isEmpty { break }
        }
    }

    /// Downloads the plan's file through a ``Downloader``, running it again while a pause wants a later run.
    static func download(_ plan: Plan) async throws -> Outcome {
        let directory = NSTemporaryDirectory() + "liveplay-pause-timing-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try MediaCache(options: .init(directory: directory, minimumFreeSpace: 0))
        let server = ScriptedFileServer(plan: plan)
        var logger = Logger(label: "pause-timing")
        logger.logLevel = .critical
        let downloader = Downloader(
            cache: cache, options: DownloadOptions(progressEvery: Int64(ScriptedFileServer.readSize)), logger: logger
        ) { _, _ in server }
        let url = "http://127.0.0.1:9/scripted.flv"
        server.attach(downloader, id: downloader.add(url))
        // One run, and one more for each pause resumed by a later run: a bounded number, so a case never hangs.
        for _ in 0...plan.pauses.count {
            try await downloader.run(untilIdle: true, onUpdate: server.updated)
            guard server.resumeForALaterRun() else { break }
        }
        let path = server.updates.last { $0.kind == .completed }?.path
        return Outcome(
            updates: server.updates, requests: server.requests, mostOpen: server.mostOpen,
            held: path.flatMap { FileManager.default.contents(atPath: $0) }.map { [UInt8]($0) },
            indexedComplete: cache.entry(for: url)?.isComplete == true)
    }

    /// When, in a paused transfer's stop, the download is resumed.
    enum Moment: CaseIterable, Sendable {
        /// With the pause, before the transfer has noticed it.
        case withThePause
        /// While the paused transfer closes its connection.
        case whileItsConnectionCloses
        /// On the `paused` update, before the paused transfer has ended (where a resume started a second transfer).
        case onThePausedUpdate
        /// By a later run, once the paused transfer has ended and the run is idle.
        case inALaterRun
    }

    /// A file, and the pauses made while it downloads.
    struct Plan: Sendable, CustomStringConvertible {
        /// A pause once the transfer has read past `at`, resumed at `resume`; `twice`: paused and resumed once more
        /// at that moment.
        struct Pause: Sendable {
            var at: Int64
            var resume: Moment
            var twice: Bool
        }

        var file: [UInt8]
        var pauses: [Pause]

        init(seed: UInt64) {
            var generator = SplitMix(seed: seed)
            let read = ScriptedFileServer.readSize
            let length = Int.random(in: 4 * read...16 * read, using: &generator)
            file = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            pauses = (0..<Int.random(in: 1...4, using: &generator)).map { _ in
                Pause(
                    at: Int64.random(in: 1..<Int64(length), using: &generator),
                    resume: Moment.allCases.randomElement(using: &generator)!, twice: Bool.random(using: &generator))
            }.sorted { $0.at < $1.at }
        }

        var description: String {
            "\(file.count) bytes, " + pauses.map { "pause at \($0.at), resume \($0.resume)\($0.twice ? " twice" : "")" }
                .joined(separator: "; ")
        }
    }

    struct Outcome {
        var updates: [DownloadUpdate]
        /// Where each request asked the file to start (`Range`), in order.
        var requests: [Int64]
        var mostOpen: Int
        var held: [UInt8]?
        /// The index says the entry is complete (a playback takes it from disk).
        var indexedComplete: Bool

        var summary: String { updates.map { "\($0.kind.rawValue) \($0.bytes)" }.joined(separator: ", ") }

        /// What a download paused and resumed promises, broken.
        func problems(_ plan: Plan) -> [String] {
            var problems: [String] = []
            if held != plan.file { problems.append("the cached file is not the file") }
            if !indexedComplete { problems.append("the index does not say the entry is complete") }
            if mostOpen > 1 { problems.append("\(mostOpen) connections open at once") }
            // Transfer by transfer: started, progress, then paused or (the last) completed.
            var transfers: [[DownloadUpdate]] = []
            for update in updates {
                if update.kind == .started { transfers.append([]) }
                if transfers.isEmpty { transfers.append([]) }
                transfers[transfers.count - 1].append(update)
            }
            for (index, transfer) in transfers.enumerated() {
                let kinds = transfer.map(\.kind)
                let last = index == transfers.count - 1
                guard kinds.first == .started, kinds.dropFirst().dropLast().allSatisfy({ $0 == .progress }),
                    kinds.count > 1, kinds.last == (last ? .completed : .paused)
                else {
                    problems.append("transfer \(index + 1) went \(kinds.map(\.rawValue))")
                    continue
                }
            }
            // Each transfer goes on from what the one before held when it paused, and asks for the rest if any is
            // left (one paused after the last read holds the whole file).
            let startedAt = transfers.compactMap { $0.first { $0.kind == .started }?.bytes }
            let pausedAt = [0] + transfers.dropLast().compactMap { $0.last?.bytes }
            if startedAt != pausedAt { problems.append("started at \(startedAt), paused at \(pausedAt)") }
            let asked = startedAt.filter { $0 < plan.file.count }
            if requests != asked { problems.append("requests from \(requests), transfers started at \(startedAt)") }
            return problems
        }
    }
}

/// The plan's file, served as nginx serves one (`Range` honoured when `If-Range` matches its ETag) in reads of
/// ``readSize`` bytes, that makes the plan's pauses and resumes at its reads, its connections' closes and the
/// downloader's updates, and counts the connections open at once.
final class ScriptedFileServer: DownloadSource {
    static let readSize = 4096
    static let entityTag = "\"scripted\""
    let plan: PauseResumeTimingTests.Plan
    private let state = Mutex(State())

    private struct State {
        var downloader: Downloader?
        var id = 0
        /// The next of the plan's pauses to make.
        var next = 0
        /// When the last pause is resumed, until it is.
        var due: (moment: PauseResumeTimingTests.Moment, twice: Bool)?
        var open = 0
        var mostOpen = 0
        var requests: [Int64] = []
        var updates: [DownloadUpdate] = []
    }

    init(plan: PauseResumeTimingTests.Plan) {
        self.plan = plan
    }

    func attach(_ downloader: Downloader, id: Int) {
        state.withLock { ($0.downloader, $0.id) = (downloader, id) }
    }

    var updates: [DownloadUpdate] { state.withLock { $0.updates } }
    var requests: [Int64] { state.withLock { $0.requests } }
    var mostOpen: Int { state.withLock { $0.mostOpen } }

    func makeConnection() -> any ByteConnection { connection(from: 0, ifRange: nil) }

    func makeConnection(continuingAt offset: Int64, ifRange validator: String?) -> any ByteConnection {
        connection(from: offset, ifRange: validator)
    }

    private func connection(from offset: Int64, ifRange validator: String?) -> any ByteConnection {
        state.withLock {
            $0.open += 1
            $0.mostOpen = max($0.mostOpen, $0.open)
            $0.requests.append(offset)
        }
        let start = validator == Self.entityTag ? offset : 0
        return ScriptedConnection(server: self, start: start)
    }

    /// A read handed out the file up to `end`: the plan's next pause, once the file is read that far.
    fileprivate func read(upTo end: Int64) {
        let pause = state.withLock { state -> PauseResumeTimingTests.Plan.Pause? in
            guard state.next < plan.pauses.count, end > plan.pauses[state.next].at else { return nil }
            state.next += 1
            return plan.pauses[state.next - 1]
        }
        guard let pause else { return }
        act { $0.pause($1) }
        if pause.resume == .withThePause {
            resume(twice: pause.twice)
        } else {
            state.withLock { $0.due = (pause.resume, pause.twice) }
        }
    }

    fileprivate func closed() {
        state.withLock { $0.open -= 1 }
        resumeIfDue(.whileItsConnectionCloses)
    }

    /// The downloader's updates, in order, from its run.
    @Sendable func updated(_ update: DownloadUpdate) {
        state.withLock { $0.updates.append(update) }
        if update.kind == .paused { resumeIfDue(.onThePausedUpdate) }
    }

    /// Whether a pause was resumed now, for another run to go on with it.
    func resumeForALaterRun() -> Bool { resumeIfDue(.inALaterRun) }

    @discardableResult
    private func resumeIfDue(_ moment: PauseResumeTimingTests.Moment) -> Bool {
        let due = state.withLock { state -> (moment: PauseResumeTimingTests.Moment, twice: Bool)? in
            guard let due = state.due, due.moment == moment else { return nil }
            state.due = nil
            return due
        }
        guard let due else { return false }
        resume(twice: due.twice)
        return true
    }

    /// Resumes; `twice`: then pauses and resumes again at once.
    private func resume(twice: Bool) {
        act { $0.resume($1) }
        guard twice else { return }
        act { $0.pause($1) }
        act { $0.resume($1) }
    }

    /// Calls the downloader outside the lock (its updates come back here).
    private func act(_ command: (Downloader, Int) -> Void) {
        let (downloader, id) = state.withLock { ($0.downloader, $0.id) }
        if let downloader { command(downloader, id) }
    }
}

/// One response of the scripted server: the head, then the file from `start` a read at a time.
private final class ScriptedConnection: ByteConnection {
    private let server: ScriptedFileServer
    private let start: Int64
    private var position: Int64?
    private var closed = false

    init(server: ScriptedFileServer, start: Int64) {
        self.server = server
        self.start = start
    }

    func next() async throws(TransportError) -> TransportEvent? {
        // A read takes a turn, as a socket's does, so a stop can come between two reads.
        await Task.yield()
        if Task.isCancelled { throw TransportError(.readFailed, "cancelled") }
        let length = Int64(server.plan.file.count)
        guard let position else {
            position = start
            return .remoteFile(RemoteFile(length: length, bodyStart: start, entityTag: ScriptedFileServer.entityTag))
        }
        guard position < length else { return nil }
        let end = min(position + Int64(ScriptedFileServer.readSize), length)
        self.position = end
        server.read(upTo: end)
        return .bytes(Array(server.plan.file[Int(position)..<Int(end)]))
    }

    func close() async {
        guard !closed else { return }
        closed = true
        server.closed()
    }
}
