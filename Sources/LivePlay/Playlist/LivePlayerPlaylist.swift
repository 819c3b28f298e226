import LivePlayCore

/// A player going through a ``LivePlaylist``: each item is a playback as ``run(url:)`` plays one, the items after the
/// first reached through ``switch(to:from:)`` from a pool that keeps the next one preloaded.
extension LivePlayer {
    /// Plays `playlist` from its first item until its end (or, looping, until cancelled): an item that ends is
    /// followed by the next; one that fails, after its retries, is told by its error event as usual and skipped;
    /// a pass through the list in which no item played ends the run with that failure rather than looping on it.
    /// Each item starts with `LIVEPLAY_EVT_PLAYLIST_ITEM` (9023); among the last ``LivePlaylist/reachLastCount``,
    /// `LIVEPLAY_EVT_PLAYLIST_REACH_LAST` (9024) and ``LivePlaylist/onReachLast`` once per pass. With `preload`,
    /// the item to come is kept preloaded, so the change is a switch's.
    ///
    /// - Returns: `.ended` when the list was played to its end and an item played; otherwise how the last one ended.
    public func run(playlist: LivePlaylist, preload: PreloadPool? = nil) async -> PlaybackOutcome {
        guard var index = playlist.following() else { return .failed(.fileNotFound) }
        return await withTaskGroup(of: Void.self) { group in
            // The viewer's moves: a switch at once, which the wait below follows.
            group.addTask { [self] in
                for await delta in playlist.moves {
                    guard let target = playlist.following(by: delta),
                        let url = await announce(playlist, at: target, pool: preload, first: false)
                    else { continue }
                    try? self.switch(to: url, from: preload)
                }
            }
            defer { group.cancelAll() }
            var outcome = PlaybackOutcome.stopped
            var (first, played, playedInPass) = (true, false, false)
            while !Task.isCancelled, let url = await announce(playlist, at: index, pool: preload, first: first) {
                if first {
                    outcome = await run(url: url)
                    first = false
                } else {
                    try? self.switch(to: url, from: preload)
                    outcome = await followPlaying()
                }
                if Task.isCancelled || outcome == .stopped { break }
                let failed = outcome != .ended
                (played, playedInPass) = (played || !failed, playedInPass || !failed)
                let passes = playlist.passes
                guard let next = playlist.following(failed: failed) else { break }
                if playlist.passes != passes || (failed && next == index) {
                    // A whole pass (or a looped item) that played nothing would only fail again: its failure ends it.
                    guard playedInPass else {
                        played = false
                        break
                    }
                    playedInPass = false
                }
                index = next
            }
            await preload?.removeAll()
            return outcome != .stopped && played ? .ended : outcome
        }
    }

    /// Makes item `index` the one playing: told (9023, and 9024 when it is among the last), the one after it preloaded
    /// and, unless it is the `first` (played cold), the item itself kept for the switch to take. Returns its URL.
    private func announce(_ playlist: LivePlaylist, at index: Int, pool: PreloadPool?, first: Bool) async -> String? {
        guard let begun = playlist.begin(index) else { return nil }
        let at = time.elapsed().milliseconds
        var parameters: [String: PlayEventValue] = [
            "index": .int(Int64(index)), "count": .int(Int64(begun.count)), "url": .string(Redaction.url(begun.item.url)),
        ]
        if let title = begun.item.title { parameters["title"] = .string(title) }
        if let poster = begun.item.poster { parameters["poster"] = .string(Redaction.url(poster)) }
        deliver(
            .event(
                PlayEvent(
                        .playlistItem, "playlist item \(index + 1) of \(begun.count)", elapsedMilliseconds: at,
                        parameters: parameters)))
        if let reached = begun.reachLast {
            deliver(
                .event(
                    PlayEvent(
                        .playlistReachLast, "playlist: item \(index + 1) of \(reached.count) is among the last",
                        elapsedMilliseconds: at,
                        parameters: [
                            "index": .int(Int64(index)), "count": .int(Int64(reached.count)),
                            "pass": .int(Int64(reached.pass)),
                        ])))
            begun.call?(reached)
        }
        if let pool {
            // A local file starts cold in milliseconds, and a preloading session of one waits out a timeout before it
            // plays (seen as a 5 s gap between two files): only network streams are preloaded.
            let upcoming = playlist.upcoming().flatMap(playlist.item(at:)).map { [$0.url] } ?? []
            let network = ((first ? [] : [begun.item.url]) + upcoming.filter { $0 != begun.item.url }).filter {
                (try? StreamAddress(parsing: $0))?.isLocalFile == false
            }
            await pool.keep(only: network)
        }
        return begun.item.url
    }
}
