/// Which download runs when: items in the order they were added, at most ``maximumRunning`` at once (Volcengine's
/// concurrent-download limit, 1 by default). A value that decides; the ``Downloader`` starts and stops the work.
public struct DownloadQueue: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        case waiting, running, paused, completed, failed, cancelled
    }

    public struct Item: Sendable, Hashable {
        public let id: Int
        public let url: String
        public fileprivate(set) var state: State
    }

    public var maximumRunning: Int
    public private(set) var items: [Item] = []

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

    /// Whether the task must be stopped (it was running).
    public mutating func pause(_ id: Int) -> Bool { move(id, to: .paused, from: [.waiting, .running]) }

    /// A paused or failed task waits again, to go on from what it holds.
    public mutating func resume(_ id: Int) { _ = move(id, to: .waiting, from: [.paused, .failed]) }

    /// Whether the task must be stopped (it was running).
    public mutating func cancel(_ id: Int) -> Bool {
        move(id, to: .cancelled, from: [.waiting, .running, .paused, .failed, .completed])
    }

    /// A running task ended on its own: completed or failed (a task stopped by pause or cancel keeps that state).
    public mutating func ended(_ id: Int, completed: Bool) {
        _ = move(id, to: completed ? .completed : .failed, from: [.running])
    }

    /// The items to start now, marked running: the oldest waiting ones, up to the limit.
    public mutating func start() -> [Item] {
        var started: [Item] = []
        var running = items.filter { $0.state == .running }.count
        for index in items.indices where items[index].state == .waiting && running < maximumRunning {
            items[index].state = .running
            started.append(items[index])
            running += 1
        }
        return started
    }

    /// Nothing runs or waits.
    public var isIdle: Bool { !items.contains { $0.state == .running || $0.state == .waiting } }

    private mutating func move(_ id: Int, to state: State, from states: Set<State>) -> Bool {
        guard let index = items.firstIndex(where: { $0.id == id }), states.contains(items[index].state) else {
            return false
        }
        let wasRunning = items[index].state == .running
        items[index].state = state
        return wasRunning
    }
}
