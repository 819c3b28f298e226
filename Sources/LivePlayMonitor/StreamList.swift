import LivePlay

/// One stream an operator watches: a stable ID (the `stream` label), its URL, and its own options.
public struct MonitoredStream: Sendable, Hashable {
    public var id: String
    public var url: String
    /// The options after the URL on its line (`--mode speed`, `--decode`), as words.
    public var options: [String]

    public init(id: String, url: String, options: [String] = []) {
        self.id = id
        self.url = url
        self.options = options
    }
}

/// The operator's list of streams: one `ID URL [options]` per line, `#` comments and blank lines ignored.
public enum StreamList {
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }

        public init(line: Int, message: String) {
            self.line = line
            self.message = message
        }
    }

    /// IDs: letters, digits and `._:-`, 1 to 128 characters (a Prometheus label value could hold more; an operator's
    /// name for a stream should not).
    public static func isValidID(_ id: String) -> Bool {
        (1...128).contains(id.count) && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._:-".contains($0)) }
    }

    public static func parse(_ text: String) throws(ParseError) -> [MonitoredStream] {
        var streams: [MonitoredStream] = []
        var seen: Set<String> = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            guard !words.isEmpty else { continue }
            guard words.count >= 2 else { throw ParseError(line: index + 1, message: "expected `ID URL [options]`") }
            guard isValidID(words[0]) else {
                throw ParseError(line: index + 1, message: "the ID may hold letters, digits and ._:- (1 to 128)")
            }
            // `play`'s check and its words: a port out of range, `ftp://`, a file that is not there.
            do {
                try StreamURL.check(words[1])
            } catch {
                throw ParseError(line: index + 1, message: "\(words[0]): \(error.message)")
            }
            guard seen.insert(words[0]).inserted else {
                throw ParseError(line: index + 1, message: "the ID \(words[0]) is already used")
            }
            streams.append(MonitoredStream(id: words[0], url: words[1], options: Array(words.dropFirst(2))))
        }
        return streams
    }

    /// An ID for a URL given on the command line: host, port and path, made label-safe; never the query (a token).
    public static func derivedID(for url: String) -> String {
        guard let address = try? StreamAddress(parsing: url) else { return "stream" }
        // The parsed path may still carry the query and fragment: both are cut, a token must never become a label.
        let path = address.path.prefix { $0 != "?" && $0 != "#" }
        let text = "\(address.host)-\(address.port)\(path)"
        let safe = String(text.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._:-".contains($0)) ? $0 : "-" })
        return String(safe.prefix(128))
    }
}

/// What a new list changes, by stream ID: which to start, stop, and restart (the URL or options changed).
public struct MonitorPlan: Sendable, Hashable {
    public var start: [MonitoredStream] = []
    public var stop: [String] = []
    public var restart: [MonitoredStream] = []

    public init(from old: [MonitoredStream], to new: [MonitoredStream]) {
        let before = Dictionary(uniqueKeysWithValues: old.map { ($0.id, $0) })
        let after = Set(new.map(\.id))
        for stream in new {
            switch before[stream.id] {
            case nil: start.append(stream)
            case let previous? where previous != stream: restart.append(stream)
            default: break
            }
        }
        stop = old.map(\.id).filter { !after.contains($0) }
    }

    public var isEmpty: Bool { start.isEmpty && stop.isEmpty && restart.isEmpty }
}

extension Duration {
    /// Seconds as a `Double` (metrics are in base units).
    var secondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
