import LivePlay

/// Builds one JSON object with keys in insertion order, so output lines are stable byte for byte.
struct JSONLine {
    private var text = "{"
    private var isEmpty = true

    mutating func add(_ key: String, _ value: String) {
        appendKey(key)
        Self.appendQuoted(value, to: &text)
    }

    mutating func add(_ key: String, _ value: Int64) {
        appendKey(key)
        text += String(value)
    }

    mutating func add(_ key: String, _ value: Int) {
        add(key, Int64(value))
    }

    mutating func add(_ key: String, _ value: Bool) {
        appendKey(key)
        text += value ? "true" : "false"
    }

    mutating func add(_ key: String, _ value: Double) {
        appendKey(key)
        text += value.isFinite ? String(value) : "null"
    }

    /// A nested object of event parameters, keys sorted so the line is stable.
    mutating func add(_ key: String, parameters: [String: PlayEventValue]) {
        var nested = JSONLine()
        for name in parameters.keys.sorted() {
            switch parameters[name]! {
            case .int(let value): nested.add(name, value)
            case .double(let value): nested.add(name, value)
            case .string(let value): nested.add(name, value)
            case .bool(let value): nested.add(name, value)
            }
        }
        appendKey(key)
        text += nested.line
    }

    var line: String { text + "}" }

    private mutating func appendKey(_ key: String) {
        if !isEmpty { text += "," }
        isEmpty = false
        Self.appendQuoted(key, to: &text)
        text += ":"
    }

    private static func appendQuoted(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
