public import LivePlayCore

/// Codec configuration changes in stream order. A sequence header that arrives mid-stream (a new
/// resolution, another codec) belongs to the packets received after it, not to those still buffered
/// ahead of it, so the decoder must change where the stream does: when the first packet after the header
/// is about to be decoded.
public struct ConfigurationChanges<Configuration: Sendable & Equatable>: Sendable {
    private var pending: [(configuration: Configuration, from: MediaTimestamp?)] = []

    public init() {}

    /// A new configuration arrived; it applies from the next packet received.
    public mutating func schedule(_ configuration: Configuration) {
        pending.append((configuration, nil))
    }

    /// A packet of the track was received (its timestamp already stitched): the changes waiting for their
    /// first packet start at it.
    public mutating func received(dts: MediaTimestamp) {
        for index in pending.indices where pending[index].from == nil {
            pending[index].from = dts
        }
    }

    /// The configuration to switch to before decoding a packet at `dts`: the newest change that starts at
    /// or before it (changes whose packets were shed are passed over), or `nil`.
    public mutating func due(at dts: MediaTimestamp) -> Configuration? {
        var due: Configuration?
        while let first = pending.first, let from = first.from, from <= dts {
            due = first.configuration
            pending.removeFirst()
        }
        return due
    }
}
