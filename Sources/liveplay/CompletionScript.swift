import ArgumentParser

/// `liveplay --generate-completion-script SHELL`: ArgumentParser's script, taught that `play` is the default
/// subcommand. As generated, the script offers only the subcommands' names after `liveplay`, while a person types
/// `liveplay --mode <TAB>` (ArgumentParser's generators do not read `defaultSubcommand`). Each shell is given play's
/// options and values where no subcommand was named.
enum CompletionScript {
    /// The script for `shell` (`bash`, `zsh`, `fish`), or `nil` for a shell ArgumentParser does not know.
    static func script(for shell: String) -> String? {
        guard let kind = CompletionShell(rawValue: shell) else { return nil }
        let script = LivePlayCommand.completionScript(for: kind)
        switch kind {
        case .bash: return bash(script)
        case .fish: return fish(script)
        case .zsh: return zsh(script)
        default: return script
        }
    }

    /// Where the root's function offers subcommand names, it first offers play's own completions for the words as
    /// typed, so `liveplay --mo` completes to `--mode` and `liveplay --mode ` to its values, and to nothing else.
    static func bash(_ script: String) -> String {
        let offer = "        # Offer subcommand completions\n"
        guard let range = script.range(of: offer), let valueOptions = playValueOptions(bash: script) else {
            return script
        }
        return script.replacingCharacters(
            in: range,
            with: """
                        # `play` is the default subcommand: its options and values complete without its name (its flags
                        # include the root's). After one of its options that takes a value, only that option's values.
                        unparsed_words=("${subcommand}" "${unparsed_words[@]}")
                        COMPREPLY=()
                        _liveplay_play
                        [[ "${cur}" == -* || " \(valueOptions) " == *" ${prev} "* ]] && return

                """ + offer)
    }

    /// Play's options that take a value, as its bash function lists them (`repeating_options=(…)`,
    /// `non_repeating_options=(…)`), space-separated.
    private static func playValueOptions(bash script: String) -> String? {
        guard let start = script.range(of: "\n_liveplay_play() {\n") else { return nil }
        let body = script[start.upperBound...].split(separator: "\n").prefix { $0 != "}" }
        let options = body.flatMap { line -> [Substring] in
            let line = line.drop { $0 == " " }
            guard line.hasPrefix("repeating_options=(") || line.hasPrefix("non_repeating_options=("),
                let open = line.firstIndex(of: "("), let close = line.lastIndex(of: ")")
            else { return [] }
            return line[line.index(after: open)..<close].split(separator: " ")
        }
        return options.isEmpty ? nil : options.joined(separator: " ")
    }

    /// Unless the first word names a subcommand, play's function completes the words (zsh's `words` start at
    /// `liveplay`, as play's `_arguments` expects); the first word alone still offers the subcommands' names.
    static func zsh(_ script: String) -> String {
        let start = "_liveplay() {\n"
        let anchor = "    local -i ret=1\n"
        guard let function = script.range(of: start),
            let range = script.range(of: anchor, range: function.upperBound..<script.endIndex)
        else { return script }
        let names = LivePlayCommand.configuration.subcommands.map { $0._commandName } + ["help"]
        return script.replacingCharacters(
            in: range,
            with: anchor + """
                    # `play` is the default subcommand: its options and values complete without its name.
                    if [[ "${words[2]}" != (\(names.joined(separator: "|"))) && ( "${CURRENT}" -gt 2 || "${words[2]}" == -* ) ]]; then
                        _liveplay_play
                        return
                    fi

                """)
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
