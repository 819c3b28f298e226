/// An SEI message of any payload type, as TXLivePlayer V2's `onReceiveSeiMessage` delivers it: user data
/// unregistered (5), or the types CDNs and Tencent's pusher use for their own data (242, 243).
public struct SEIMessage: Sendable, Hashable {
    public var payloadType: Int
    /// The payload; for type 5 the bytes after the UUID.
    public var payload: [UInt8]
    /// Type 5's 16-byte UUID.
    public var uuid: [UInt8]?

    public init(payloadType: Int, payload: [UInt8], uuid: [UInt8]? = nil) {
        self.payloadType = payloadType
        self.payload = payload
        self.uuid = uuid
    }

    /// The UUID as `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    public var uuidString: String? { uuid.map(Self.uuidString) }

    /// 16 bytes as `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    public static func uuidString(_ uuid: [UInt8]) -> String {
        let hex = uuid.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }
        guard hex.count == 16 else { return hex.joined() }
        let groups = [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }
        return groups.joined(separator: "-")
    }
}
