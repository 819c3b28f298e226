import ArgumentParser

@main
struct LivePlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "liveplay",
        abstract: "A live-stream player for HTTP-FLV and RTMP.",
        discussion: """
            `liveplay` alone plays the built-in demo stream. Exit codes: 0 success (the stream ended, \
            --duration or --frames was reached, or SIGINT/SIGTERM stopped it); 64 bad usage; 65 the input is \
            not playable (not FLV); 66 the input does not exist; 69 the server is unreachable, refused, or the \
            connection was lost after every retry; 74 reading the input or writing an output failed.
            """,
        subcommands: [PlayCommand.self, InspectCommand.self],
        defaultSubcommand: PlayCommand.self
    )
}

/// Documented exit codes (BSD sysexits, so shells and monitoring can tell them apart).
enum ExitStatus {
    static let success: Int32 = 0
    static let usage: Int32 = 64
    /// The input is not playable: not FLV, or no decoder opens.
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    /// The server is unreachable, refused the stream, or the connection was lost after every retry.
    static let unavailable: Int32 = 69
    static let ioError: Int32 = 74
}
