public import NIOCore

/// Which way bytes flow through the proxy.
public enum ProxyDirection: String, Sendable, CaseIterable {
    /// Upstream server to client: what a player receives. Most impairments belong here.
    case downstream
    /// Client to upstream server.
    case upstream
    case both

    func includes(_ other: ProxyDirection) -> Bool {
        self == .both || self == other
    }
}

/// An impairment applied to the bytes of one direction, modelled on toxiproxy's toxics.
public enum Toxic: Sendable, Hashable {
    /// Holds each read for `delay` plus a uniform random `± jitter` (order is always kept, so jitter
    /// delays later bytes rather than reordering them).
    case latency(Duration, jitter: Duration = .zero)
    /// Caps throughput with a token bucket (bursts of at most 40 ms of the rate).
    case bandwidth(bytesPerSecond: Int)
    /// Passes nothing for the duration while the connection stays open; held bytes then flow on.
    case stall(Duration)
    /// Splits writes into segments of `averageSize ± sizeVariation` bytes, `delay` apart.
    case slicer(averageSize: Int, sizeVariation: Int = 0, delay: Duration = .zero)

    public enum Kind: String, Sendable, CaseIterable {
        case latency, bandwidth, stall, slicer
    }

    public var kind: Kind {
        switch self {
        case .latency: .latency
        case .bandwidth: .bandwidth
        case .stall: .stall
        case .slicer: .slicer
        }
    }
}

/// Something the proxy does, now or at a point of a timeline.
public enum ImpairmentAction: Sendable, Hashable {
    /// Adds a toxic, replacing one of the same kind.
    case set(Toxic, ProxyDirection = .downstream)
    /// Removes a toxic kind, or all toxics when `nil`.
    case clear(Toxic.Kind? = nil, ProxyDirection = .both)
    /// Closes both sides of the connections at once, with a TCP reset (toxiproxy's `reset_peer`).
    case reset
    /// Cuts every connection and refuses new ones (accepts and resets them at once) for the duration.
    case down(Duration)
}

/// The toxics in force on one direction of a connection.
public struct ToxicSet: Sendable, Equatable {
    public struct Slicer: Sendable, Equatable {
        public var averageSize: Int
        public var sizeVariation: Int
        public var delay: Duration
    }

    public var latency: Duration = .zero
    public var jitter: Duration = .zero
    public var bytesPerSecond: Int?
    public var slicer: Slicer?
    /// Nothing passes before this instant.
    public var stalledUntil: NIODeadline?

    public init() {}

    /// The set with `toxics` applied in order (a stall counts from now).
    public init(_ toxics: [Toxic]) {
        let now = NIODeadline.now()
        for toxic in toxics { apply(toxic, now: now) }
    }

    public var isEmpty: Bool { self == ToxicSet() }

    /// Adds `toxic`; a stall is fixed to an absolute end from `now`.
    public mutating func apply(_ toxic: Toxic, now: NIODeadline) {
        switch toxic {
        case .latency(let delay, let jitter):
            latency = max(delay, .zero)
            self.jitter = max(jitter, .zero)
        case .bandwidth(let rate):
            bytesPerSecond = max(1, rate)
        case .stall(let duration):
            stalledUntil = now + TimeAmount(duration)
        case .slicer(let size, let variation, let delay):
            slicer = Slicer(averageSize: max(1, size), sizeVariation: max(0, variation), delay: max(delay, .zero))
        }
    }

    public mutating func clear(_ kind: Toxic.Kind?) {
        switch kind {
        case nil: self = ToxicSet()
        case .latency?:
            latency = .zero
            jitter = .zero
        case .bandwidth?: bytesPerSecond = nil
        case .stall?: stalledUntil = nil
        case .slicer?: slicer = nil
        }
    }
}

/// Actions at points in time, relative to the proxy's start or to each connection's start.
public struct ImpairmentTimeline: Sendable, Equatable {
    public enum Origin: String, Sendable, CaseIterable {
        case proxyStart = "proxy"
        case connectionStart = "connection"
    }

    public struct Entry: Sendable, Equatable {
        public var at: Duration
        public var action: ImpairmentAction

        public init(at: Duration, _ action: ImpairmentAction) {
            self.at = at
            self.action = action
        }
    }

    public var origin: Origin
    public var entries: [Entry]

    public init(origin: Origin = .proxyStart, _ entries: [Entry] = []) {
        self.origin = origin
        self.entries = entries.sorted { $0.at < $1.at }
    }

    /// Parses `at=5s stall=3s; at=10s reset; at=15s down=4s; at=20s latency=200 jitter=50; at=30s clear`.
    ///
    /// Entries are separated by `;`; each has `at=` and one action: `stall=DUR`, `down=DUR`, `reset`,
    /// `latency=DUR [jitter=DUR]`, `bandwidth=KBIT/S`, `slice=BYTES [variation=BYTES] [slice_delay=DUR]`,
    /// `clear` or `clear=KIND`; `dir=down|up|both` picks the direction (default down). A duration is a
    /// number with `ms` or `s`; a bare number means seconds for `at`, `stall`, `down` and milliseconds for
    /// `latency`, `jitter`, `slice_delay`.
    public static func parse(_ text: String, origin: Origin = .proxyStart) throws(LabError) -> ImpairmentTimeline {
        var entries: [Entry] = []
        for part in text.split(separator: ";") {
            let entryText = part.trimmingSpaces
            guard !entryText.isEmpty else { continue }
            var fields: [String: String] = [:]
            var order: [String] = []
            for word in entryText.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }) {
                let pair = word.split(separator: "=", maxSplits: 1)
                let key = String(pair[0]).lowercased()
                guard fields[key] == nil else { throw LabError(.invalidTimeline, "'\(key)' twice in '\(entryText)'") }
                fields[key] = pair.count > 1 ? String(pair[1]) : ""
                order.append(key)
            }
            guard let atText = fields.removeValue(forKey: "at") else {
                throw LabError(.invalidTimeline, "missing at= in '\(entryText)'")
            }
            let at = try parseDuration(atText, bareUnit: .seconds)
            let action = try ToxicOptions.action(from: fields, order: order.filter { $0 != "at" }, text: entryText)
            entries.append(Entry(at: at, action))
        }
        return ImpairmentTimeline(origin: origin, entries)
    }

    enum BareUnit {
        case seconds, milliseconds
    }

    static func parseDuration(_ text: String, bareUnit: BareUnit) throws(LabError) -> Duration {
        let lower = text.lowercased()
        let (number, scale): (Substring, Double) =
            if lower.hasSuffix("ms") { (lower.dropLast(2), 1e-3) }
            else if lower.hasSuffix("s") { (lower.dropLast(1), 1) }
            else { (Substring(lower), bareUnit == .seconds ? 1 : 1e-3) }
        guard let value = Double(number), value >= 0, value.isFinite else {
            throw LabError(.invalidTimeline, "bad duration '\(text)'")
        }
        return .nanoseconds(Int64((value * scale * 1e9).rounded()))
    }
}

/// Turns `key=value` fields (timeline entries, CLI flags) into actions.
enum ToxicOptions {
    static func action(from fields: [String: String], order: [String], text: String) throws(LabError)
        -> ImpairmentAction
    {
        var fields = fields
        let direction: ProxyDirection
        let directionText = fields.removeValue(forKey: "dir")
        switch directionText?.lowercased() {
        case nil, "down", "downstream": direction = .downstream
        case "up", "upstream": direction = .upstream
        case "both": direction = .both
        case let other?: throw LabError(.invalidTimeline, "bad dir '\(other)' in '\(text)'")
        }
        let actions: Set<String> = ["stall", "down", "reset", "latency", "bandwidth", "slice", "clear"]
        let actionKeys = order.filter { actions.contains($0) }
        guard actionKeys.count == 1, let key = actionKeys.first else {
            throw LabError(.invalidTimeline, "need exactly one action in '\(text)'")
        }
        let value = fields.removeValue(forKey: key) ?? ""
        let action: ImpairmentAction
        switch key {
        case "stall":
            action = .set(.stall(try ImpairmentTimeline.parseDuration(value, bareUnit: .seconds)), direction)
        case "down":
            action = .down(try ImpairmentTimeline.parseDuration(value, bareUnit: .seconds))
        case "reset":
            action = .reset
        case "latency":
            let jitter = try fields.removeValue(forKey: "jitter").map { (text: String) throws(LabError) in
                try ImpairmentTimeline.parseDuration(text, bareUnit: .milliseconds)
            } ?? .zero
            action = .set(
                .latency(try ImpairmentTimeline.parseDuration(value, bareUnit: .milliseconds), jitter: jitter),
                direction)
        case "bandwidth":
            action = .set(.bandwidth(bytesPerSecond: try bitRate(value)), direction)
        case "slice":
            guard let size = Int(value), size > 0 else { throw LabError(.invalidTimeline, "bad slice '\(value)'") }
            let variation = try fields.removeValue(forKey: "variation").map { (text: String) throws(LabError) in
                guard let number = Int(text), number >= 0 else {
                    throw LabError(.invalidTimeline, "bad variation '\(text)'")
                }
                return number
            } ?? 0
            let delay = try fields.removeValue(forKey: "slice_delay").map { (text: String) throws(LabError) in
                try ImpairmentTimeline.parseDuration(text, bareUnit: .milliseconds)
            } ?? .zero
            action = .set(.slicer(averageSize: size, sizeVariation: variation, delay: delay), direction)
        default:
            if value.isEmpty {
                action = .clear(nil, directionText == nil ? .both : direction)
            } else {
                guard let kind = Toxic.Kind(rawValue: value.lowercased()) else {
                    throw LabError(.invalidTimeline, "bad toxic kind '\(value)'")
                }
                action = .clear(kind, directionText == nil ? .both : direction)
            }
        }
        if let unused = fields.keys.sorted().first {
            throw LabError(.invalidTimeline, "unknown or misplaced '\(unused)' in '\(text)'")
        }
        return action
    }

    /// Kilobits per second (`2000`, `2000kbps`, `2mbps`) as bytes per second.
    static func bitRate(_ text: String) throws(LabError) -> Int {
        let lower = text.lowercased()
        let (number, scale): (Substring, Double) =
            if lower.hasSuffix("mbps") { (lower.dropLast(4), 1e6) }
            else if lower.hasSuffix("kbps") { (lower.dropLast(4), 1e3) }
            else { (Substring(lower), 1e3) }
        guard let value = Double(number), value > 0, value.isFinite else {
            throw LabError(.invalidTimeline, "bad bandwidth '\(text)'")
        }
        return max(1, Int(value * scale / 8))
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" || $0 == "\n" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\n" }
            .reversed())
    }
}
