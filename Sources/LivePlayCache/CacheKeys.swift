import Foundation
import LivePlayCore
import LivePlayDecode

/// How a URL becomes a cache key: the same file under another signed-URL token is the same entry.
public struct CacheKeys: Sendable, Hashable {
    /// Query parameters that change from request to request for the same file (a signed URL's token and
    /// expiry, `txSecret`, `txTime`, `Expires`, …), compared without regard to case: left out of the key.
    public var volatileParameters: Set<String>

    public init(volatileParameters: Set<String> = []) {
        self.volatileParameters = Set(volatileParameters.map { $0.lowercased() })
    }

    /// The URL as the key sees it: scheme and host in lower case, no fragment, the query's parameters in
    /// order of name with the volatile ones left out.
    public func canonical(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.fragment = nil
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        if let items = components.queryItems {
            let kept = items.filter { !volatileParameters.contains($0.name.lowercased()) }
                .sorted { ($0.name, $0.value ?? "") < ($1.name, $1.value ?? "") }
            components.queryItems = kept.isEmpty ? nil : kept
        }
        return components.string ?? url
    }

    /// SHA-256 of ``canonical(_:)``, in hex: what the index and the data file are named by, so a token that is
    /// not volatile is not written out in clear either.
    public func key(for url: String) -> String {
        SHA256.hex(canonical(url).utf8)
    }
}
