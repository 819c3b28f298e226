import Foundation
import Synchronization
public import Logging
import LivePlayCore
public import LivePlayWire

/// Live RTMP play through librtmp, bounded and checked from outside.
///
/// librtmp alone does not bound its waits and trusts the server (measured: a blocking `connect()` hung
/// 134 s, a byte-trickling server hangs it forever, a server killed mid-stream looks like a normal end,
/// and a command with ~44,000 nested AMF objects crashes it). So each connection:
/// 1. resolves the host itself (`getaddrinfo`, IPv4 and IPv6) within ``TransportOptions/resolveTimeout``
///    (failure: ``TransportError/Code/dnsFailed``);
/// 2. connects a non-blocking socket itself within ``TransportOptions/connectTimeout``, trying every
///    address (``TransportError/Code/connectFailed``), and reports ``TransportEvent/connected(serverAddress:)``;
/// 3. hands the socket to librtmp for the handshake (`RTMP_Connect1`), `connect`, `createStream` and a
///    live `play` under one ``TransportOptions/handshakeTimeout`` (``TransportError/Code/handshakeFailed``),
///    and reports ``TransportEvent/streamBegin`` on `NetStream.Play.Start` or a StreamBegin user control;
/// 4. reads with its own loop over `RTMP_ReadPacket`, parsing each chunk header before librtmp allocates
///    for it and checking each message (``Limits``) before librtmp's handlers (`RTMP_ClientPacket`) see
///    it (``TransportError/Code/protocolViolation``); media is handed over as FLV tags
///    (``TransportEvent/tags(_:)``), for the demuxer's tag parser, never as FLV bytes to parse again;
/// 5. watches ``TransportOptions/noDataTimeout`` (``TransportError/Code/noData``) and goodput, media
///    seconds per wall second over ``TransportOptions/goodputWindow``
///    (``TransportError/Code/tooSlow``), so a trickle is a lost connection, not a hang.
///
/// `NetStream.Play.Stop`, `Play.Complete`, `Play.UnpublishNotify` and a StreamEOF user control end the
/// stream by design (`next()` returns `nil`; nginx-rtmp, by default, sends only StreamEOF when the
/// publisher leaves); the server closing the TCP connection is ``TransportError/Code/serverClosed``, other
/// socket errors ``TransportError/Code/readFailed``.
///
/// librtmp runs on one dedicated thread per connection, never on the cooperative pool; bytes reach the
/// async consumer through a small bounded handoff, so a slow consumer slows the reading and nothing is
/// dropped. librtmp's log goes to the injected `Logger`, with the URL's query values scrubbed.
/// Supported schemes: `rtmp://` and `rtmps://` (only `rtmp` is tested); librtmp options may follow the URL
/// after a space, as with rtmpdump.
public struct RTMPSource: ByteSource {
    /// Bounds on what a server can make the player hold; a message breaking one is a
    /// ``TransportError/Code/protocolViolation``.
    public typealias Limits = RTMPLimits

    public let url: String
    public let options: TransportOptions
    public let limits: Limits
    let logger: Logger
    let resolver: HostResolver
    /// This server rejected the enhanced `connect` once: every later connection of this source sends the plain one.
    let refusedEnhanced = RefusedEnhancedConnect()

    /// Whether the next connection sends Enhanced RTMP's `connect` (``TransportOptions/rtmpEnhanced``).
    var connectsEnhanced: Bool {
        switch options.rtmpEnhanced {
        case .on: true
        case .off: false
        case .auto: !refusedEnhanced.isSet
        }
    }

    public init(
        url: String, options: TransportOptions = TransportOptions(), logger: Logger, limits: Limits = Limits()
    ) {
        self.init(url: url, options: options, logger: logger, limits: limits, resolver: SocketConnector.systemResolver)
    }

    /// With a stand-in resolver, for tests of the resolve deadline.
    init(url: String, options: TransportOptions, logger: Logger, limits: Limits, resolver: @escaping HostResolver) {
        self.url = url
        self.options = options
        self.limits = limits
        self.logger = logger
        self.resolver = resolver
    }

    public func makeConnection() -> any ByteConnection {
        RTMPConnection(source: self)
    }

    /// The stream name (the URL's last path component, with its query) played from the application at `tcUrl`.
    public func moved(toTcUrl tcUrl: String) -> (any ByteSource)? {
        guard tcUrl.hasPrefix("rtmp://") || tcUrl.hasPrefix("rtmps://"), let slash = url.lastIndex(of: "/") else {
            return nil
        }
        let base = tcUrl.hasSuffix("/") ? String(tcUrl.dropLast()) : tcUrl
        return RTMPSource(
            url: base + url[slash...], options: options, logger: logger, limits: limits, resolver: resolver)
    }
}

/// What a source remembers across its connections: its server rejected the enhanced `connect`. Set on a
/// connection's thread, read by the next connection's.
final class RefusedEnhancedConnect: Sendable {
    private let flag = Mutex(false)

    var isSet: Bool { flag.withLock { $0 } }

    /// Sets it; true the first time (to say so once).
    func set() -> Bool {
        flag.withLock { flag in
            defer { flag = true }
            return !flag
        }
    }
}

/// One RTMP play attempt: the async face of an ``RTMPSession`` running on its own thread.
final class RTMPConnection: ByteConnection, Sendable {
    private let source: RTMPSource
    private let control = RTMPConnectionControl()
    private let handoff = ByteHandoff()

    init(source: RTMPSource) {
        self.source = source
    }

    deinit {
        stop(TransportError(.readFailed, "connection released"))
    }

    func next() async throws(TransportError) -> TransportEvent? {
        if control.markStarted() {
            let source = source
            let control = control
            let handoff = handoff
            let thread = Thread {
                // Named from inside: Foundation passes a name on to the OS only for the current thread.
                nameCurrentThread("liveplay-rtmp")
                RTMPSession(source: source, control: control, handoff: handoff).run()
            }
            thread.start()
        }
        let item = await withTaskCancellationHandler {
            await handoff.receive()
        } onCancel: {
            stop(TransportError(.readFailed, "cancelled"))
        }
        switch item {
        case .event(let event): return event
        case .end(.finished): return nil
        case .end(.failed(let error)): throw error
        }
    }

    /// Stops the thread (shutting the socket down wakes any blocking librtmp call) and waits until it
    /// has freed the `RTMP*`.
    func close() async {
        stop(TransportError(.readFailed, "connection closed"))
        await control.waitForWorkerExit()
    }

    private func stop(_ reason: TransportError) {
        control.requestStop(reason)
        handoff.close(reporting: .failed(control.stopReason ?? reason))
    }
}

/// What the connection's threads share: the stop request, the socket to shut down, the watchdog's
/// policy. Guarded by one condition.
///
/// The socket registered here is a `dup` of the one librtmp uses: librtmp closes its descriptor itself on
/// errors, and shutting down a descriptor number that was closed and reused would hit someone else's
/// file. The duplicate is closed only by ``closeSocket()``, under the same lock as the shutdown.
///
/// `@unchecked Sendable`: every mutable field is read and written under `condition`.
final class RTMPConnectionControl: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var storedStopReason: TransportError?
    private var socket: Int32 = -1
    private var isStarted = false
    private var isWorkerExited = false
    private var exitWaiters: [CheckedContinuation<Void, Never>] = []
    private var isWatchdogStopped = false
    private var policy: RTMPWatchdogPolicy?
    /// Becomes readable when a stop is requested (wakes `poll` while connecting).
    let wakeDescriptors: (read: Int32, write: Int32)

    init() {
        var descriptors: [Int32] = [-1, -1]
        if pipe(&descriptors) == 0 {
            for descriptor in descriptors {
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
                _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
            }
        } else {
            descriptors = [-1, -1]
        }
        wakeDescriptors = (descriptors[0], descriptors[1])
    }

    deinit {
        if wakeDescriptors.read >= 0 { Glibc.close(wakeDescriptors.read) }
        if wakeDescriptors.write >= 0 { Glibc.close(wakeDescriptors.write) }
    }

    /// `true` the first time: the caller starts the thread.
    func markStarted() -> Bool {
        condition.withLock {
            guard !isStarted, storedStopReason == nil else { return false }
            isStarted = true
            return true
        }
    }

    var stopReason: TransportError? {
        condition.withLock { storedStopReason }
    }

    var isStopped: Bool { stopReason != nil }

    /// Ends the connection for `reason` (the first reason wins): shuts the socket down, so a blocking
    /// librtmp call returns, and wakes every wait.
    func requestStop(_ reason: TransportError) {
        condition.lock()
        stopLocked(reason)
        condition.unlock()
    }

    private func stopLocked(_ reason: TransportError) {
        if storedStopReason == nil { storedStopReason = reason }
        if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) }
        if wakeDescriptors.write >= 0 {
            var byte: UInt8 = 1
            _ = write(wakeDescriptors.write, &byte, 1)
        }
        condition.broadcast()
    }

    /// Registers the duplicate descriptor the watchdog and ``requestStop(_:)`` shut down.
    func registerSocket(_ descriptor: Int32) {
        condition.withLock {
            socket = descriptor
            if storedStopReason != nil { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    /// The registered descriptor, for looking at the connection's state after librtmp failed.
    var registeredSocket: Int32 {
        condition.withLock { socket }
    }

    func closeSocket() {
        condition.withLock {
            if socket >= 0 { Glibc.close(socket) }
            socket = -1
        }
    }

    /// Changes the watchdog's policy in place (phase changes, media progress), and wakes the watchdog to apply it
    /// unless `wakingWatchdog` is false: media progress waits for its next check (every 200 ms), rather than wake
    /// its thread for every message.
    func updatePolicy(wakingWatchdog: Bool = true, _ change: (inout RTMPWatchdogPolicy) -> Void) {
        condition.withLock {
            guard policy != nil else { return }
            change(&policy!)
            if wakingWatchdog { condition.broadcast() }
        }
    }

    /// Sets the policy the watchdog applies, before its thread starts (so no update is lost).
    func installPolicy(_ initial: RTMPWatchdogPolicy) {
        condition.withLock { policy = initial }
    }

    /// Runs the watchdog on the calling thread until ``stopWatchdog()``: checks the policy on its ticks
    /// and stops the connection when it says so.
    func runWatchdog() {
        condition.lock()
        while !isWatchdogStopped {
            let now = ContinuousClock.now
            guard policy != nil else { break }
            if let failure = policy!.check(at: now) {
                stopLocked(failure)
                break
            }
            let seconds = (policy!.nextCheck(after: now) - now) / .seconds(1)
            _ = condition.wait(until: Date(timeIntervalSinceNow: max(0.001, seconds)))
        }
        condition.unlock()
    }

    func stopWatchdog() {
        condition.withLock {
            isWatchdogStopped = true
            policy?.finish()
            condition.broadcast()
        }
    }

    /// Called last by the connection's thread, after the `RTMP*` is freed.
    func markWorkerExited() {
        let waiters = condition.withLock {
            isWorkerExited = true
            defer { exitWaiters.removeAll() }
            return exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func waitForWorkerExit() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = condition.withLock {
                if isWorkerExited || !isStarted { return true }
                exitWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}

extension RTMPSource {
    /// The URL's query values (and librtmp option values), which librtmp's log lines may contain.
    static func secrets(in url: String) -> [String] {
        var values: [String] = []
        let parts = url.split(separator: " ")
        if let first = parts.first, let question = first.firstIndex(of: "?") {
            for pair in first[first.index(after: question)...].split(separator: "&") {
                if let equals = pair.firstIndex(of: "=") { values.append(String(pair[pair.index(after: equals)...])) }
            }
        }
        for option in parts.dropFirst() {
            if let equals = option.firstIndex(of: "=") { values.append(String(option[option.index(after: equals)...])) }
        }
        // Values this short are flags and numbers, not tokens; scrubbing them would garble every line.
        return values.filter { $0.count >= 4 }
    }

    /// The URL as it may be logged.
    var redactedURL: String { Redaction.url(url) }
}
