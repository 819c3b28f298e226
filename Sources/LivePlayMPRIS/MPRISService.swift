internal import CLazyLibraries
internal import CSDBus
import Foundation
import LivePlayTransport
import Synchronization

/// A player on the session bus as MPRIS (the Media Player Remote Interfacing Specification 2.2) describes one:
/// `org.mpris.MediaPlayer2.liveplay.instance<pid>` at `/org/mpris/MediaPlayer2`, so that GNOME's and KDE's media
/// controls, `playerctl` and the keyboard's media keys work on it. D-Bus is spoken by sd-bus (libsystemd's library,
/// loaded when first needed), on a thread of its own (`liveplay-mpris`) that waits in `poll(2)` on the bus and on a
/// pipe that ``update(_:)`` writes a byte to: the bus's calls are answered there from the state the front end set,
/// and the bus's commands go to ``Controls``, which run on that thread and must not block.
public final class MPRISService: Sendable {
    /// What the bus asks of the player.
    public struct Controls: Sendable {
        public var play: @Sendable () -> Void
        public var pause: @Sendable () -> Void
        public var playPause: @Sendable () -> Void
        public var stop: @Sendable () -> Void
        public var next: @Sendable () -> Void
        public var previous: @Sendable () -> Void
        /// `Seek`: by this much, forward or back.
        public var seek: @Sendable (Duration) -> Void
        /// `SetPosition`: to this position of the item.
        public var setPosition: @Sendable (Duration) -> Void
        /// `Volume`, 0…1.
        public var setVolume: @Sendable (Double) -> Void
        public var quit: @Sendable () -> Void

        public init(
            play: @escaping @Sendable () -> Void, pause: @escaping @Sendable () -> Void,
            playPause: @escaping @Sendable () -> Void, stop: @escaping @Sendable () -> Void,
            next: @escaping @Sendable () -> Void, previous: @escaping @Sendable () -> Void,
            seek: @escaping @Sendable (Duration) -> Void, setPosition: @escaping @Sendable (Duration) -> Void,
            setVolume: @escaping @Sendable (Double) -> Void, quit: @escaping @Sendable () -> Void
        ) {
            (self.play, self.pause, self.playPause, self.stop) = (play, pause, playPause, stop)
            (self.next, self.previous, self.seek, self.setPosition) = (next, previous, seek, setPosition)
            (self.setVolume, self.quit) = (setVolume, quit)
        }
    }

    /// The well-known name the player owns.
    public let busName: String
    private let channel: Channel

    /// Connects to the session bus (`DBUS_SESSION_BUS_ADDRESS`) and takes the player's name.
    /// - Throws: ``MPRISError`` when libsystemd cannot be loaded, there is no session bus, or the name is taken.
    /// - Parameter instance: the name's `instance` number: this process's id unless given.
    public init(instance: Int32? = nil, controls: Controls) async throws(MPRISError) {
        var error = [CChar](repeating: 0, count: 512)
        guard liveplay_lazy_load(LIVEPLAY_LAZY_SYSTEMD, &error, error.count) == 0 else {
            throw MPRISError(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        let name = "org.mpris.MediaPlayer2.liveplay.instance\(instance ?? getpid())"
        let channel = try Channel()
        let opened: MPRISError? = await withCheckedContinuation { continuation in
            let thread = Thread {
                // The thread's name as `ps -L` and a debugger show it (Foundation's is not passed on to the system).
                nameCurrentThread("liveplay-mpris")
                BusLoop.run(name: name, channel: channel, controls: controls) { continuation.resume(returning: $0) }
            }
            thread.start()
        }
        if let opened { throw opened }
        busName = name
        self.channel = channel
    }

    /// Changes what the bus sees; what changed is told with `PropertiesChanged` on the bus's thread.
    public func update(_ change: (inout MPRISState) -> Void) {
        channel.shared.withLock { change(&$0.state) }
        channel.wake()
    }

    /// Tells the controls that the position jumped (`Seeked`), to `position`.
    public func seeked(to position: Duration) {
        channel.shared.withLock {
            $0.state.position = position
            $0.seeked = position
        }
        channel.wake()
    }

    /// Gives the name back and closes the connection; returns once that is done.
    public func close() async {
        await withCheckedContinuation { continuation in
            channel.shared.withLock { $0.closed = continuation }
            channel.wake()
        }
    }
}

/// No MPRIS: why.
public struct MPRISError: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// What the front end and the bus's thread share: the state under a `Mutex`, and a pipe whose byte wakes the thread.
final class Channel: Sendable {
    struct Shared {
        var state = MPRISState()
        var seeked: Duration?
        /// Set by ``MPRISService/close()``: the thread leaves the bus, then resumes it.
        var closed: CheckedContinuation<Void, Never>?
    }

    let shared = Mutex(Shared())
    let wakeRead: Int32
    let wakeWrite: Int32

    init() throws(MPRISError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw MPRISError("pipe: \(String(cString: strerror(errno)))") }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        (wakeRead, wakeWrite) = (ends[0], ends[1])
    }

    func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWrite, &byte, 1)
    }

    /// Empties the pipe (the thread looks at everything on each wake).
    func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while Glibc.read(wakeRead, &bytes, bytes.count) > 0 {}
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }
}
