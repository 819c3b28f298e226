/// LAS's smooth switch (KwaiVideoTeam/las, `abr-get-url.ts`): an HTTP-FLV request whose query carries
/// `startPts=MS` asks a LAS server to start the stream at its keyframe with that presentation time, in milliseconds
/// (a negative number: that far behind the live edge), instead of at its newest GOP. A server that does not know it
/// ignores it. Only the first request of a session asks: a reconnect wants the live edge
/// (``ByteSource/reconnecting``).
public enum LASStart {
    public static let parameter = "startPts"

    /// `url` asking to start at `pts` (any `startPts` it had replaced), the parameter first, as LAS's client puts it.
    public static func url(_ url: String, startingAt pts: Int64) -> String {
        let (path, query) = split(removed(from: url))
        return path + "?\(parameter)=\(pts)" + (query.isEmpty ? "" : "&" + query)
    }

    /// `url` without `startPts`.
    public static func removed(from url: String) -> String {
        let (path, query) = split(url)
        let kept = query.split(separator: "&").filter { !isStart($0) }
        return kept.isEmpty ? path : path + "?" + kept.joined(separator: "&")
    }

    /// The start `url` asks for, if it asks for one.
    public static func startPts(in url: String) -> Int64? {
        split(url).query.split(separator: "&").first(where: isStart).flatMap { Int64($0.dropFirst(parameter.count + 1)) }
    }

    private static func isStart(_ item: Substring) -> Bool { item.hasPrefix(parameter + "=") }

    private static func split(_ url: String) -> (path: String, query: Substring) {
        guard let mark = url.firstIndex(of: "?") else { return (url, "") }
        return (String(url[..<mark]), url[url.index(after: mark)...])
    }
}
