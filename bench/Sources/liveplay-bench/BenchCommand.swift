/// # liveplay-bench
///
/// Times liveplay's own stages with no player around them, so `bench/run` can set them beside ffmpeg:
/// `demux` measures FLV demuxing throughput from memory, `decode` the CPU time of demuxing and decoding a
/// file to a null sink (or up to its first frame), `fixture` writes one codec's Enhanced RTMP v2 FLV beside its
/// elementary source, `players` runs N live players in one process and checks that each keeps time.
/// Each subcommand prints one JSON line on stdout.
import ArgumentParser

@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "liveplay-bench",
        abstract: "Benchmarks liveplay's demuxer and decoders; prints one JSON line per run.",
        subcommands: [DemuxCommand.self, DecodeCommand.self, FixtureCommand.self, PlayersCommand.self, SessionsCommand.self, ZapCommand.self]
    )
}
