import Foundation
import LivePlayCore

extension StreamURL {
    /// What can be known of `url` before connecting, as the error playing it would end with: a malformed URL or a
    /// scheme liveplay does not play (``TransportError/Code/invalidURL``, ``StreamAddress``'s sentence, a port
    /// outside 1…65535 included), a local path that does not exist (``TransportError/Code/notFound``) or is a
    /// directory (``TransportError/Code/openFailed``). Front ends that take many inputs at once (a monitor's list)
    /// check them all when they load them, so a typo is told at once rather than found as a stream that never plays.
    public static func check(_ url: String) throws(TransportError) {
        let address: StreamAddress
        do {
            address = try StreamAddress(parsing: url)
        } catch {
            throw TransportError(.invalidURL, error.message)
        }
        guard address.isLocalFile else { return }
        // Shown as a URL would be: `host:1935/live/a?token=…` without its scheme is a path too.
        let shown = Redaction.url(address.path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: address.path, isDirectory: &isDirectory) else {
            throw TransportError(.notFound, "no such file: \(shown)")
        }
        if isDirectory.boolValue { throw TransportError(.openFailed, "\(shown) is a directory, not an FLV file") }
    }
}
