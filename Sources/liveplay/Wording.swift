/// Small pieces of the sentences the CLI prints.
enum Wording {
    /// `1 stream`, `2 streams`, `0 streams`.
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
}
