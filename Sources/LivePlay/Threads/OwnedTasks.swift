import LivePlayTransport

/// The tasks a ``LivePlayer`` or a ``PreloadPool`` runs (its playbacks, a `switchStream`'s wait, its preloaded
/// streams), as children of one task: the owner's run. The TXLivePlayer-shaped calls return at once; they hand the
/// run a job, which it starts as a child of its task group, and keep an ``OwnedTask`` to stop it and to await how it
/// ended. The run is the one task the owner starts from outside any task; it ends when the owner is released and its
/// last child has ended (a stream a player took from a pool runs on as the pool's child, stopped through its handle).
final class OwnedTasks: Sendable {
    private let jobs: AsyncStream<@Sendable () async -> Void>.Continuation

    init() {
        let (stream, jobs) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
        self.jobs = jobs
        // The run: every job is a child of it, from its start to its end.
        Task {
            await withDiscardingTaskGroup { group in
                for await job in stream { group.addTask { await job() } }
            }
        }
    }

    deinit { jobs.finish() }

    /// Starts `work` as a child of the run.
    func start<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> OwnedTask<T> {
        let task = OwnedTask<T>()
        jobs.yield { await task.run(work) }
        return task
    }
}

/// One job of an ``OwnedTasks`` run: stopped by ``cancel()`` (its work's task is cancelled), awaited by ``value``.
final class OwnedTask<T: Sendable>: Sendable {
    private let stop = StopRequest<Void>()
    private let ended = Latch<T>()

    /// Cancels the work; it ends as it does when its task is cancelled (a playback reports `.stopped`).
    func cancel() { stop.request() }

    /// How the work ended, once it has (a cancelled caller waits on, as for `Task.value`).
    var value: T {
        get async { await ended.settled }
    }

    fileprivate func run(_ work: @escaping @Sendable () async -> T) async {
        ended.set(await stop.cancelling(work))
    }
}
