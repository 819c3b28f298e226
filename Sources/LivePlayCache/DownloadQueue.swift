/// Which download runs when: items in the order they were added, at most ``maximumRunning`` at once (Volcengine's
/// concurrent-download limit, 1 by default), each with one transfer at a time. A value that decides; the
/// ``Downloader`` starts and stops the work.
public struct DownloadQueue: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        case waiting, running, paused, completed, failed, cancelled
    }

    public struct Item: Sendable, Hashable {
        public let id: Int
        public let url: String
        public fileprivate(set) var state: State
        /// The number of the transfer that runs for it, or is still stopping after a pause or cancel; `nil` when
        /// none does. Another starts only once this one has ended, so two never write the same entry.
        public fileprivate(set) var transfer: Int?
    }

    public var maximumRunning: Int
    public private(set) var items: [Item] = []
    /// The last transfer number handed out: each transfer gets a new one, so the end of an old transfer is never
    /// taken for the end of the item's current one.
    private var transfers = 0

    public init(maximumRunning: Int = 1) {
        self.maximumRunning = max(1, maximumRunning)
    }

    /// Adds a download, waiting; a URL already waiting or running is not added again (its id is returned).
    public mutating func add(_ url: String) -> Int {
        if let task = items.first(where: { $0.url == url && [.waiting, .running].contains($0.state) }) { return task.id }
        let id = (items.last?.id ?? 0) + 1
        items.append(Item(id: id, url: url, state: .waiting))
        return id
    }

    public subscript(id: Int) -> Item? { items.first { $0.id == id } }

    /// Whether the task's transfer must be told to stop (it was running).
    public mutating func pause(_ id: Int) -> Bool { move(id, to: .paused, from: [.waiting, .running]) }

    /// A paused or failed task waits again, to go on from what it holds once its last transfer has ended.
    public mutating func resume(_ id: Int) { _ = move(id, to: .waiting, from: [.paused, .failed]) }

    /// Whether the task's transfer must be told to stop (it was running).
    public mutating func cancel(_ id: Int) -> Bool {
        move(id, to: .cancelled, from: [.waiting, .running, .paused, .failed, .completed])
    }

    /// Transfer `transfer` of task `id` ended, with the file whole or not. The task may start another; a running
    /// task becomes completed or failed, and one paused or resumed meanwhile keeps that state unless the file is
    /// whole (a cancelled one stays cancelled). The end of a transfer that is not the task's current one changes
    /// nothing.
    public mutating func ended(_ id: Int, transfer: Int, completed: Bool) {
        guard let index = items.firstIndex(where: { $0.id == id }), items[index].transfer == transfer else { return }
        items[index].transfer = nil
        if completed, items[index].state != .cancelled {
            items[index].state = .completed
        } else if items[index].state == .running {
            items[index].state = .failed
        }
    }

    /// The items to start now, marked running, each with a new ``Item/transfer``: the oldest waiting ones whose
    /// last transfer has ended, up to the limit (a paused task's place is free at once).
    public mutating func start() -> [Item] {
        var started: [Item] = []
        var running = items.filter { $0.state == .running }.count
        for index in items.indices
        where items[index].state == .waiting && items[index].transfer == nil && running < maximumRunning {
            transfers += 1
            items[index].state = .running
            items[index].transfer = transfers
            started.append(items[index])
            running += 1
        }
        return started
    }

    /// Nothing runs, waits or is still stopping.
    public var isIdle: Bool {
        !items.contains { $0.state == .running || $0.state == .waiting || $0.transfer != nil }
    }

    private mutating func move(_ id: Int, to state: State, from states: Set<State>) -> Bool {
        guard let index = items.firstIndex(where: { $0.id == id }), states.contains(items[index].state) else {
            return false
        }
        let wasRunning = items[index].state == .running
        items[index].state = state
        return wasRunning
    }
}
