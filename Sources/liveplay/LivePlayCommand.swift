import ArgumentParser

@main
struct LivePlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "liveplay",
        abstract: "A live-stream player for HTTP-FLV and RTMP.",
        discussion: """
            Exit codes: 0 success (stream ended, or --duration elapsed); 1 playback stopped by a PLAY_ERR_* \
            event; 64 bad usage; 65 the input is not FLV; 66 the input does not exist; 74 reading the input \
            failed; 130 interrupted.
            """,
        subcommands: [PlayCommand.self, InspectCommand.self],
        defaultSubcommand: PlayCommand.self
    )
}

/// Documented exit codes (BSD sysexits, so shells and monitoring can tell them apart).
enum ExitStatus {
    static let success: Int32 = 0
    static let playbackError: Int32 = 1
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    static let ioError: Int32 = 74
}
