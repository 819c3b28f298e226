import Foundation
import LivePlayFLV

/// A live stream played through a ``TimeShiftRing``: ``record()`` keeps reading the live source into the ring
/// (reconnecting after a loss) whatever playback does, and each connection of this source reads the ring, from
/// its newest keyframe (``makeConnection()``: live) or from the keyframe at or before a stream time
/// (``makeConnection(startingAt:)``, whose offset here is a stream time in milliseconds, not a byte).
///
/// A reader at the newest tag follows the recorder; when the live connection is lost there, the loss is thrown to
/// the reader, so the play loop reports and retries it as it would without time-shift. A reader behind goes on
/// from disk meanwhile.
public struct TimeShiftSource: ByteSource {
    public let live: any ByteSource
    public let ring: TimeShiftRing
    /// How long the recorder waits before connecting again after a loss.
    public let retryInterval: Duration
    /// How the recorder waits: the session's clock, as its supervisor waits.
    private let sleep: @Sendable (Duration) async throws -> Void

    public init(
        live: any ByteSource, ring: TimeShiftRing, retryInterval: Duration,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.live = live
        self.ring = ring
        self.retryInterval = retryInterval
        self.sleep = sleep
    }

    public func makeConnection() -> any ByteConnection {
        RingReader(ring: ring, startTime: nil)
    }

    public func makeConnection(startingAt offset: Int64) -> (any ByteConnection)? {
        RingReader(ring: ring, startTime: offset > 0 ? UInt32(clamping: offset) : nil)
    }

    /// Reads the live source into the ring until the task is cancelled or the stream finishes by design.
    public func record() async {
        while !Task.isCancelled {
            let connection = live.makeConnection()
            var framer = FLVTagFramer()
            ring.connectionBegan(serverAddress: nil)
            do throws(TransportError) {
                while let event = try await connection.next() {
                    switch event {
                    case .connected(let address):
                        ring.connectionBegan(serverAddress: address)
                    case .bytes(let bytes):
                        framer.append(bytes)
                        do {
                            while let tag = try framer.nextTag() { ring.append(tag) }
                        } catch {
                            throw TransportError(.protocolViolation, "time-shift: \(error.message)")
                        }
                    case .tags(let tags):
                        for tag in tags { ring.append(tag) }
                    case .onDemand:
                        await connection.close()
                        ring.setStatus(.finished(TransportError(.openFailed, "time-shift is for live streams; this is a file")))
                        return
                    default:
                        break
                    }
                }
                await connection.close()
                ring.setStatus(.finished(nil))
                return
            } catch {
                await connection.close()
                if Task.isCancelled { return }
                ring.setStatus(.lost(error))
                try? await sleep(retryInterval)
            }
        }
    }
}

/// One connection of a ``TimeShiftSource``: the ring's bytes from a keyframe on, then each tag as it is written.
private final class RingReader: ByteConnection {
    private let ring: TimeShiftRing
    private let startTime: UInt32?
    private var position: TimeShiftRing.Position?
    private var pending: [TransportEvent] = []
    private var closed = false
    static let chunkSize: Int64 = 64 << 10

    init(ring: TimeShiftRing, startTime: UInt32?) {
        self.ring = ring
        self.startTime = startTime
    }

    func next() async throws(TransportError) -> TransportEvent? {
        if !pending.isEmpty { return pending.removeFirst() }
        while !closed {
            guard let position else {
                try await begin()
                if !pending.isEmpty { return pending.removeFirst() }
                continue
            }
            switch ring.next(after: position) {
            case .read(let path, let range):
                let end = min(range.upperBound, range.lowerBound + Self.chunkSize)
                let bytes = try Self.read(path, range.lowerBound..<end)
                self.position?.offset = end
                return .bytes(bytes)
            case .moveTo(let next):
                self.position = next
            case .wait(let status):
                switch status {
                case .lost(let error): throw error
                case .finished(let error?): throw error
                case .finished(nil): return nil
                case .recording, .diskFull: await ring.waitForMore(than: position)
                }
                if Task.isCancelled { throw TransportError(.readFailed, "cancelled") }
            }
        }
        return nil
    }

    /// Waits for the ring's first keyframe, then queues what a connection reports and the first bytes: the FLV
    /// header, metadata and sequence headers of the keyframe's segment.
    private func begin() async throws(TransportError) {
        while ring.start(at: startTime) == nil {
            let probe = TimeShiftRing.Position(segment: -1, offset: 0)
            if case .wait(let status) = ring.next(after: probe) {
                switch status {
                case .lost(let error): throw error
                case .finished(let error): throw error ?? TransportError(.serverClosed, "the live stream ended")
                case .recording, .diskFull: await ring.waitForMore(than: probe)
                }
            }
            if Task.isCancelled { throw TransportError(.readFailed, "cancelled") }
        }
        guard let (segment, start) = ring.start(at: startTime) else { return }
        let head = try Self.read(segment.path, 0..<segment.headLength)
        position = start
        pending = [.connected(serverAddress: ring.serverAddress), .handshakeDone, .streamBegin, .bytes(head)]
    }

    private static func read(_ path: String, _ range: Range<Int64>) throws(TransportError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw TransportError(.readFailed, "time-shift segment \(path) is gone")
        }
        defer { try? handle.close() }
        do {
            try handle.seek(toOffset: UInt64(range.lowerBound))
            return [UInt8](try handle.read(upToCount: Int(range.count)) ?? Data())
        } catch {
            throw TransportError(.readFailed, "reading time-shift segment \(path)", detail: "\(error)")
        }
    }

    func close() async {
        closed = true
    }
}
