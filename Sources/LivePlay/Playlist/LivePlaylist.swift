import Foundation
public import LivePlayManifest
import Synchronization

/// Items played one after another (TUIPlayer's feed, Brightcove's playlist, an M3U file): files, HTTP(S)-FLV and
/// RTMP(S) streams, LAS manifests. ``LivePlayer/run(playlist:preload:)`` plays it, autoplaying to the next item when
/// one ends or fails, and follows what is added, removed or replaced while it plays: what comes next is read from the
/// list when the item playing ends. ``next()`` and ``previous()`` move at once.
///
/// The list is locked state (a `Mutex`) that a front end edits from any thread; the player reads it between items
/// and takes moves through one stream, so nothing of a playback reads it while playing.
public final class LivePlaylist: Sendable {
    public struct Item: Sendable, Hashable {
        public var url: String
        public var title: String?
        /// A picture for a front end to show while the item plays without video (Brightcove's `poster`): a path or
        /// an HTTP(S) URL.
        public var poster: String?

        public init(_ url: String, title: String? = nil, poster: String? = nil) {
            self.url = url
            self.title = title
            self.poster = poster
        }
    }

    /// What happens at an item's end (mpv's `--loop-file` and `--loop-playlist`).
    public enum Loop: String, Sendable, CaseIterable {
        case none
        /// The item again, from its start (a live stream: reconnected).
        case file
        /// After the last item, the first again.
        case playlist
    }

    /// TUIPlayer's `onReachLast`: the item playing is one of the last ``reachLastCount``, so that a front end can
    /// append more; once per pass through the list, and once more each time what was appended is reached.
    public struct ReachLast: Sendable, Equatable {
        public var index: Int
        public var count: Int
        /// Passes through the list started before this one (a looped playlist: 1 on the second pass).
        public var pass: Int
    }

    private struct State {
        var items: [Item]
        var loop: Loop
        /// The item playing, and whether it was removed while it played (the next is then the one in its place).
        var current: Int?
        var currentRemoved = false
        var pass = 0
        /// The pass and the list's length when reach-last was last told.
        var reached: (pass: Int, count: Int)?
        var onReachLast: (@Sendable (ReachLast) -> Void)?
    }

    private let state: Mutex<State>
    /// How many items from the end ``onReachLast`` fires.
    public let reachLastCount: Int
    let moves: AsyncStream<Int>
    private let movesContinuation: AsyncStream<Int>.Continuation

    public init(_ items: [Item], loop: Loop = .none, reachLastCount: Int = 1) {
        state = Mutex(State(items: items, loop: loop))
        self.reachLastCount = max(1, reachLastCount)
        (moves, movesContinuation) = AsyncStream.makeStream(of: Int.self)
    }

    /// An M3U playlist's entries, with their titles and posters.
    public convenience init(_ playlist: M3UPlaylist, loop: Loop = .none, reachLastCount: Int = 1) {
        self.init(
            playlist.entries.map { Item($0.url, title: $0.title, poster: $0.poster) }, loop: loop,
            reachLastCount: reachLastCount)
    }

    public var items: [Item] { state.withLock { $0.items } }
    /// The item playing (or played last), when the playlist has started.
    public var currentIndex: Int? { state.withLock { $0.currentRemoved ? nil : $0.current } }
    public var loop: Loop {
        get { state.withLock { $0.loop } }
        set { state.withLock { $0.loop = newValue } }
    }

    public var onReachLast: (@Sendable (ReachLast) -> Void)? {
        get { state.withLock { $0.onReachLast } }
        set { state.withLock { $0.onReachLast = newValue } }
    }

    public func append(_ item: Item) {
        state.withLock { $0.items.append(item) }
    }

    /// Inserts `item` after the item at `index` (Brightcove's `insertVideo(after:)`); `nil`: first.
    public func insert(_ item: Item, after index: Int?) {
        state.withLock { state in
            let at = min(max((index ?? -1) + 1, 0), state.items.count)
            state.items.insert(item, at: at)
            if let current = state.current, at <= current, !(state.currentRemoved && at == current) {
                state.current = current + 1
            }
        }
    }

    /// Removes the item at `index`; the item playing may be removed, and plays on to its end or a move.
    public func remove(at index: Int) {
        state.withLock { state in
            guard state.items.indices.contains(index) else { return }
            state.items.remove(at: index)
            guard let current = state.current else { return }
            if index < current {
                state.current = current - 1
            } else if index == current, !state.currentRemoved {
                state.currentRemoved = true
            }
        }
    }

    /// Replaces the item at `index`; the item playing, replaced, plays on until it ends or a move.
    public func replace(at index: Int, with item: Item) {
        state.withLock { state in
            guard state.items.indices.contains(index) else { return }
            state.items[index] = item
        }
    }

    /// Moves to the next item now (`n`, MPRIS's `Next`); past the last, the first when the playlist loops.
    public func next() { movesContinuation.yield(1) }
    /// Moves to the previous item now (`p`, MPRIS's `Previous`).
    public func previous() { movesContinuation.yield(-1) }

    // MARK: - For the player

    /// Makes `index` the item playing; the item, and a reach-last to tell when this one is among the last.
    func begin(_ index: Int) -> (item: Item, count: Int, reachLast: ReachLast?, call: (@Sendable (ReachLast) -> Void)?)? {
        state.withLock { state in
            guard state.items.indices.contains(index) else { return nil }
            state.current = index
            state.currentRemoved = false
            var reached: ReachLast?
            let count = state.items.count
            if index >= count - reachLastCount,
                state.reached.map({ $0.pass != state.pass || $0.count < count }) ?? true
            {
                state.reached = (state.pass, count)
                reached = ReachLast(index: index, count: state.items.count, pass: state.pass)
            }
            return (state.items[index], state.items.count, reached, reached == nil ? nil : state.onReachLast)
        }
    }

    /// The item after the one playing, as its end leads: the same one (loop file), the next, the first again (loop
    /// playlist, a new pass), or none; an item that `failed` is not played again. `delta`: a move by the viewer,
    /// which wraps around whatever the loop.
    func following(by delta: Int? = nil, failed: Bool = false) -> Int? {
        state.withLock { state in
            let count = state.items.count
            guard count > 0, let current = state.current else { return count > 0 ? 0 : nil }
            if let delta {
                let step = state.currentRemoved && delta > 0 ? delta - 1 : delta
                return ((current + step) % count + count) % count
            }
            if state.loop == .file, !state.currentRemoved, !failed { return min(current, count - 1) }
            let next = state.currentRemoved ? current : current + 1
            if next < count { return next }
            guard state.loop == .playlist else { return nil }
            state.pass += 1
            return 0
        }
    }

    /// The index the next item would have, without moving there: what to preload.
    func upcoming() -> Int? {
        state.withLock { state in
            let count = state.items.count
            guard count > 1, let current = state.current else { return nil }
            if state.loop == .file { return nil }
            let next = state.currentRemoved ? current : current + 1
            return next < count ? next : state.loop == .playlist ? 0 : nil
        }
    }

    /// Passes through the list started so far, the first not counted.
    var passes: Int { state.withLock { $0.pass } }

    func item(at index: Int) -> Item? {
        state.withLock { $0.items.indices.contains(index) ? $0.items[index] : nil }
    }
}
