/// What a ``LivePlayer`` tells its listener: the events (`onPlayEvent`), the once-per-second status
/// (`onNetStatus`) and what the playback is, when that changes (`onStateChange`). Called serially on a thread the playback takes for its listener (a ``PlaybackThread``; with a
/// ``PlaybackThreadGroup``, one of the group's, so it must then return quickly), never on the play loop: a slow or
/// blocking listener delays only its own deliveries, and if it falls so far behind that the delivery queue fills,
/// the updates dropped are counted and reported (`LIVEPLAY_EVT_LISTENER_OVERFLOW`).
public protocol LivePlayListener: AnyObject, Sendable {
    func onPlayEvent(_ event: PlayEvent)
    func onNetStatus(_ status: NetStatus)
    /// What the playback is now (``PlaybackState``), each time it changes.
    func onStateChange(_ state: PlaybackState)
}

extension LivePlayListener {
    public func onPlayEvent(_ event: PlayEvent) {}
    public func onNetStatus(_ status: NetStatus) {}
    public func onStateChange(_ state: PlaybackState) {}
}

/// One thing a player reports, for the `async` face.
public enum PlayerUpdate: Sendable {
    case event(PlayEvent)
    case netStatus(NetStatus)
    case state(PlaybackState)
}
