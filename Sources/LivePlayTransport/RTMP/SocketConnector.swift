import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One resolved TCP endpoint, IPv4 or IPv6.
struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The raw `sockaddr_in` / `sockaddr_in6` bytes.
    var bytes: [UInt8]
    var family: Int32

    /// `ip:port`, with `[]` around an IPv6 address.
    var description: String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let status = bytes.withUnsafeBytes { raw in
            getnameinfo(
                raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count), &host,
                socklen_t(host.count), &service, socklen_t(service.count), NI_NUMERICHOST | NI_NUMERICSERV)
        }
        guard status == 0 else { return "?" }
        let hostText = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let portText = String(decoding: service.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return family == AF_INET6 ? "[\(hostText)]:\(portText)" : "\(hostText):\(portText)"
    }
}

/// Resolves a host name to addresses: `getaddrinfo` in production, a stand-in in tests.
typealias HostResolver = @Sendable (_ host: String, _ port: UInt16) -> Result<[SocketAddress], TransportError>

/// Resolving and connecting with deadlines, which librtmp cannot do (its `gethostbyname` is IPv4-only
/// and unbounded; its blocking `connect()` was measured hanging 134 s and ignores its timeout option).
enum SocketConnector {
    /// `getaddrinfo` for a TCP stream, IPv4 and IPv6, in the order the system prefers (RFC 6724).
    static let systemResolver: HostResolver = { host, port in
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            let reason = String(cString: gai_strerror(status))
            return .failure(TransportError(.dnsFailed, "cannot resolve \(host): \(reason)"))
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = list
        while let info = next {
            let family = info.pointee.ai_family
            if let address = info.pointee.ai_addr, family == AF_INET || family == AF_INET6 {
                let raw = UnsafeRawBufferPointer(start: address, count: Int(info.pointee.ai_addrlen))
                let candidate = SocketAddress(bytes: Array(raw), family: info.pointee.ai_family)
                if !addresses.contains(candidate) { addresses.append(candidate) }
            }
            next = info.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            return .failure(TransportError(.dnsFailed, "\(host) has no IPv4 or IPv6 address"))
        }
        return .success(addresses)
    }

    /// Resolves `host` on a helper thread within `timeout`; on timeout the helper is abandoned (its late
    /// answer goes nowhere), since `getaddrinfo` cannot be interrupted.
    static func resolve(
        host: String, port: UInt16, timeout: Duration, resolver: @escaping HostResolver,
        isStopped: () -> Bool
    ) throws(TransportError) -> [SocketAddress] {
        if let literal = numericAddress(host, port: port) { return [literal] }
        let box = ResolutionBox()
        Thread.detachNewThread {
            nameCurrentThread("liveplay-resolve")
            box.deliver(resolver(host, port))
        }
        let deadline = ContinuousClock.now + timeout
        while true {
            if let result = box.wait(until: min(deadline, .now + .milliseconds(50))) { return try result.get() }
            if isStopped() { throw TransportError(.dnsFailed, "resolving \(host) was cancelled") }
            if ContinuousClock.now >= deadline {
                throw TransportError(.dnsFailed, "resolving \(host) took longer than \(timeout)")
            }
        }
    }

    /// ``resolve(host:port:timeout:resolver:isStopped:)`` for async callers (HTTP-FLV): the lookup runs on a
    /// helper thread while the caller suspends, so no cooperative thread blocks in `getaddrinfo`.
    static func resolve(
        host: String, port: UInt16, timeout: Duration, resolver: @escaping HostResolver
    ) async throws(TransportError) -> [SocketAddress] {
        if let literal = numericAddress(host, port: port) { return [literal] }
        let answer = AsyncResolution()
        Thread.detachNewThread {
            nameCurrentThread("liveplay-resolve")
            answer.deliver(resolver(host, port))
        }
        let result = await withTaskGroup(of: Result<[SocketAddress], TransportError>.self) { group in
            group.addTask { await answer.value() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                let reason = Task.isCancelled ? "was cancelled" : "took longer than \(timeout)"
                return .failure(TransportError(.dnsFailed, "resolving \(host) \(reason)"))
            }
            let first = await group.next()!
            // Releases the waiting child when the timer won; a late answer from the thread goes nowhere.
            answer.deliver(first)
            group.cancelAll()
            return first
        }
        return try result.get()
    }

    /// An IPv4 or IPv6 literal, without asking any resolver.
    static func numericAddress(_ host: String, port: UInt16) -> SocketAddress? {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            return SocketAddress(bytes: withUnsafeBytes(of: v4) { Array($0) }, family: AF_INET)
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            return SocketAddress(bytes: withUnsafeBytes(of: v6) { Array($0) }, family: AF_INET6)
        }
        return nil
    }

    /// Connects a non-blocking socket to each address in turn until one answers, all within `timeout`;
    /// each attempt gets an equal share of what is left. Returns a blocking socket.
    ///
    /// - Parameter wakeDescriptor: readable when the connection is being stopped.
    static func connect(
        to addresses: [SocketAddress], timeout: Duration, wakeDescriptor: Int32
    ) throws(TransportError) -> (descriptor: Int32, address: SocketAddress) {
        let deadline = ContinuousClock.now + timeout
        var failures: [String] = []
        for (index, address) in addresses.enumerated() {
            let remaining = deadline - .now
            guard remaining > .zero else { break }
            let share = remaining / (addresses.count - index)
            switch attempt(address, deadline: .now + share, wakeDescriptor: wakeDescriptor) {
            case .connected(let descriptor):
                return (descriptor, address)
            case .failed(let reason):
                failures.append("\(address): \(reason)")
            case .stopped:
                throw TransportError(.connectFailed, "connecting was cancelled")
            }
        }
        if failures.count < addresses.count { failures.append("no answer within \(timeout)") }
        let target = addresses.first.map { "\($0)" } ?? "the server"
        let refused = failures.count == addresses.count && failures.allSatisfy { $0.hasSuffix(errorText(ECONNREFUSED)) }
        throw TransportError(
            .connectFailed, refused ? "\(target) refused the connection" : "cannot connect to \(target)",
            detail: failures.joined(separator: "; "))
    }

    private enum Attempt {
        case connected(Int32)
        case failed(String)
        case stopped
    }

    private static func attempt(
        _ address: SocketAddress, deadline: ContinuousClock.Instant, wakeDescriptor: Int32
    ) -> Attempt {
        let descriptor = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failed("socket: \(errorText(errno))") }
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        let status = address.bytes.withUnsafeBytes { raw in
            Glibc.connect(
                descriptor, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        if status != 0, errno != EINPROGRESS {
            let reason = errorText(errno)
            close(descriptor)
            return .failed(reason)
        }
        if status != 0 {
            var descriptors = [
                pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0),
                pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            while true {
                let left = deadline - .now
                guard left > .zero else {
                    close(descriptor)
                    return .failed("no answer")
                }
                let milliseconds = Int32(clamping: max(1, Int64((left / .milliseconds(1)).rounded(.up))))
                let ready = poll(&descriptors, 2, milliseconds)
                if ready < 0, errno == EINTR { continue }
                if descriptors[1].revents != 0 {
                    close(descriptor)
                    return .stopped
                }
                if ready > 0 { break }
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
            if error != 0 {
                close(descriptor)
                return .failed(errorText(error))
            }
        }
        _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK)
        var on: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        return .connected(descriptor)
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

/// The answer of an abandoned-on-timeout resolution, handed from the helper thread.
///
/// `@unchecked Sendable`: the result is written and read under `condition`.
private final class ResolutionBox: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<[SocketAddress], TransportError>?

    func deliver(_ result: Result<[SocketAddress], TransportError>) {
        condition.lock()
        self.result = result
        condition.broadcast()
        condition.unlock()
    }

    func wait(until instant: ContinuousClock.Instant) -> Result<[SocketAddress], TransportError>? {
        condition.lock()
        defer { condition.unlock() }
        if result == nil {
            let seconds = max(0, (instant - .now) / .seconds(1))
            _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
        }
        return result
    }
}

/// The first answer of a resolution, awaited without blocking a thread.
///
private final class AsyncResolution: Sendable {
    private typealias Answer = Result<[SocketAddress], TransportError>

    private struct Resolution {
        var result: Answer?
        var waiter: CheckedContinuation<Answer, Never>?
    }

    private let resolution = Mutex(Resolution())

    /// Keeps the first result; later ones are ignored.
    func deliver(_ result: Result<[SocketAddress], TransportError>) {
        let waiter: CheckedContinuation<Answer, Never>? = resolution.withLock { resolution in
            guard resolution.result == nil else { return nil }
            resolution.result = result
            defer { resolution.waiter = nil }
            return resolution.waiter
        }
        waiter?.resume(returning: result)
    }

    func value() async -> Result<[SocketAddress], TransportError> {
        await withCheckedContinuation { continuation in
            let ready: Answer? = resolution.withLock {
                if $0.result == nil { $0.waiter = continuation }
                return $0.result
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
