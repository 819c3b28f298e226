import Foundation

/// Loopback TCP ports for test servers.
public enum LoopbackPort {
    /// A port on 127.0.0.1 that was free a moment ago: the kernel picks it for a socket bound to port 0,
    /// which is then closed. Another process could take it in between; on a test machine that is rare.
    public static func free() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw LoopbackError("socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw LoopbackError("bind: \(String(cString: strerror(errno)))") }
        return try boundPort(descriptor)
    }

    /// A listening socket on a free 127.0.0.1 port (backlog 0 holds exactly one pending connection).
    public static func listen(backlog: Int32 = 64) throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw LoopbackError("socket: \(String(cString: strerror(errno)))") }
        var on: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(descriptor, backlog) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw LoopbackError("bind/listen: \(reason)")
        }
        return (descriptor, try boundPort(descriptor))
    }

    /// Writes all of `bytes`; `false` when the peer went away.
    public static func send(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` right now.
    public static func isAccepting(_ port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = loopback(port: port)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return status == 0
    }

    /// Polls until `condition` holds or `timeout` passes; `true` if it held.
    public static func wait(
        timeout: Duration, interval: Duration = .milliseconds(20), until condition: () -> Bool
    ) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: interval / .seconds(1))
        }
        return condition()
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    static func boundPort(_ descriptor: Int32) throws -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let status = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard status == 0 else { throw LoopbackError("getsockname: \(String(cString: strerror(errno)))") }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// A test server or helper could not be set up.
public struct LoopbackError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
