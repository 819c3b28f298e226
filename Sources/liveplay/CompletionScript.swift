import ArgumentParser

/// `liveplay --generate-completion-script SHELL`: ArgumentParser's script, taught that `play` is the default
/// subcommand. As generated, the script offers only the subcommands' names after `liveplay`, while a person types
/// `liveplay --mode <TAB>` (ArgumentParser's generators do not read `defaultSubcommand`). Bash and fish are given
/// play's options and values where no subcommand was named; zsh's script is ArgumentParser's own.
enum CompletionScript {
    /// The script for `shell` (`bash`, `zsh`, `fish`), or `nil` for a shell ArgumentParser does not know.
    static func script(for shell: String) -> String? {
        guard let kind = CompletionShell(rawValue: shell) else { return nil }
        let script = LivePlayCommand.completionScript(for: kind)
        switch kind {
        case .bash: return bash(script)
        case .fish: return fish(script)
        default: return script
        }
    }

    /// Where the root's function offers subcommand names, it first offers play's own completions for the words as
    /// typed, so `liveplay --mo` completes to `--mode` and `liveplay --mode ` to its values.
    static func bash(_ script: String) -> String {
        let offer = "        # Offer subcommand completions\n"
        guard let range = script.range(of: offer) else { return script }
        return script.replacingCharacters(
            in: range,
            with: """
                        # `play` is the default subcommand: its options and values complete without its name.
                        unparsed_words=("${subcommand}" "${unparsed_words[@]}")
                        _liveplay_play
                        [[ "${cur}" == -* ]] && return

                """ + offer)
    }

    /// The root parses play's options, and each of play's completions is also offered where no subcommand was named.
    static func fish(_ script: String) -> String {
        let lines = script.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let playParse = lines.first(where: { $0.contains("__liveplay_parse_subcommand -r 1 'j/json'") }),
            let rootParse = lines.firstIndex(where: { $0.contains("__liveplay_parse_subcommand 0 'version' 'h/help'") })
        else { return script }
        var output = lines
        // Play's options, up to the first word that is not one (a subcommand's name, or a URL).
        output[rootParse] = playParse.replacingOccurrences(of: "__liveplay_parse_subcommand -r 1 ", with: "__liveplay_parse_subcommand 0 ")
        let rootOnly = "\"liveplay\" "
        for line in lines where line.contains("\"liveplay play\" ") && line.hasPrefix("complete ") {
            output.append(line.replacingOccurrences(of: "\"liveplay play\" ", with: rootOnly))
        }
        return output.joined(separator: "\n")
    }
}
