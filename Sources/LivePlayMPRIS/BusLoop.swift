internal import CSDBus
import Foundation

/// The bus's thread: opens the connection, takes the name, serves `/org/mpris/MediaPlayer2` and tells changes, until
/// ``MPRISService/close()``. Everything of sd-bus stays on this thread (an `sd_bus` is not thread-safe).
final class BusLoop {
    static let path = "/org/mpris/MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"
    static let rootInterface = "org.mpris.MediaPlayer2"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    private let bus: OpaquePointer
    private let channel: Channel
    private let controls: MPRISService.Controls

    private init(bus: OpaquePointer, channel: Channel, controls: MPRISService.Controls) {
        self.bus = bus
        self.channel = channel
        self.controls = controls
    }

    /// The thread's body; `opened` is told `nil` once the name is the player's, or why not (and the thread ends).
    static func run(
        name: String, channel: Channel, controls: MPRISService.Controls, opened: (MPRISError?) -> Void
    ) {
        var connection: OpaquePointer?
        var result = sd_bus_open_user(&connection)
        guard result >= 0, let connection else {
            return opened(MPRISError("no session bus: \(String(cString: strerror(-result)))"))
        }
        result = name.withCString { sd_bus_request_name(connection, $0, 0) }
        guard result >= 0 else {
            sd_bus_flush_close_unref(connection)
            return opened(MPRISError("cannot own \(name): \(String(cString: strerror(-result)))"))
        }
        let loop = BusLoop(bus: connection, channel: channel, controls: controls)
        var slot: OpaquePointer?
        let handler = Unmanaged.passUnretained(loop).toOpaque()
        result = path.withCString { sd_bus_add_object(connection, &slot, $0, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            return Unmanaged<BusLoop>.fromOpaque(userdata).takeUnretainedValue().handle(message)
        }, handler) }
        guard result >= 0 else {
            sd_bus_flush_close_unref(connection)
            return opened(MPRISError("cannot serve \(path): \(String(cString: strerror(-result)))"))
        }
        opened(nil)
        let closed = loop.serve()
        sd_bus_slot_unref(slot)
        _ = name.withCString { sd_bus_release_name(connection, $0) }
        sd_bus_flush_close_unref(connection)
        closed.resume()
    }

    /// Answers calls and tells changes until closed; returns the continuation ``MPRISService/close()`` waits on.
    private func serve() -> CheckedContinuation<Void, Never> {
        var told = MPRISState()
        while true {
            while sd_bus_process(bus, nil) > 0 {}
            let (state, seeked, closed) = channel.shared.withLock { shared in
                defer { shared.seeked = nil }
                return (shared.state, shared.seeked, shared.closed)
            }
            if let closed { return closed }
            let changed = state.changes(from: told)
            if !changed.isEmpty { signal(Self.propertiesInterface, "PropertiesChanged") { writer in
                writer.write(.string(Self.playerInterface))
                writer.write(.dictionary(changed))
                writer.write(.strings([]))
            } }
            told = state
            if let seeked { signal(Self.playerInterface, "Seeked") { $0.write(.int64(seeked.microseconds)) } }
            sd_bus_flush(bus)
            wait()
        }
    }

    /// Until the bus has something, its timeout passes, or the pipe is written to.
    private func wait() {
        var descriptors = [
            pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: sd_bus_get_events(bus)), revents: 0),
            pollfd(fd: channel.wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        var deadline: UInt64 = 0
        var timeout: Int32 = -1
        if sd_bus_get_timeout(bus, &deadline) > 0, deadline != UInt64.max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            timeout = deadline > nowMicroseconds ? Int32(min((deadline - nowMicroseconds + 999) / 1000, 60_000)) : 0
        }
        _ = poll(&descriptors, 2, timeout)
        channel.drain()
    }

    private func signal(_ interface: String, _ member: String, _ body: (inout BusWriter) -> Void) {
        var message: OpaquePointer?
        let made = Self.path.withCString { path in
            interface.withCString { interface in
                member.withCString { sd_bus_message_new_signal(bus, &message, path, interface, $0) }
            }
        }
        guard made >= 0, let message else { return }
        var writer = BusWriter(message)
        body(&writer)
        if writer.failed == 0 { _ = sd_bus_send(bus, message, nil) }
        sd_bus_message_unref(message)
    }

    // MARK: - Calls

    /// One call to the object: > 0 once answered, 0 for sd-bus to answer that there is no such method.
    private func handle(_ call: OpaquePointer) -> Int32 {
        let interface = sd_bus_message_get_interface(call).map { String(cString: $0) } ?? ""
        let member = sd_bus_message_get_member(call).map { String(cString: $0) } ?? ""
        let arguments = BusReader(message: call)
        let state = channel.shared.withLock { $0.state }
        switch (interface, member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            return reply(call) { $0.write(.string(Self.introspection)) }
        case (Self.propertiesInterface, "Get"):
            guard let name = arguments.string(), let property = arguments.string(),
                let value = Self.properties(of: name, state)?.first(where: { $0.0 == property })?.1
            else { return fail(call, "org.freedesktop.DBus.Error.UnknownProperty", "no such property") }
            return reply(call) { $0.variant(value) }
        case (Self.propertiesInterface, "GetAll"):
            guard let name = arguments.string(), let all = Self.properties(of: name, state) else {
                return fail(call, "org.freedesktop.DBus.Error.UnknownInterface", "no such interface")
            }
            return reply(call) { $0.write(.dictionary(all)) }
        case (Self.propertiesInterface, "Set"):
            guard arguments.string() == Self.playerInterface, arguments.string() == "Volume",
                let volume = arguments.variantDouble()
            else { return fail(call, "org.freedesktop.DBus.Error.PropertyReadOnly", "only Volume can be set") }
            controls.setVolume(min(1, max(0, volume)))
        case (Self.rootInterface, "Raise"): break
        case (Self.rootInterface, "Quit"): controls.quit()
        case (Self.playerInterface, "Play"): controls.play()
        case (Self.playerInterface, "Pause"): controls.pause()
        case (Self.playerInterface, "PlayPause"): controls.playPause()
        case (Self.playerInterface, "Stop"): controls.stop()
        case (Self.playerInterface, "Next"): if state.canGoNext { controls.next() }
        case (Self.playerInterface, "Previous"): if state.canGoPrevious { controls.previous() }
        case (Self.playerInterface, "Seek"):
            // MPRIS: a seek without CanSeek is ignored; so is one to before the start (the player clamps it).
            if let offset = arguments.int64(), state.canSeek { controls.seek(.microseconds(offset)) }
        case (Self.playerInterface, "SetPosition"):
            // Only for the item playing (its trackid), and within it.
            if let track = arguments.string("o"), let position = arguments.int64(), state.canSeek,
                track == state.trackPath, position >= 0, state.length.map({ position <= $0.microseconds }) ?? true
            {
                controls.setPosition(.microseconds(position))
            }
        case (Self.playerInterface, "OpenUri"):
            return fail(call, "org.freedesktop.DBus.Error.NotSupported", "liveplay plays what it was started with")
        default:
            return 0
        }
        return reply(call) { _ in }
    }

    private static func properties(of interface: String, _ state: MPRISState) -> [(String, BusValue)]? {
        switch interface {
        case rootInterface: MPRISState.rootProperties
        case playerInterface: state.playerProperties
        default: nil
        }
    }

    private func reply(_ call: OpaquePointer, _ body: (inout BusWriter) -> Void) -> Int32 {
        var message: OpaquePointer?
        guard sd_bus_message_new_method_return(call, &message) >= 0, let message else { return -1 }
        defer { sd_bus_message_unref(message) }
        var writer = BusWriter(message)
        body(&writer)
        guard writer.failed == 0 else { return writer.failed }
        return sd_bus_send(nil, message, nil) >= 0 ? 1 : -1
    }

    private func fail(_ call: OpaquePointer, _ name: String, _ text: String) -> Int32 {
        name.withCString { name in
            text.withCString { text in
                var error = sd_bus_error(name: name, message: text, _need_free: 0)
                return sd_bus_reply_method_error(call, &error) >= 0 ? 1 : -1
            }
        }
    }
}
