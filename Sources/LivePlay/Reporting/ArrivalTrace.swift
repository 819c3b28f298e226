import Foundation
public import LivePlayCore

/// One read of the transport as the play loop took it: when, how many media bytes, and the packets it
/// completed that went into the jitter buffer, on the session's timeline. A sequence of them is an arrival
/// trace (docs/arrival-trace.md): what the latency controller saw of the network, which the simulator replays.
public struct ArrivalRead: Sendable, Hashable, Codable {
    /// A packet, without its payload.
    public struct Packet: Sendable, Hashable, Codable {
        /// FLV tag type: 8 audio, 9 video.
        public var type: UInt8
        /// Decode and presentation time, milliseconds on the session's timeline.
        public var dts: Int64
        public var pts: Int64
        public var keyframe: Bool
        /// Payload bytes.
        public var size: Int

        public init(_ packet: EncodedPacket) {
            type = packet.kind == .video ? 9 : 8
            dts = packet.dts.milliseconds
            pts = packet.pts.milliseconds
            keyframe = packet.isKeyframe
            size = packet.payload.count
        }

        /// The packet with a zero-filled payload of its size.
        public var encodedPacket: EncodedPacket {
            EncodedPacket(
                kind: type == 9 ? .video : .audio, dts: MediaTimestamp(milliseconds: dts),
                pts: MediaTimestamp(milliseconds: pts), isKeyframe: keyframe, payload: [UInt8](repeating: 0, count: size))
        }
    }

    /// Session time the play loop took the read at, in milliseconds.
    public var milliseconds: Int64
    /// Media bytes the read carried (FLV bytes, or RTMP messages counted as FLV tags).
    public var bytes: Int
    public var packets: [Packet]
    /// The connection the read came on, counting from 1 (a reconnect starts the next); absent in older traces.
    public var connection: Int?
    /// The play loop's turn that took the read, counting from 1; absent in older traces. The reads of one turn were
    /// all taken before the engine advanced once, however far apart their times (taking a large read takes time).
    public var turn: Int?

    public init(milliseconds: Int64, bytes: Int, packets: [Packet], connection: Int? = nil, turn: Int? = nil) {
        self.milliseconds = milliseconds
        self.bytes = bytes
        self.packets = packets
        self.connection = connection
        self.turn = turn
    }
}

/// Receives every read as the play loop takes it: a tap on the transport side of the play loop. Called on the
/// play loop's thread: return at once.
public protocol ArrivalTap: AnyObject, Sendable {
    func arrived(_ read: ArrivalRead)
}

/// Writes an arrival trace as JSON lines (docs/arrival-trace.md), one ``ArrivalRead`` a line, on a writer
/// thread of its own; a full queue drops reads and counts them rather than stall playback.
///
public final class ArrivalTraceFile: ArrivalTap, Sendable {
    private let writer: SinkWriter<EncodedItemsOutput<ArrivalRead>>

    /// Opens the output now (a file is created or truncated, so a bad path fails here). `-` is standard output.
    public init(path: String) throws(LivePlayError) {
        let file = try OutputFile(SinkOutput(argument: path))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let output = EncodedItemsOutput<ArrivalRead>(file: file) { (read) throws(LivePlayError) in
            do {
                return [UInt8](try encoder.encode(read)) + [0x0A]
            } catch {
                throw LivePlayError(.outputFailed, "arrival trace: \(error)")
            }
        }
        writer = SinkWriter(name: "liveplay-trace", output: output, limits: WriteQueueLimits(items: 4096, bytes: 8 << 20))
    }

    deinit {
        _ = writer.finish(timeout: .seconds(10))
    }

    public func arrived(_ read: ArrivalRead) {
        _ = writer.submit(read, bytes: 32 + read.packets.count * 48)
    }

    /// Reads dropped because the writer queue was full.
    public var droppedReads: Int { writer.snapshot.dropped }

    /// Writes what is queued and closes the file; throws what stopped the writer, if anything did.
    public func finish(timeout: Duration = .seconds(10)) throws(LivePlayError) {
        if let error = writer.finish(timeout: timeout) { throw error }
    }

    /// Reads a trace file back: every line that parses, in order.
    public static func read(path: String) throws -> [ArrivalRead] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let decoder = JSONDecoder()
        return try text.split(separator: "\n").map { try decoder.decode(ArrivalRead.self, from: Data($0.utf8)) }
    }
}
