import ArgumentParser
import Foundation
import LivePlay

/// Feeds a file held in memory through `FLVDemuxer` in network-sized chunks and reports throughput.
struct DemuxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demux",
        abstract: "Time FLVDemuxer over a file read into memory once, fed in 64 KiB chunks."
    )

    /// What one `demux` run prints.
    struct Result: Encodable {
        var benchmark = "demux"
        var file: String
        var fileBytes: Int
        var repeats: Int
        var chunkBytes: Int
        /// Packets (audio and video, configurations excluded) over all repeats.
        var packets: Int
        /// Packet payload bytes over all repeats.
        var payloadBytes: Int
        var warnings: Int
        var wallSeconds: Double
        /// Input bytes over all repeats per wall second, in 10⁶ bytes.
        var megabytesPerSecond: Double
    }

    @Argument(help: "The FLV file.")
    var file: String

    @Option(help: "Times to demux the whole file.")
    var `repeat` = 1

    @Option(help: "Bytes handed to the demuxer at a time.")
    var chunkSize = 64 << 10

    func validate() throws {
        guard `repeat` >= 1 else { throw ValidationError("--repeat must be at least 1") }
        guard chunkSize >= 1 else { throw ValidationError("--chunk-size must be at least 1") }
    }

    func run() throws {
        // Mapped rather than copied: a 200 MB copy into fresh anonymous pages costs the process more than
        // demuxing it does, which would hide the demuxer in the whole-process figure. The pages are faulted
        // in before the clock starts, so the timed loop reads memory only.
        let data = try Data(contentsOf: URL(fileURLWithPath: file), options: .alwaysMapped)
        let counts = try data.withUnsafeBytes { bytes in
            prefault(bytes)
            return try demux(bytes)
        }
        try printJSONLine(
            Result(
                file: file, fileBytes: data.count, repeats: `repeat`, chunkBytes: chunkSize, packets: counts.packets,
                payloadBytes: counts.payloadBytes, warnings: counts.warnings, wallSeconds: rounded(counts.seconds),
                megabytesPerSecond: rounded(Double(data.count * `repeat`) / counts.seconds / 1e6, places: 3)))
    }

    /// What ``demux(_:)`` counted, and how long it took.
    private struct Counts {
        var packets = 0
        var payloadBytes = 0
        var warnings = 0
        var seconds = 0.0
    }

    /// Populates the page tables for `bytes` (a file mapping) so the timed loop takes no page faults.
    private func prefault(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = Int(bitPattern: base) & ~(pageSize - 1)
        let length = Int(bitPattern: base) + bytes.count - start
        #if os(Linux)
        // MADV_POPULATE_READ (Linux 5.14); older kernels fault the pages in during the first repeat instead.
        _ = madvise(UnsafeMutableRawPointer(bitPattern: start), length, 22)
        #endif
    }

    /// Demuxes `bytes` ``repeat`` times, timing only the demuxing: the file is already in memory.
    private func demux(_ bytes: UnsafeRawBufferPointer) throws(FLVError) -> Counts {
        var counts = Counts()
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<`repeat` {
            var demuxer = FLVDemuxer()
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + chunkSize, bytes.count)
                demuxer.append(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
                offset = end
                if offset == bytes.count { demuxer.finish() }
                while let element = try demuxer.nextElement() {
                    switch element {
                    case .packet(let packet):
                        counts.packets += 1
                        counts.payloadBytes += packet.size
                    case .warning:
                        counts.warnings += 1
                    default:
                        break
                    }
                }
            }
        }
        counts.seconds = seconds(start.duration(to: clock.now))
        return counts
    }
}
