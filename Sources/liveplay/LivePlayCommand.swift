import ArgumentParser
import Foundation

@main
struct LivePlayCommand: AsyncParsableCommand {
    /// The CLI's version (`liveplay --version`, the `start` line of the JSON log).
    static let version = "0.13.0"

    static let configuration = CommandConfiguration(
        commandName: "liveplay",
        abstract: "A live-stream player for HTTP-FLV and RTMP.",
        discussion: """
            `liveplay` alone plays the built-in demo stream; `liveplay URL` plays a stream (`play` is the \
            default subcommand: `liveplay help play` and `liveplay --help` show its options). Shell completion: \
            `liveplay --generate-completion-script bash` (or zsh, fish).
            """,
        version: version,
        subcommands: [PlayCommand.self, InspectCommand.self, DownloadCommand.self, MonitorCommand.self],
        defaultSubcommand: PlayCommand.self
    )

    /// `liveplay --help` (and `-h`, `help`) shows what a person looks for first: the play options and
    /// examples, then the other subcommands. Everything else is ArgumentParser's.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"] {
            print(helpText(columns: nil))
            return
        }
        if arguments.count == 2, arguments[0] == "--generate-completion-script", let script = CompletionScript.script(for: arguments[1]) {
            print(script)
            return
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    /// The play command's help under the `liveplay` name, followed by the subcommands.
    static func helpText(columns: Int?) -> String {
        var text = PlayCommand.helpMessage(for: PlayCommand.self, columns: columns)
        text = text.replacingOccurrences(of: "OVERVIEW: ", with: "OVERVIEW: liveplay — ")
        text += """


            SUBCOMMANDS:
              play (default)          Play a stream or file (the options above).
              inspect                 Describe an FLV file or live URL; list packets or frames as JSON.
              download                Download HTTP FLV files into the media cache; run again to resume.
              monitor                 Watch many streams: JSON lines, Prometheus metrics, sharding.

              See 'liveplay help inspect', 'liveplay help download' and 'liveplay help monitor' for their
              options; 'liveplay --version' prints the version.
            """
        return text
    }
}

/// Documented exit codes (BSD sysexits, so shells and monitoring can tell them apart).
enum ExitStatus {
    /// Media played and the run ended as asked (or by a signal, or a closed stdout).
    static let success: Int32 = 0
    /// Bad usage: an option, or a malformed or unsupported URL.
    static let usage: Int32 = 64
    /// The input is not playable: not FLV, no decoder opens, or it ended without any media.
    static let dataError: Int32 = 65
    /// The file does not exist.
    static let noInput: Int32 = 66
    /// Nothing played: unreachable, refused, lost after every retry, or no media within --duration.
    static let unavailable: Int32 = 69
    /// `monitor`: the --metrics-listen address cannot be listened on (in use, not this machine's, not permitted).
    static let cannotListen: Int32 = 71
    static let ioError: Int32 = 74
}
