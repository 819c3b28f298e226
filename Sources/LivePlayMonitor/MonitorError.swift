import Foundation
import NIOCore

/// What went wrong in the monitor's own work (its players report through their events): a code to branch on,
/// a sentence for a person, and the cause when a library gave one.
public struct MonitorError: Error, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The metrics address cannot be listened on: in use, not this machine's, not permitted, not resolved.
        public static let cannotListen = Code(rawValue: "cannot_listen")
        /// A `/probe` request that cannot be probed (its target or its seconds).
        public static let badProbe = Code(rawValue: "bad_probe")
    }

    public var code: Code
    public var message: String
    /// The library's own error, for the debug log.
    public var cause: (any Error)?

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String { message }

    /// Binding `host:port` failed: the sentence names the address and says why in words, not an errno.
    init(cannotListenOn host: String, port: Int, _ error: any Error) {
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let reason: String
        switch error {
        case let error as IOError where error.errnoCode == EADDRINUSE:
            reason = "the address is already in use (another process listens there)"
        case let error as IOError where error.errnoCode == EADDRNOTAVAIL:
            reason = "the address is not one of this machine's"
        case let error as IOError where error.errnoCode == EACCES:
            reason = "permission denied (ports below 1024 need privileges)"
        case let error as IOError:
            reason = String(cString: strerror(error.errnoCode))
        case is SocketAddressError:
            reason = "\(host) does not resolve to an address"
        default:
            reason = "\(error)"
        }
        self.init(.cannotListen, "cannot serve the metrics on \(address): \(reason)", cause: error)
    }
}
